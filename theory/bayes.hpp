// Bayes-optimal baselines (docs/errors_phases.md §17): the smallest test error any predictor can
// reach from the test prompt alone (L_t = alpha_test D pairs with label noise sigma_test), when the
// task prior is known, in the limit D -> infinity. Same error convention as Solution::error
// (the query label's noise sigma_test^2 included).
//
// With the prior w = sqrt(D/r) A v, v ~ N(0, I_r) (IDG, A known) the posterior mean is the ridge
// estimate in the r subspace coordinates, and its error is
//     sigma_t^2 + c sigma_t^2 m_c(-c sigma_t^2),   c = rho / alpha_test,
// m_c the Stieltjes transform of the Marchenko-Pastur law of ratio c (scale 1); at
// sigma_t = 0 it is max(0, 1 - alpha_test / rho), the fraction of the r directions the L_t
// examples leave undetermined. The isotropic prior w ~ N(0, I_D) (ODG) is the same with rho = 1.
//
// A general Gaussian prior N(0, Sigma) with spectrum {(t_k, w_k)} (docs/errors_phases.md §17.3):
// the posterior mean's error is sigma_t^2 + kappa sum_k w_k t_k / (t_k + kappa), where the
// effective ridge kappa >= 0 solves kappa (alpha_test - sum_k w_k t_k / (t_k + kappa)) = sigma_t^2.
// This gives IDG for a general task_spectrum and the shifted protocol's baseline (prior C_test,
// docs/general_covariance.md §20).
#pragma once
#include <limits>
#include <vector>

#include "numerics/spectral_measure.hpp"
#include "theory/params.hpp"

namespace icl::theory {

struct BayesOptimal {
  double idg = std::numeric_limits<double>::quiet_NaN();
  double odg = std::numeric_limits<double>::quiet_NaN();
  // The shifted test protocol's baseline (prior N(0, C_test)); NaN without a shifted protocol.
  double shift = std::numeric_limits<double>::quiet_NaN();
};

// sigma_t^2 + (posterior variance per direction) for a Gaussian prior of unit variance per
// direction, features of variance 1/r, and r/L_t = ratio (> 0) in the proportional limit.
double bayes_error(double ratio, double noise_std);
// The same for the prior N(0, Sigma), Sigma with the spectrum `prior` (eigenvalue position on a
// fraction mass of the directions, mean eigenvalue 1), and L_t = alpha_test D examples.
double bayes_error_spectrum(const std::vector<numerics::Atom>& prior, double alpha_test,
                            double noise_std);

// Validates p (InvalidParams naming the field).
BayesOptimal bayes_optimal(const Params& p);

namespace detail {
// The same for parameters already validated (theory::solve validates once per point).
BayesOptimal bayes_optimal_of_valid(const Params& p);
}  // namespace detail

// bayes_error_spectrum at token dimension `dim` (docs/finite_dim.md §21.16): the limit plus the
// O(1/D) term of the posterior trace's mean, the real-Gaussian bias of the Sigma-weighted
// resolvent of the L_t features' sample covariance (§21.13 with kappa = alpha_test). Noiseless:
// 0 when alpha_test is at least the prior's rank (exact at every D), else NaN (not derived).
double bayes_error_spectrum_at_dimension(const std::vector<numerics::Atom>& prior,
                                         double alpha_test, double noise_std, int dim);

// The baselines at token dimension `dim` for parameters at its integer sizes (`sized`, as
// at_dimension gives; docs/finite_dim.md §21.16): bayes_optimal(sized) plus the O(1/D) term of
// the posterior trace's real-Wishart mean, c s2 bias(-c s2) / r (r = rho D directions for IDG,
// D for ODG; noiseless test prompts have no such term: the error counts null directions, exact
// at every D). IDG of a general task spectrum and the shifted protocol's baseline (prior
// C_test) by bayes_error_spectrum_at_dimension.
BayesOptimal bayes_optimal_at_dimension(const Params& sized, int dim);

}  // namespace icl::theory
