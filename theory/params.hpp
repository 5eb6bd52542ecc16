// Parameters of the low-rank ICL problem (docs/model.md §1.2) and their validation (§1.6).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "numerics/spectral_measure.hpp"

namespace icl::theory {

// All ratios are to the token dimension D: L = alpha D context pairs, N = tau D^2 sequences,
// M0 = kappa D pretraining tasks, r = rho D shared subspace rank.
struct Params {
  double alpha = 2.0;        // context length L / D
  double alpha_test = -1.0;  // test context L_t / D; negative = same as alpha
  double tau = 2.25;         // sequences N / D^2 (gamma = tau / kappa = N / (M0 D))
  double kappa = 1.5;        // tasks M0 / D
  double rho = 0.9;          // task rank r / D, in (0, 1]
  double sigma = 0.3;        // label-noise standard deviation (pretraining)
  double sigma_test = 0.0;   // label-noise standard deviation at test
  double lambda = 0.0;       // ridge: the loss adds lambda * M0 * ||Gamma||_F^2
  // Beyond the paper: the population task covariance Sigma as a discrete spectrum
  // (eigenvalue t_k = position, fraction of directions w_k = mass; weights sum to 1, mean
  // eigenvalue sum w_k t_k = 1 so that |w|^2/D -> 1 as in the paper). Empty: the paper's low-rank
  // tasks, Sigma = (1/rho) P_A, i.e. {(1/rho, rho), (0, 1 - rho)}; rho is then unused.
  std::vector<numerics::Atom> task_spectrum;
  // Beyond the paper: a shifted test protocol whose task covariance differs from the training
  // one but shares its eigenbasis (docs/general_covariance.md §20). At most one of the two is set.
  // test_overlap (low-rank tasks only): test tasks put a fraction C in [0, 1] of their energy in
  // span(A) and the rest isotropically on its complement, |w|^2/D -> 1 (C = 1 is IDG, C = rho
  // ODG, C = 0 entirely off the learned structure); with rho = 1 only C = 1 exists.
  std::optional<double> test_overlap;
  // test_levels (general task_spectrum only): the test covariance's eigenvalue on each level of
  // task_spectrum, in the same order; >= 0 with weighted mean sum_k w_k t'_k = 1.
  std::vector<double> test_levels;

  double gamma() const { return tau / kappa; }
  double effective_alpha_test() const { return alpha_test < 0 ? alpha : alpha_test; }
  // nu = (1 + sigma^2) / alpha: the ridge that the finite context induces (docs/model.md §1.3,
  // docs/errors_phases.md §9).
  double nu() const { return (1.0 + sigma * sigma) / alpha; }
  // The population task spectrum in use (task_spectrum, or the low-rank one from rho).
  std::vector<numerics::Atom> population_spectrum() const;
  // Fraction of directions with a non-zero task eigenvalue (rho for low-rank tasks): S has
  // rank min(this, kappa) D, so the transition sits at structural_rank() = kappa.
  double structural_rank() const;
  // The shifted test protocol: set when test_overlap or test_levels is.
  bool has_test_shift() const { return test_overlap.has_value() || !test_levels.empty(); }
  // The test covariance's eigenvalue on each level of population_spectrum() (same order):
  // test_levels, or {C/rho, (1-C)/(1-rho)} from test_overlap (just {1} when rho = 1); empty
  // without a shifted protocol.
  std::vector<double> test_eigenvalues() const;

  // Throws icl::InvalidParams naming the field: non-finite values, alpha <= 0,
  // alpha_test == 0, tau <= 0, kappa <= 0, rho outside (0, 1], sigma < 0, sigma_test < 0,
  // lambda < 0; a task_spectrum with a negative eigenvalue, non-positive weight, weights not
  // summing to 1 or mean eigenvalue not 1 (relative tolerance 1e-9); test_overlap outside
  // [0, 1], with a task_spectrum, or != 1 at rho = 1; test_levels without a task_spectrum, of a
  // different length, negative, or with weighted mean not 1 (1e-9); both set.
  void validate() const;
  // validate() plus what the replica saddle point needs: not on_ridgeless_branch().
  void validate_for_saddle_point() const;
  // lambda = 0 and tau <= 1: the minimum-norm (ridgeless) interpolation regime, where the replica
  // saddle point has no unique root (chi ~ 1/lambda) and the D -> infinity theory is Letey/Lu's
  // (docs/errors_phases.md §11).
  bool on_ridgeless_branch() const { return lambda == 0 && tau <= 1; }

  // Names usable with get/set (sweeps, phase grids): alpha alpha_test tau gamma kappa rho
  // sigma sigma_test lambda test_overlap. Setting gamma sets tau = gamma * kappa; setting kappa
  // keeps tau; setting rho with a task_spectrum throws InvalidParams("rho") (the spectrum does
  // not use it); getting test_overlap when it is unset gives NaN.
  static const std::vector<std::string>& names();
  // InvalidParams(field) unless name is one of names(): the list and the closest name.
  static void check_name(const std::string& name, const std::string& field = "name");
  double get(const std::string& name) const;  // throws InvalidParams for an unknown name
  // get(name) as a function, looked up once (a column of values over many points).
  using Getter = double (*)(const Params&);
  static Getter getter(const std::string& name);  // throws InvalidParams for an unknown name
  void set(const std::string& name, double value);
};

}  // namespace icl::theory

namespace icl::theory {

// Task spectra beyond the paper, normalized to mean eigenvalue 1.
// Power law: `levels` equally weighted eigenvalues t_k proportional to k^{-exponent}.
std::vector<numerics::Atom> power_law_spectrum(double exponent, int levels);
// Low rank plus a weaker complement: eigenvalue a on a fraction rho and epsilon * a on the
// rest (epsilon = 0 gives the paper's low-rank tasks).
std::vector<numerics::Atom> low_rank_plus_complement_spectrum(double rho, double epsilon);

}  // namespace icl::theory
