// A tiny consumer of the installed library: the Marchenko-Pastur Stieltjes transform by
// quadrature must match its closed form, and a theory solve at the defaults must converge and
// serialize (theory::to_json: nlohmann_json comes with icl::theory).
#include <cmath>
#include <cstdio>

#include "numerics/spectral_integral.hpp"
#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"

int main() {
  icl::numerics::MarchenkoPastur mp(0.5, 2.0);
  const double z = -0.7;
  const double quad = icl::numerics::resolvent_moment_quadrature(mp, z, 0, 1);
  const double exact = mp.stieltjes(z);
  std::printf("quadrature %.17g closed form %.17g\n", quad, exact);
  const bool spectral_ok = std::abs(quad - exact) <= 1e-10 * std::abs(exact);

  const icl::theory::Solution s = icl::theory::solve(icl::theory::Params{});
  const auto j = icl::theory::to_json(s);
  std::printf("solve: %s, idg %.17g\n", j.at("status").get<std::string>().c_str(), s.error.idg);
  const bool theory_ok = s.converged() && j.at("converged").get<bool>() &&
                         j.at("error").at("idg").get<double>() == s.error.idg;
  return spectral_ok && theory_ok ? 0 : 1;
}
