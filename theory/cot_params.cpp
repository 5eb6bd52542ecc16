// CotParams::validate (theory/cot.hpp): the ranges of the model's four numbers. The theory's own
// conditions (tau > 1, lambda = 0) are run()'s; the simulator takes any point that passes here.
#include <cmath>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/cot.hpp"

namespace icl::theory {

void CotParams::validate() const {
  const auto check = [](const char* field, double v, bool ok, const char* range) {
    if (!std::isfinite(v) || !ok)
      throw InvalidParams(field, std::string("must be a finite number ") + range + " (got " +
                                     numerics::format_significant(v) + ")");
  };
  check("alpha", alpha, alpha > 0, "> 0");
  check("tau", tau, tau > 0, "> 0");
  check("sigma", sigma, sigma >= 0, ">= 0");
  check("lambda", lambda, lambda >= 0, ">= 0");
}

}  // namespace icl::theory
