#include "theory/bayes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/error.hpp"
#include "numerics/spectral_measure.hpp"
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

BayesOptimal bayes_optimal_at_dimension(const Params& sized, int dim) {
  BayesOptimal b = bayes_optimal(sized);
  b.shift = std::numeric_limits<double>::quiet_NaN();
  const double s2 = sized.sigma_test * sized.sigma_test;
  // c s2 [E tr(T + c s2)^{-1} - r m_c(-c s2)] / r with T the r x r sample covariance of the
  // L_t test features (ratio c = r / L_t): the posterior trace's finite-r mean (§21.16).
  const auto correction = [&](double ratio, double directions) {
    if (s2 == 0) return 0.0;
    const double zeta = -ratio * s2;
    const double m = numerics::MarchenkoPastur(ratio, 1.0).stieltjes(zeta);
    return ratio * s2 * numerics::real_wishart_trace_bias(ratio, zeta, m) / directions;
  };
  const double at = sized.effective_alpha_test();
  b.odg += correction(1 / at, dim);
  if (sized.task_spectrum.empty())
    b.idg += correction(sized.rho / at, sized.rho * dim);
  else
    b.idg = std::numeric_limits<double>::quiet_NaN();
  return b;
}

}  // namespace icl::theory
