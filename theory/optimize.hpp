// Optimal hyperparameters (docs/errors_phases.md §18): the value of one parameter (lambda, alpha,
// alpha_test, tau, kappa, ...) in a range [lo, hi] that minimizes one test error (TM, IDG or
// ODG) of the replica theory, the other parameters fixed.
//
// Procedure: a coarse scan of scan_points values (log-spaced when lo > 0) with theory::sweep
// (warm starts) with the exact gradients (docs/sensitivity.md §22), non-converged points
// skipped; every local minimum of the scan (up to max_refinements, lowest first) is refined on
// its bracket [x_{i-1}, x_{i+1}] (in log x on a log scale): an interior one by the root of the
// exact slope (the stationarity condition, Boost.Math TOMS 748), one at an end of the range by
// brent_find_minima on the values; the lowest value found wins. A minimum at an end
// of the range is reported as such (still Converged: it is the minimizer over the range); the
// message also says when the scan saw more than one interior local minimum.
#pragma once
#include <limits>
#include <string>

#include "numerics/status.hpp"
#include "theory/lowrank.hpp"
#include "theory/param_path.hpp"
#include "theory/params.hpp"
#include "theory/quantity.hpp"

namespace icl::theory {

// The quantities of theory/quantity.hpp that optimize minimizes: find_quantity(to_string(o)).
// Shift: the shifted test protocol's error (docs/general_covariance.md §20; needs
// Params::test_overlap or test_levels).
enum class Objective { Tm, Idg, Odg, Shift };
const char* to_string(Objective o);                 // "tm" | "idg" | "odg" | "shift"
Objective objective_from_string(const std::string& s);  // throws InvalidParams("objective")

struct OptimizeOptions {
  Objective objective = Objective::Idg;
  std::string over = "lambda";  // one of Params::names()
  // The range [lo, hi], lo < hi, inside the parameter's valid values (default_range(over) when
  // both are NaN); log scale when lo > 0, linear otherwise.
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
  int scan_points = 41;      // coarse scan, 5..100000
  int max_refinements = 4;   // local minima of the scan refined by Brent, 1..100
  int bits = 30;             // Brent's tolerance: 2^(1-bits) relative in x (log x), 4..52
  int max_iterations = 100;  // Brent iterations per refinement, 1..100000
  SolveOptions solve;        // method (default Saddle), solver tolerances

  // Throws InvalidParams naming the field ("objective", "over", "lo", "hi", "scan_points", ...).
  void validate() const;
};

// default_range(over): theory/param_path.hpp.

struct OptimizeResult {
  OptimizeOptions options;
  Params params;              // the base point (`over` at the argmin: solution.params)
  double lo = 0, hi = 0;      // the range searched (options.lo, hi or default_range(over))
  bool log_scale = false;
  double argmin = std::numeric_limits<double>::quiet_NaN();   // NaN unless Converged
  double minimum = std::numeric_limits<double>::quiet_NaN();  // NaN unless Converged
  // The exact slope d objective / dt at the argmin (t = x, or ln x on a log scale; docs/
  // sensitivity.md §22): the stationarity the refinement solved for (0 to its tolerance at an
  // interior minimum); NaN unless Converged.
  double slope = std::numeric_limits<double>::quiet_NaN();
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  int evaluations = 0;  // theory solves (scan + refinements)
  int interior_minima = 0;  // interior local minima seen by the scan
  Solution solution;    // the theory at the argmin (Converged), else at the last point tried
  bool converged() const { return status == numerics::Status::Converged; }
};

// Validates `base` with `over` at lo and at hi (InvalidParams naming the field) and the options,
// then minimizes the objective. The serializers (to_json, to_text) are in theory/serialize.hpp.
OptimizeResult run(const Params& base, const OptimizeOptions& options);

// The same procedure for any quantity of the Solution (theory/boundary.hpp's argmin criterion);
// options.objective is then only echoed in the result.
OptimizeResult run(const Params& base, const OptimizeOptions& options, const Quantity& quantity);

}  // namespace icl::theory
