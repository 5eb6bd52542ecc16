// Phase boundaries in any plane (docs/errors_phases.md §19): for each value y of one parameter, the
// value x of another parameter, in a range [lo, hi], where a criterion on one quantity of the
// replica theory holds, the other parameters fixed:
//   Level     quantity(x) = level        (a bracketed root: coarse scan for sign changes, then
//                                          Boost.Math TOMS 748; several crossings: the one at
//                                          the smallest x, with their number)
//   Steepest  max over x of |d quantity / d t|, t = x on the linear x axis (the default) and
//             t = ln x on a log one (log_x, lo > 0) (the exact slope of docs/sensitivity.md
//             §22 at each scan point; the largest refined by Brent on its magnitude)
//   Argmin    min over x of quantity     (theory/optimize.hpp: scan + Brent)
// A y where the criterion holds nowhere inside the range gets x = NaN (null in JSON) and the
// reason in its message (status CheckFailed); a y where a solve or a refinement failed gets
// NaN and NotConverged / NumericalFailure.
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/status.hpp"
#include "theory/lowrank.hpp"
#include "theory/params.hpp"

namespace icl::theory {

enum class Criterion { Level, Steepest, Argmin };
const char* to_string(Criterion c);                     // "level" | "steepest" | "argmin"
Criterion criterion_from_string(const std::string& s);  // throws InvalidParams("criterion")

struct BoundaryOptions {
  Criterion criterion = Criterion::Steepest;
  std::string quantity = "idg";  // a name of solution_quantities() (theory/quantity.hpp)
  // Level: finite, required; NaN for the other criteria.
  double level = std::numeric_limits<double>::quiet_NaN();
  std::string x = "rho";         // the parameter searched, one of Params::names()
  // The x range [lo, hi], lo < hi, inside the parameter's valid values (default_range(x) when
  // both are NaN).
  double lo = std::numeric_limits<double>::quiet_NaN();
  double hi = std::numeric_limits<double>::quiet_NaN();
  // The x axis: linear (the default: Steepest maximizes |d quantity / dx|) or logarithmic
  // (needs lo > 0: |d quantity / d ln x|). It sets the scan's spacing too; Level and Argmin
  // find the same x on either axis (to their tolerance).
  bool log_x = false;
  std::string y = "alpha";       // the parameter stepped, one of Params::names(), != x
  std::vector<double> ys;        // its values (1..100000), each a valid point with x at lo, hi
  int scan_points = 41;          // coarse scan along x per y, 5..100000
  int bits = 30;                 // Brent / TOMS 748 tolerance 2^(1-bits) in t, 4..52
  int max_iterations = 100;      // per refinement, 1..100000
  SolveOptions solve;            // method (default Saddle), solver tolerances
  // y values in parallel, 0..256 (0 = all cores, as theory::sweep); results do not depend on it.
  int threads = 0;
  // Beyond the one x per y: follow the curve itself through the box [lo, hi] x [min ys, max ys]
  // (Level or Steepest; theory/boundary_trace.cpp, docs/errors_phases.md §19.3) by
  // pseudo-arclength continuation from the first two boundary points, in both directions, with
  // adaptive steps of at most trace_step (a fraction of the box's diagonal, in t and in y or ln y
  // with log_y), until it leaves the box, closes, or has trace_points points.
  bool trace = false;
  bool log_y = false;        // the trace's y coordinate: ln y (ys > 0)
  int trace_points = 400;    // 10..100000
  double trace_step = 0.02;  // (0, 0.5]

  // Throws InvalidParams naming the field ("criterion", "quantity", "level", "x", "y", "lo",
  // "hi", "log_x", "ys", "scan_points", "bits", "max_iterations", "threads", "trace",
  // "log_y", "trace_points", "trace_step").
  void validate() const;
};

// A point of a traced curve: the point, the quantity there, the criterion's residual (Level:
// quantity - level; Steepest: d^2 quantity / dt^2, which vanishes on the curve), and the
// arclength from the start in the box's unit coordinates (negative on the backward branch).
struct TracePoint {
  double x = 0, y = 0, value = 0, residual = 0, arclength = 0;
};

struct BoundaryTrace {
  std::vector<TracePoint> points;  // along the curve, from one end to the other
  int turning_points = 0;          // where the curve turns back in y (dy/ds changes sign)
  double largest_residual = 0;     // max |residual| over the points
  int evaluations = 0;             // theory solves
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;  // how each branch ended (left the box, closed, point limit, failed)
  bool converged() const { return status == numerics::Status::Converged; }
};

struct BoundaryPoint {
  double y = 0;
  double x = std::numeric_limits<double>::quiet_NaN();      // NaN unless Converged
  double value = std::numeric_limits<double>::quiet_NaN();  // the quantity at x
  // Steepest: d quantity / d t at x (t = ln x or x); NaN otherwise or unless Converged.
  double slope = std::numeric_limits<double>::quiet_NaN();
  // Level: sign changes seen by the scan; Steepest: local maxima of |slope| on the scan;
  // Argmin: interior local minima seen by the scan.
  int candidates = 0;
  int evaluations = 0;  // theory solves for this y
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  bool converged() const { return status == numerics::Status::Converged; }
};

struct BoundaryResult {
  BoundaryOptions options;
  Params params;               // the base point
  double lo = 0, hi = 0;       // the x range searched (options.lo, hi or default_range(x))
  bool log_scale = false;      // options.log_x
  // Steepest: the derivative maximized, "d idg / d rho" or "d idg / d ln rho"; else empty.
  std::string derivative;
  std::vector<BoundaryPoint> points;  // one per ys, in order
  std::optional<BoundaryTrace> trace;  // with options.trace
  // Converged when every y has a refined x; CheckFailed when some y has none in range (and none
  // failed); NotConverged when a solve or refinement failed at some y.
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  bool converged() const { return status == numerics::Status::Converged; }
};

// Validates the options and every point (base with y = ys[k] and x at lo and hi) first:
// InvalidParams naming the field. progress(done, total, "y") after each y. The serializers
// (to_json, to_table) are in theory/serialize.hpp.
BoundaryResult run(const Params& base, const BoundaryOptions& options,
                   const numerics::Progress& progress = {});

// The continuation of options.trace from the points of `found` (a run() without trace).
BoundaryTrace trace_boundary(const Params& base, const BoundaryOptions& options,
                             const BoundaryResult& found);

}  // namespace icl::theory
