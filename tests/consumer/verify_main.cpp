// A consumer of the installed umbrella icl::verify (= verify_lowrank + verify_softmax +
// verify_patch): one call into the low-rank simulator's sizes and one into the patch library.
#include <cstdio>

#include "verify/lowrank/data.hpp"
#include "verify/patch/model.hpp"

int main() {
  const icl::verify::lowrank::Sizes n = icl::verify::lowrank::sizes(icl::theory::Params{}, 20);
  const std::string norm = icl::verify::patch::to_string(icl::verify::patch::Norm::RmsNorm);
  std::printf("D %d N %d, norm %s\n", n.D, n.N, norm.c_str());
  return n.D == 20 && n.N > 0 && norm == "rmsnorm" ? 0 : 1;
}
