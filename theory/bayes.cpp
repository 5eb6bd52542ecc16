#include "theory/bayes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/error.hpp"
#include "numerics/spectral_measure.hpp"
#include "theory/bayes_formulas.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/spectral_model.hpp"

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
  return detail::bayes_optimal_of_valid(p);
}

BayesOptimal detail::bayes_optimal_of_valid(const Params& p) {
  BayesOptimal b;
  double shift = 0;
  bayes_optimal_t(scalar_params<double>(p), b.idg, b.odg, p.has_test_shift() ? &shift : nullptr);
  if (p.has_test_shift()) b.shift = shift;
  return b;
}

double bayes_error_spectrum_at_dimension(const std::vector<numerics::Atom>& prior,
                                         double alpha_test, double noise_std, int dim) {
  const double limit = bayes_error_spectrum(prior, alpha_test, noise_std);
  const double s2 = noise_std * noise_std;
  double rank = 0;
  for (const auto& a : prior)
    if (a.position > 0) rank += a.mass;
  // Noiseless: with L_t >= (prior rank) D the examples determine the task (0 at every D);
  // otherwise the posterior's null-space trace at finite D is not derived.
  if (s2 == 0) return alpha_test >= rank ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  // tr Post / D = (s2/alpha_t) tr Sigma (S' - z)^{-1} / D, z = -s2/alpha_t, with S' the sample
  // covariance of the L_t features mapped into the prior's metric: L_t draws of N(0, Sigma),
  // ratio D/L_t = 1/alpha_t, i.e. the task set's S of §21.13 with kappa = alpha_t and Gaussian
  // tasks (docs/finite_dim.md §21.16).
  Params q;
  q.task_spectrum = prior;
  q.kappa = alpha_test;
  const SpectralModel model(q);
  const double z = -s2 / alpha_test;
  const double bias = task_spectrum_resolvent_bias(q, model, z, TaskLaw::Gaussian).T01;
  return limit + (s2 / alpha_test) * bias / dim;
}

BayesOptimal bayes_optimal_at_dimension(const Params& sized, int dim) {
  BayesOptimal b = bayes_optimal(sized);
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
  // A prior with several levels (a general task spectrum; the shifted protocol's test
  // covariance): the multi-level bias of §21.13 (§21.16).
  if (sized.task_spectrum.empty())
    b.idg += correction(sized.rho / at, sized.rho * dim);
  else
    b.idg = bayes_error_spectrum_at_dimension(sized.population_spectrum(), at, sized.sigma_test, dim);
  if (sized.has_test_shift()) {
    std::vector<numerics::Atom> prior = sized.population_spectrum();
    const std::vector<double> test = sized.test_eigenvalues();
    for (std::size_t k = 0; k < prior.size(); ++k) prior[k].position = test[k];
    b.shift = bayes_error_spectrum_at_dimension(prior, at, sized.sigma_test, dim);
  }
  return b;
}

}  // namespace icl::theory
