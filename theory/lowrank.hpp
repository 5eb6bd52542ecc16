// The replica theory of linear attention trained on low-rank regression tasks: the saddle point
// (docs/model.md §4), the scalar reduction with closed forms (§5), the Letey/Lu deterministic
// equivalent (docs/errors_phases.md §11), test errors (§7), their decomposition (§8), phases (§10).
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "numerics/residual_solver.hpp"
#include "numerics/spectral_integral.hpp"
#include "theory/bayes.hpp"
#include "theory/gradient.hpp"
#include "theory/params.hpp"

namespace icl::theory {

class SpectralModel;
struct SpectralValues;

enum class Method {
  Saddle,   // full 10-unknown replica saddle point, Ceres + GSL quadrature (default)
  Reduced,  // the scalar reduction of docs/model.md §5 (closed-form spectral functions)
  Letey     // Letey/Lu deterministic equivalent (docs/errors_phases.md §11), ridgeless lambda -> 0+
};
const char* to_string(Method m);
Method method_from_string(const std::string& s);  // "saddle" | "reduced" | "letey"

enum class Regime { TaskRich, TaskPoor, Boundary };  // rho < kappa, rho > kappa, rho == kappa
const char* to_string(Regime r);                     // "task-rich" | "task-poor" | "boundary"

// Order parameters (docs/model.md §3) and the conjugates of the saddle point (§4.1).
struct OrderParams {
  double q = 0, m = 0, chi = 0, qbar = 0, chibar = 0;  // training-task overlaps, responses
  double mbar = 0, m0 = 0, q0 = 0;                     // trace and in-subspace overlaps
  double qhat = 0, mhat = 0, chihat = 0, qbarhat = 0, chibarhat = 0;  // conjugates
};

struct Errors {
  double tm = 0, idg = 0, odg = 0;
};

// algo + mem + structural = total (docs/errors_phases.md §8).
struct Components {
  double algo = 0, mem = 0, structural = 0;
  double total() const { return algo + mem + structural; }
};
struct Decomposition {
  Components tm, idg, odg;
};

// The shifted test protocol (Params::test_overlap / test_levels, docs/general_covariance.md §20):
// fresh tasks whose covariance shares the eigenbasis of the training one with other eigenvalues.
struct TestShift {
  double overlap = 0;          // Params::test_overlap, NaN when given by test_levels
  std::vector<double> levels;  // the test eigenvalue per population level (Params::test_eigenvalues)
  double error = 0;            // test error, same convention as Errors (sigma_test^2 included)
  Components decomposition;    // algo + mem + structural = error
  // The protocol's order parameters m_C = tr(C_test Gbar)/D and q_C = tr(C_test Gamma^T Gamma)/D
  // (docs/general_covariance.md §20.2; the finite-D theory's test context, docs/finite_dim.md
  // §21.11); not serialized.
  double m = std::numeric_limits<double>::quiet_NaN();
  double q = std::numeric_limits<double>::quiet_NaN();
};

// The solver's last iterate at a point that did not converge, for diagnosis only: the numbers
// that Solution would hold had the residual met the tolerance (NaN where they could not be
// evaluated at that iterate).
struct LastIterate {
  OrderParams order;
  Errors error;
  Decomposition decomposition;
  double z = 0, e = 0;
  std::optional<TestShift> test_shift;
};

struct Solution {
  Params params;
  Method method = Method::Saddle;
  numerics::Status status = numerics::Status::NotConverged;
  // |F| of the saddle-point residuals, each relative to max(1, |x_i|) (x the start point).
  double residual_norm = 0;
  int iterations = 0;
  std::string message;
  // order, error, decomposition, z and e are the solution's values when converged() and NaN
  // otherwise (then the solver's last iterate, if it produced one, is in last_iterate).
  OrderParams order;
  Errors error;
  // Letey: filled from the ridgeless limit of the reduced solution, as TM (docs/errors_phases.md
  // §11.3).
  Decomposition decomposition;
  double z = 0;   // spectral argument; -z = lambda/qhat + nu is the effective ridge on S
  double e = 0;   // E_train / tau = chihat / (kappa qhat^2): weight of the memorization noise
  double nu = 0;  // (1 + sigma^2) / alpha
  Regime regime = Regime::TaskRich;
  // The Bayes-optimal IDG/ODG errors from the test prompt alone (docs/errors_phases.md §17): a
  // closed form that depends on p only, filled by every method whatever the status.
  BayesOptimal bayes_optimal;
  // Present when p.has_test_shift(): the shifted protocol's error and decomposition (NaN when
  // not converged, like every value above).
  std::optional<TestShift> test_shift;
  // Present only when the status is not Converged and the solver produced an iterate (absent
  // after a numerical failure that left none): never numbers to report.
  std::optional<LastIterate> last_iterate;
  // With SolveOptions::gradient: d output / d parameter of every output (docs/errors_phases.md
  // §22), NaN with its status when not available (a solution that did not converge included).
  std::optional<Gradient> gradient;
  bool converged() const { return status == numerics::Status::Converged; }
};

struct SolveOptions {
  Method method = Method::Saddle;
  numerics::MomentMethod moments = numerics::MomentMethod::Quadrature;  // for Saddle
  numerics::SolverOptions solver;
  // Warm start for Saddle: a previous solution's order parameters (e.g. along a sweep).
  std::optional<OrderParams> start;
  // Also the exact derivatives of every output with respect to every scalar parameter
  // (Solution::gradient; theory/sensitivity.hpp): about the cost of a solve again.
  bool gradient = false;
  // InvalidParams("residual_tolerance") unless > 0, ("max_iterations") unless >= 0.
  void validate() const;
};

// The ten saddle-point unknowns as a vector (q, m, chi, qbar, chibar, qhat, mhat, chihat,
// qbarhat, chibarhat) and back: warm starts, continuation.
Eigen::VectorXd to_vector(const OrderParams& o);
OrderParams order_from_vector(const Eigen::VectorXd& x);

// Validates p (InvalidParams naming the field) and solves. Non-convergence is reported in
// Solution::status / residual_norm, with NaN in every order parameter, error, decomposition
// piece, z and e (the last iterate moves to Solution::last_iterate); nu, regime and
// bayes_optimal depend on p only and are always filled. A numerical failure inside
// (quadrature, bracketing) is status NumericalFailure with the message, not an exception.
Solution solve(const Params& p, const SolveOptions& options = {});

namespace detail {
// solve() for parameters and options already validated (validate_for(p, options.method) and
// options.validate(): a vectorized solve checks every point before any work, then solves each
// without checking it again).
Solution solve_validated(const Params& p, const SolveOptions& options);
}  // namespace detail

// The test errors of docs/errors_phases.md §7 from the order parameters m, q, qbar, m0, q0, mbar:
// E_P = sigma_t^2 + 1 - 2 m_P + q_P + v qbar, v = (1 + sigma_t^2)/alpha_test.
Errors errors_from(const Params& p, const OrderParams& o);

// The observables of docs/errors_phases.md §7-§8 (and docs/general_covariance.md §20) at order
// parameters o (q, m, qbar and the conjugates are used) and spectral values v = model.at(z): mbar,
// m0, q0, the errors, the decomposition, z, e and the shifted protocol. The last step of every
// method, exposed for the finite-D linear response (docs/finite_dim.md §21). An evaluation, not a
// solve: the status is left as is.
// With U the shifted protocol's test-weighted values are U instead of model.test_weighted(v)
// (the finite-D theory's, with their 1/D bias: docs/finite_dim.md §21.11).
Solution observables_at(const Params& p, const SpectralModel& model, const SpectralValues& v,
                        const OrderParams& o, const numerics::ResolventMoments* U = nullptr);

// Phase structure (docs/errors_phases.md §10).
Regime regime(const Params& p);
double critical_rho(const Params& p);  // rho_c = kappa; inside (0, 1] only when kappa <= 1
bool has_transition(const Params& p);   // kappa < 1: the boundary rho = kappa is reachable
double interpolation_tau();            // tau = 1: N = D^2, the ridgeless interpolation threshold
double atom_mass(const Params& p);     // MP atom inside span(A): max(0, 1 - kappa/rho)

}  // namespace icl::theory
