#include "theory/bayes.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "theory/bayes_formulas.hpp"

namespace icl::theory {

double bayes_error(double ratio, double noise_std) {
  if (!(ratio > 0) || !std::isfinite(ratio)) throw InvalidParams("ratio", "must be > 0 and finite");
  if (!(noise_std >= 0) || !std::isfinite(noise_std))
    throw InvalidParams("sigma_test", "must be >= 0 and finite");
  // Noiseless: the posterior is the prior restricted to the null space of the r x L_t feature
  // matrix, whose dimension is max(0, r - L_t): the mass of the Marchenko-Pastur atom at 0.
  // Otherwise tr (I + U^T U / s2)^{-1} / r with U^T U = lambda / ratio, lambda ~ MP(ratio):
  //   int dmu(lambda) / (1 + lambda / (ratio s2)) = ratio s2 m(-ratio s2).
  return bayes_error_t(ratio, noise_std);
}

double bayes_error_spectrum(const std::vector<numerics::Atom>& prior, double alpha_test,
                            double noise_std) {
  if (!(alpha_test > 0) || !std::isfinite(alpha_test))
    throw InvalidParams("alpha_test", "must be > 0 and finite");
  if (!(noise_std >= 0) || !std::isfinite(noise_std))
    throw InvalidParams("sigma_test", "must be >= 0 and finite");
  std::vector<double> t, w;
  for (const auto& a : prior) t.push_back(a.position), w.push_back(a.mass);
  return bayes_error_spectrum_t(t, w, alpha_test, noise_std);
}

BayesOptimal bayes_optimal(const Params& p) {
  p.validate();
  BayesOptimal b;
  double shift = 0;
  bayes_optimal_t(scalar_params<double>(p), b.idg, b.odg, p.has_test_shift() ? &shift : nullptr);
  if (p.has_test_shift()) b.shift = shift;
  return b;
}

}  // namespace icl::theory
