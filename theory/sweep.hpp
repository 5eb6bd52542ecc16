// Sweeps along one parameter (warm starts and continuation) and two-parameter phase grids.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"

namespace icl::theory {

struct SweepOptions {
  SolveOptions solve;       // method, moments, solver tolerances
  // Saddle: each point starts from its own reduced closed form; when that fails, from the
  // previous converged point (warm start), with step halving (continuation).
  bool warm_start = true;
  int max_halvings = 6;     // Saddle: continuation step halving on failure
  void validate() const;    // InvalidParams("max_halvings") below 0
};

// One Solution per value (never skipped; failed points keep their status and residual).
// Every point is validated first: an invalid point throws InvalidParams naming it.
// progress(done, total, "point") after each point; may be empty. It may throw to cancel: the
// sweep runs on the calling thread, so the exception propagates out of sweep().
std::vector<Solution> sweep(const Params& base, const std::string& name,
                            const std::vector<double>& values, const SweepOptions& options = {},
                            const numerics::Progress& progress = {});

// One point of finite_dim_sweep: the finite-D prediction (docs/finite_dim.md §21), or no result
// where the finite-D theory does not cover the point (solve_finite_dim refuses it: the
// minimum-norm branch's interpolation peak, lambda = 0 with tau = 1 at the sizes of D), with the
// refusal.
struct FiniteDimPoint {
  std::optional<FiniteDimResult> result;
  std::string not_covered;  // "tau: ..." when result is empty
};

// solve_finite_dim at every value of `name` (the finite-D columns of `icl sweep --finite-dim`):
// the points are independent (each from its own closed-form start, no continuation), so a point
// equals solve_finite_dim at its parameters. options.validate() and every point's
// Params::validate() run first (InvalidParams naming the field and the point); a point that
// validates but is refused by the finite-D theory is reported, never thrown. A failed point keeps
// its status and NaN values. progress: (done, total, "finite-D point") after each point; it may
// throw to cancel, as in sweep().
std::vector<FiniteDimPoint> finite_dim_sweep(const Params& base, const std::string& name,
                                             const std::vector<double>& values,
                                             const FiniteDimOptions& options,
                                             const numerics::Progress& progress = {});
// The same at independent points (the finite-D columns of a vectorized solve): each point
// validated first (InvalidParams naming the field and "point k"), then as finite_dim_sweep.
std::vector<FiniteDimPoint> finite_dim_points(const std::vector<Params>& points,
                                              const FiniteDimOptions& options,
                                              const numerics::Progress& progress = {});

struct PhaseOptions {
  SolveOptions solve;
  int threads = 0;  // 0 = hardware concurrency; results do not depend on it
  void validate() const;  // InvalidParams("threads") below 0
};

// Independent points (each starts from its own reduced closed form): result[k] solves
// points[k]. Every point is validated first (InvalidParams naming the field and "point k").
// Threads as in PhaseOptions; the result does not depend on their number. progress(done,
// total, "point"), serialized, may be empty; it may throw to cancel (e.g. an interrupt from
// Python): the workers stop taking points and the first such exception is rethrown once they
// have joined.
std::vector<Solution> solve_points(const std::vector<Params>& points,
                                   const PhaseOptions& options = {},
                                   const numerics::Progress& progress = {});

// Helpers for grids: `count` points from start to stop, linear or geometric.
std::vector<double> linspace(double start, double stop, int count);
std::vector<double> logspace(double start, double stop, int count);  // start, stop > 0

}  // namespace icl::theory
