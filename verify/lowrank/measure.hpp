// Measurements of one trained Gamma (docs/simulation.md §13): exact finite-D test errors, order
// parameters, the measured decomposition of the error and the distribution of predictions.
// The record types are templates over the value type: double for one seed, numerics::Estimate
// (mean, s.e.) for a simulation's aggregate (simulator.hpp).
#pragma once
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "verify/lowrank/data.hpp"

namespace icl::verify::lowrank {

// The three test protocols: the training tasks (TM), fresh tasks from the training
// distribution (IDG), out-of-distribution tasks (ODG).
inline constexpr std::array<const char*, 3> kProtocols = {"tm", "idg", "odg"};
template <class T>
struct PerProtocol {
  T tm{}, idg{}, odg{};
  T& operator[](int k) { return k == 0 ? tm : (k == 1 ? idg : odg); }
  const T& operator[](int k) const { return k == 0 ? tm : (k == 1 ? idg : odg); }
};

// m = tr(G S)/D, q = tr(G S G^T)/D, mbar = tr G/D, qbar = |G|_F^2/D, m0 = tr(Sigma G)/D,
// q0 = tr(G Sigma G^T)/D with S = W W^T/M0 and Sigma the IDG task second moment.
template <class T>
struct OrderParameters {
  T m{}, q{}, mbar{}, qbar{}, m0{}, q0{};
};

// Error of one protocol split as total = algo + excess, excess = span + null + cross, where
// algo is the error of Gbar = S (S - z)^{-1} and span / null the parts of Delta = G - Gbar on
// span(S) and null(S).
template <class T>
struct DecompositionPieces {
  T algo{}, excess{}, span{}, null{}, cross{};
};
template <class T>
struct MeasuredDecomposition {
  PerProtocol<DecompositionPieces<T>> protocol;
  // Fit |Delta u_i|^2 (s_i - z)^2 = e_T s_i + e_R over the eigenvectors u_i of S: the theory
  // predicts e_T = e (memorization) and e_R = e nu (structural).
  T fit_e{}, fit_e_nu{};
  std::optional<T> fit_e_nu_null;  // mean of the same over null(S), when S is singular
  T rank_S{};
};
// Standardized residuals of fresh predictions against the theory's predicted variance.
template <class T>
struct PredictionDistribution {
  T var_ratio{}, std_mean{}, std_var{};
  std::vector<T> histogram;  // fractions in histogram_bins equal bins on [-4, 4]
};

// Everything measured on one trained Gamma: T = double for one seed, numerics::Estimate for the
// aggregate over seeds (SimulationResult).
template <class T>
struct Measurements {
  PerProtocol<T> error;  // exact finite-D test errors
  // The shifted test protocol's exact finite-D error, when p.has_test_shift()
  // (docs/general_covariance.md §20): exact_error() with Dataset::shift_covariance.
  std::optional<T> shift;
  // TM's Bayes-optimal baseline (docs/errors_phases.md §17.4): the error of the posterior mean over
  // the M0 pretraining tasks (discrete uniform prior, "dMMSE") on fresh prompts of training tasks,
  // when SimOptions::bayes_prompts > 0.
  std::optional<T> bayes_tm;
  OrderParameters<T> order;
  std::optional<MeasuredDecomposition<T>> decomposition;                // with a TheoryRef
  std::optional<PerProtocol<PredictionDistribution<T>>> distribution;   // and prompts > 0
  T cg_iterations{}, cg_relative_residual{};  // the training's (0 iterations for Direct)
  T data_seconds{}, train_seconds{}, seed_seconds{};
};

// Quantities from the theory used by the decomposition and the distribution of predictions.
struct TheoryRef {
  double z = 0, e = 0, nu = 0;
};

// Exact finite-D test error of Gamma averaged over a task distribution with second moment
// C = E[w w^T] (the formula is linear in w w^T):
//   sigma_t^2 + tr((I-G) C (I-G)^T)/D + (1/L_t)[(tr C/D + sigma_t^2)|G|_F^2 + tr(G C G^T)/D].
double exact_error(const MatrixXd& G, const MatrixXd& C, int Lt, double sigma_t);
double exact_error_task(const MatrixXd& G, const VectorXd& w, int Lt, double sigma_t);
// Plain Monte Carlo of the same error on `prompts` fresh sequences of the fixed task w.
std::pair<double, double> monte_carlo_error(const MatrixXd& G, const VectorXd& w, int Lt,
                                            double sigma_t, int prompts, Rng& rng,
                                            Sampler sampler);  // (mean, standard error)

// Second moments C of the test tasks of the three protocols: S, the IDG covariance, and the
// ODG one (identity, or (D/r) B B^T for a Haar subspace B drawn from rng).
PerProtocol<MatrixXd> test_task_moments(const Dataset& d, OdgKind odg, Rng& rng);
// TM's Bayes-optimal (dMMSE) error, averaged over `prompts` fresh test prompts: a task mu drawn
// uniformly from the M0 columns of d.W, L_t context pairs x ~ N(0, I/D) with labels
// y = w_mu.x + sigma_t eps; the posterior over the M0 tasks has weights proportional to
// exp(-|y - X w_nu|^2 / (2 sigma_t^2)) (sigma_t = 0: the tasks that fit the context exactly);
// the error of the posterior mean w_hat on a fresh query, averaged over the query in closed
// form, is sigma_t^2 + |w_mu - w_hat|^2 / D.
double dmmse_tm_error(const Dataset& d, int Lt, double sigma_t, int prompts, Rng& rng);
PerProtocol<double> test_errors(const MatrixXd& G, const PerProtocol<MatrixXd>& C, int Lt,
                                double sigma_t);
OrderParameters<double> order_parameters(const MatrixXd& G, const Dataset& d, const MatrixXd& S);

// The decomposition (and, with prompts > 0, the distribution of predictions on `prompts` fresh
// prompts per protocol drawn from rng) of G against the theory's z, e, nu.
struct DecompositionMeasurement {
  MeasuredDecomposition<double> decomposition;
  std::optional<PerProtocol<PredictionDistribution<double>>> distribution;
};
DecompositionMeasurement measure_decomposition(const MatrixXd& G, const Dataset& d,
                                               const PerProtocol<MatrixXd>& C,
                                               const TheoryRef& theory, double sigma_t,
                                               OdgKind odg, Sampler sampler, int prompts,
                                               int histogram_bins, Rng& rng);

}  // namespace icl::verify::lowrank
