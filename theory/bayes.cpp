#include "theory/bayes.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "numerics/spectral_measure.hpp"

namespace icl::theory {

double bayes_error(double ratio, double noise_std) {
  if (!(ratio > 0) || !std::isfinite(ratio)) throw InvalidParams("ratio", "must be > 0 and finite");
  if (!(noise_std >= 0) || !std::isfinite(noise_std))
    throw InvalidParams("sigma_test", "must be >= 0 and finite");
  const double s2 = noise_std * noise_std;
  // Noiseless: the posterior is the prior restricted to the null space of the r x L_t feature
  // matrix, whose dimension is max(0, r - L_t): the mass of the Marchenko-Pastur atom at 0.
  if (s2 == 0) return std::max(0.0, 1.0 - 1.0 / ratio);
  // tr (I + U^T U / s2)^{-1} / r with U^T U = lambda / ratio, lambda ~ MP(ratio):
  //   int dmu(lambda) / (1 + lambda / (ratio s2)) = ratio s2 m(-ratio s2).
  const numerics::MarchenkoPastur mp(ratio, 1.0);
  return s2 + ratio * s2 * mp.stieltjes(-ratio * s2);
}

BayesOptimal bayes_optimal(const Params& p) {
  p.validate();
  const double at = p.effective_alpha_test();
  BayesOptimal b;
  b.odg = bayes_error(1.0 / at, p.sigma_test);
  if (p.task_spectrum.empty()) b.idg = bayes_error(p.rho / at, p.sigma_test);
  return b;
}

}  // namespace icl::theory
