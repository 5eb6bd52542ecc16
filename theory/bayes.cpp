#include "theory/bayes.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "numerics/residual_solver.hpp"
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

double bayes_error_spectrum(const std::vector<numerics::Atom>& prior, double alpha_test,
                            double noise_std) {
  if (!(alpha_test > 0) || !std::isfinite(alpha_test))
    throw InvalidParams("alpha_test", "must be > 0 and finite");
  if (!(noise_std >= 0) || !std::isfinite(noise_std))
    throw InvalidParams("sigma_test", "must be >= 0 and finite");
  const double s2 = noise_std * noise_std;
  double rank = 0, mean = 0;
  for (const auto& a : prior)
    if (a.position > 0) {
      rank += a.mass;
      mean += a.mass * a.position;
    }
  // F(kappa) = sum_k w_k t_k / (t_k + kappa): the prior's degrees of freedom at ridge kappa,
  // decreasing from `rank` (kappa = 0) to 0.
  auto dof = [&](double kappa) {
    double f = 0;
    for (const auto& a : prior)
      if (a.position > 0) f += a.mass * a.position / (a.position + kappa);
    return f;
  };
  // Noiseless: kappa = 0 (the prompt fixes the task within the prior's support) when
  // alpha_test >= rank, else the positive root of F(kappa) = alpha_test.
  if (s2 == 0 && alpha_test >= rank) return 0.0;
  numerics::ScalarRootOptions opt;
  opt.hard_lo = 0;
  // Bracket: at kappa = 0 the residual is -s2 (or alpha_test - rank < 0); at `hi` it is >= 0
  // because kappa F(kappa) <= sum w t = mean.
  const double hi = (s2 + mean) / alpha_test + 1.0;
  const auto root =
      s2 == 0 ? numerics::bracketed_root([&](double k) { return alpha_test - dof(k); }, 0.0, hi, opt)
              : numerics::bracketed_root(
                    [&](double k) { return k * (alpha_test - dof(k)) - s2; }, 0.0, hi, opt);
  return s2 + root.x * dof(root.x);
}

BayesOptimal bayes_optimal(const Params& p) {
  p.validate();
  const double at = p.effective_alpha_test();
  BayesOptimal b;
  b.odg = bayes_error(1.0 / at, p.sigma_test);
  b.idg = p.task_spectrum.empty() ? bayes_error(p.rho / at, p.sigma_test)
                                  : bayes_error_spectrum(p.task_spectrum, at, p.sigma_test);
  if (p.has_test_shift()) {
    // The prior is the shifted test law: the population levels with the test eigenvalues.
    std::vector<numerics::Atom> test = p.population_spectrum();
    const std::vector<double> levels = p.test_eigenvalues();
    for (std::size_t k = 0; k < test.size(); ++k) test[k].position = levels[k];
    b.shift = bayes_error_spectrum(test, at, p.sigma_test);
  }
  return b;
}

}  // namespace icl::theory
