// Square nonlinear systems F(x) = 0 solved with Ceres (Levenberg-Marquardt / dogleg on
// 1/2 |F|^2), a damped fixed-point iteration, and a bracketed scalar root (Boost.Math TOMS 748).
// Every result reports the residual norm |F(x*)| computed by us: Ceres minimises a sum of
// squares and can report CONVERGENCE at a point that is not a root.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "numerics/status.hpp"

namespace icl::numerics {


// Residual F: R^n -> R^n. Returns false when x is outside the domain (the solver then backs off).
using ResidualFunction = std::function<bool(const Eigen::VectorXd& x, Eigen::VectorXd& F)>;
// Optional analytic Jacobian J(i, j) = dF_i / dx_j, evaluated together with F.
using JacobianFunction =
    std::function<bool(const Eigen::VectorXd& x, Eigen::VectorXd& F, Eigen::MatrixXd& J)>;

struct ResidualSystem {
  int size = 0;
  ResidualFunction residual;
  JacobianFunction jacobian;  // empty -> central numeric differences
  std::vector<std::string> names;  // optional, for messages
};

struct SolverOptions {
  double residual_tolerance = 1e-10;  // acceptance: |F(x*)|_2 <= this (checked by us)
  double function_tolerance = 1e-16;  // Ceres relative cost change
  double parameter_tolerance = 1e-14;
  double gradient_tolerance = 1e-20;
  int max_iterations = 200;
  Eigen::VectorXd lower_bounds;  // empty = unbounded; else size n (use -inf for none)
  Eigen::VectorXd upper_bounds;
};

struct SolveResult {
  Status status = Status::NotConverged;  // Converged: |F(x*)|_2 <= residual_tolerance
                                          // NumericalFailure: F not evaluable at the start
  Eigen::VectorXd x;
  double residual_norm = 0.0;  // |F(x)|_2 at the returned x, recomputed
  int iterations = 0;
  std::string message;  // Ceres's report / reason for failure
  bool converged() const { return status == Status::Converged; }
};

SolveResult solve_residual_system(const ResidualSystem& system, const Eigen::VectorXd& x0,
                                  const SolverOptions& options = {});

// x <- (1 - damping) x + damping G(x) until |G(x) - x|_2 <= tolerance. residual_norm = |G(x) - x|.
struct FixedPointOptions {
  double damping = 0.5;
  double tolerance = 1e-12;
  int max_iterations = 10000;
};
using FixedPointMap = std::function<bool(const Eigen::VectorXd& x, Eigen::VectorXd& Gx)>;
SolveResult damped_fixed_point(const FixedPointMap& map, const Eigen::VectorXd& x0,
                               const FixedPointOptions& options = {});

// Root of a scalar f on [lo, hi] (sign change required after bracket growth). If f(lo), f(hi)
// have the same sign, the bracket grows geometrically (factor `growth`) towards `hard_lo` and
// `hard_hi`, which it never passes. Throws NumericalError when no sign change is found.
struct ScalarRootOptions {
  double hard_lo = -1e300;
  double hard_hi = 1e300;
  double growth = 2.0;
  int max_growth_steps = 200;
  int max_iterations = 200;
  int digits = 52;  // bits of the bracket width tolerance (Boost eps_tolerance)
};
struct ScalarRoot {
  double x = 0.0;
  double f = 0.0;
  int iterations = 0;
};
ScalarRoot bracketed_root(const std::function<double(double)>& f, double lo, double hi,
                          const ScalarRootOptions& options = {});

}  // namespace icl::numerics
