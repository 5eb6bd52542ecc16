// A finite-D theory (docs/finite_dim.md §21): the prediction of the errors at token dimension D,
// as the D -> infinity saddle point at the integer sizes of dimension D plus the O(1/D)
// corrections of each finite-D source that has been derived, each obtained by linearizing the
// saddle point (§21.2) around its D -> infinity root. Nothing here is fitted to simulations.
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numerics/status.hpp"
#include "theory/finite_d_switches.hpp"
#include "theory/lowrank.hpp"
#include "theory/params.hpp"

namespace icl::theory {

// The sources (docs/finite_dim.md §21.1), in the order of FiniteDimResult::sources.
//   test_context    the w w^T / L_t term of the test context's covariance (exact, §21.3)
//   context_mean    the same rank-one term in the training context's covariance (§21.4)
//   context_scalars the fluctuations of the training context estimate's scale along w and of
//                   its noise level, Var = 2/L each, and the noise's deficit along w
//                   (variance sigma^2/alpha, not nu) in the Stein terms (§21.4); with
//                   context_mean, 0 with gaussian_context
//   context_quadratic_forms  the context noise's quadratic forms in the leverage and the
//                   residual (Stein's lemma, §21.4)
//   query_norms     |x|^2 of the training queries, Var = 2/D (§21.4); 0 with sphere_queries
//   task_sampling   the finite-M0 bias of the spectrum of S for tasks of fixed norm (the real
//                   Wishart 1/M0 bias, §21.5; a general task spectrum: §21.13)
//   task_norms      the norms |w|^2/D of Gaussian tasks (a general task spectrum: their energies
//                   on the levels of Sigma), through the task-resolved theory (§21.6, §21.15);
//                   0 with fixed_norm_tasks
//   task_counts     the random number of sequences per task, through the task-resolved theory
//                   (§21.6, a general task spectrum §21.15); 0 with assignment balanced
const std::vector<std::string>& finite_dim_source_names();

struct FiniteDimOptions {
  int dim = 60;  // token dimension D >= 2
  // The simulator's switches (docs/simulation.md §13.7): a source they remove is predicted as 0.
  FiniteDSwitches switches;
  SolveOptions solve;  // for the D -> infinity solve at the sized parameters
  // Throws InvalidParams naming the field (dim < 2).
  void validate() const;
};

struct FiniteDimSource {
  std::string name;
  // d error / d(1/D) at D -> infinity: the correction at dimension D is slope / D.
  Errors slope;
  Errors correction;  // slope / dim
  // Order parameters' slopes (q, m, qbar, mbar, m0, q0; others 0).
  OrderParams order_slope;
  // The shifted protocol's slope (docs/finite_dim.md §21.11); NaN without one.
  double shift_slope = std::numeric_limits<double>::quiet_NaN();
};

// Whether the O(1/D) expansion is in its range at this D (docs/finite_dim.md §21.9). The
// expansion is E(D) = E_inf + c_1/D + O(1/D^2); its terms are products of the sources' relative
// shifts, so the neglected O(1/D^2) part is about eps^2 |E_inf| with eps = sum_s |c_s| / |E_inf|
// (the corrections of all sources relative to the limit). The prediction is valid when eps <=
// kMaxRelativeCorrection for TM, IDG and ODG: then the estimated remainder is at most a quarter
// of the correction, and the first order dominates what it leaves out.
inline constexpr double kMaxRelativeCorrection = 0.25;
struct FiniteDimValidity {
  bool valid = false;
  // Empty when valid; else which error's relative correction exceeds the bound, at which D,
  // and from which D on the prediction is valid (the smallest D that passes, eps ~ 1/D).
  std::string reason;
  Errors relative_correction;  // eps per error: sum over sources of |correction| / |limit|
  Errors remainder;            // eps^2 |limit|: the estimated size of the O(1/D^2) rest
  // The same for a shifted protocol's error (docs/finite_dim.md §21.11, §21.12), NaN without
  // one; it does not enter the verdict (the range is stated for TM, IDG and ODG).
  double shift_remainder = std::numeric_limits<double>::quiet_NaN();
};

struct FiniteDimResult {
  FiniteDimOptions options;  // as given to solve_finite_dim (dimension, switches)
  // The parameters at the integer sizes of dimension D (docs/simulation.md §13.1): rho = r/D,
  // kappa = M0/D, tau = N/D^2, alpha = L/D, alpha_test = L_t/D.
  Params sized;
  Solution limit;  // the D -> infinity solution at `sized`
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  double residual_norm = 0;  // of the limit solve
  // limit + sum of the sources' corrections + second_order. NaN in every value when not
  // converged.
  Errors error;
  // The per-sample training channel beyond O(1/D) at this D (docs/finite_dim.md §21.18): the
  // channel's sources (test context, context scale and noise level, quadratic forms, query
  // norms) solved at finite D with the exact law of the sample's scalars, minus their O(1/D)
  // terms; O(1/D^2). In `error` and in the shifted protocol's where that is a IDG + b ODG (not
  // in `order`, nor in a shift at other test levels); 0 for a general task spectrum, and 0 with
  // "channel_second_order" in `omitted` where its solve at finite D fails.
  Errors second_order;
  OrderParams order;  // q, m, qbar, mbar, m0, q0 corrected; the rest as in `limit`
  Errors slope;       // sum of the sources' slopes
  std::vector<FiniteDimSource> sources;
  // Finite-D effects not derived (docs/finite_dim.md §21.6), by name: listed, never estimated.
  std::vector<std::string> omitted;
  FiniteDimValidity validity;  // computed when converged (else not valid, with the reason)
  // Present when the point has a shifted test protocol (Params::has_test_shift): its error at D,
  // a IDG + b ODG when the test covariance is a Sigma + b I (§21.11), else NaN with
  // "test_shift_levels" in `omitted`; overlap and levels as in limit.test_shift; its
  // decomposition as `decomposition` below (algo a IDG_algo + b ODG_algo).
  std::optional<TestShift> test_shift;
  // The decomposition at D (docs/finite_dim.md §21.17): `algo` is the error at D of the
  // deterministic predictor Gbar = S (S - z)^{-1} (the limit's z, the simulator's
  // decomp.*.algo), so error - algo is the excess (memorization + structural) at D; `mem` and
  // `structural` are NaN, not separable at finite D. NaN throughout when not converged.
  Decomposition decomposition;
  // The Bayes-optimal baselines at D (bayes_optimal_at_dimension, §21.16); limit.bayes_optimal
  // holds their D -> infinity values at the same sizes.
  BayesOptimal bayes_optimal;
  bool converged() const { return status == numerics::Status::Converged; }
  // A converged prediction inside the expansion's range.
  bool valid() const { return converged() && validity.valid; }
};

// The range check of a converged result's sources and limit (docs/finite_dim.md §21.9).
FiniteDimValidity finite_dim_validity(const FiniteDimResult& r);

// A front end's request for the finite-D prediction (`--finite-dim D`, `finite_dim=D`): the
// options at dimension *dim with the switches, or nullopt without a dimension. Without one, a
// switch that is on has nothing to act on and is refused (InvalidParams naming it, "needs
// finite_dim") unless `used_elsewhere` (the switches also go to a simulation, `elsewhere` names
// it in the message). Validates the options.
std::optional<FiniteDimOptions> finite_dim_request(std::optional<int> dim,
                                                   const FiniteDSwitches& switches,
                                                   bool used_elsewhere = false,
                                                   const std::string& elsewhere = "");

// (a, b) with test covariance = a Sigma + b I (a + b = 1) on every level of p's population
// spectrum (docs/finite_dim.md §21.11): always for the low-rank overlap family, for test_levels
// when they are affine in the training levels (e.g. two levels); nullopt otherwise or without a
// shifted protocol.
std::optional<std::pair<double, double>> shift_as_idg_odg(const Params& p);

// The parameters at dimension D: each ratio replaced by its rounded integer size over D, with the
// simulator's rounding (docs/simulation.md §13.1). A task_spectrum is kept as it is.
Params at_dimension(const Params& p, int dim);

// Validates p and options (InvalidParams naming the field). With lambda > 0 or tau > 1 it
// linearizes the saddle point (§21.2); every source is derived for any task spectrum
// (docs/finite_dim.md §21.13-§21.15). On the ridgeless branch (lambda = 0 and tau <= 1 at the
// sizes of D, Params::on_ridgeless_branch) the prediction is the minimum-norm solution's: the
// Letey/Lu limit plus the lambda -> 0+ limit of the ridge slopes (§21.10); at the interpolation
// peak (tau = 1 at the sizes of D, N = D^2) it is refused (InvalidParams "tau"). A limit solve
// that does not converge gives that status and NaN values.
FiniteDimResult solve_finite_dim(const Params& p, const FiniteDimOptions& options);

namespace detail {
// The order parameters a source moves (FiniteDimSource::order_slope), in one order for every sum
// and copy of them.
inline constexpr double OrderParams::*kSourceOrderFields[] = {
    &OrderParams::m, &OrderParams::q, &OrderParams::qbar, &OrderParams::mbar, &OrderParams::m0,
    &OrderParams::q0};
// The two branches of solve_finite_dim (validated input): the linearized saddle point (§21.2)
// and the ridgeless branch's lambda -> 0+ limit of it (§21.10).
FiniteDimResult solve_finite_dim_saddle(const Params& p, const FiniteDimOptions& options);
FiniteDimResult solve_finite_dim_ridgeless(const Params& p, const FiniteDimOptions& options);
// Each source's correction (slope / D) and r's slope, error and order: the limit plus the
// sources' sums, from the sources' slope and order_slope.
void sum_sources(FiniteDimResult& r);
// The first-order slope of the per-sample channel (docs/finite_dim.md §21.18): the sum of the
// slopes of the sources that act through it (test_context, context_mean, context_scalars,
// context_quadratic_forms, query_norms; not the task sources).
Errors channel_slope(const std::vector<FiniteDimSource>& sources);
// r with NaN values and a not-valid verdict carrying r.message.
FiniteDimResult failed(FiniteDimResult r);
// Every source by name with no slope yet (finite_dim_source_names() order), and the effects not
// derived (FiniteDimResult::omitted).
std::vector<FiniteDimSource> unset_sources();
std::vector<std::string> not_derived();
// r.test_shift from r's IDG and ODG when the point has a shifted protocol (§21.11).
void add_test_shift(FiniteDimResult& r);
// r.decomposition (and r.test_shift's) from r's limit and sizes (§21.17), after add_test_shift.
void add_decomposition(FiniteDimResult& r);

// Test hook (docs/finite_dim.md §21.4): the largest difference between the order parameters of the
// matrix path (integrals over the spectrum of S on span(A)) without corrections and those of the
// saddle-point map (resolvent moments) at the D -> infinity root of p (low-rank tasks).
double matrix_path_gap(const Params& p);

// The name in FiniteDimResult::omitted when the channel's second order could not be computed
// (docs/finite_dim.md §21.18).
inline constexpr const char* kChannelSecondOrder = "channel_second_order";

}  // namespace detail

}  // namespace icl::theory
