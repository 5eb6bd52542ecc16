// Optimal hyperparameters: coarse scan + Brent refinement (docs/errors_phases.md §18).
#include "theory/optimize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/toms748_solve.hpp>

#include "numerics/enum_names.hpp"
#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/sweep.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::kNaN;
using detail::fmt;

constexpr std::pair<Objective, const char*> kObjectiveNames[] = {
    {Objective::Tm, "tm"}, {Objective::Idg, "idg"}, {Objective::Odg, "odg"},
    {Objective::Shift, "shift"}};

// One evaluation point: value of the parameter, the objective, its exact slope d f / dt there
// (docs/sensitivity.md §22) and the solution.
struct Point {
  double x = kNaN, f = kNaN, slope = kNaN;
  Solution s;
};

}  // namespace

const char* to_string(Objective o) { return numerics::name_of(o, kObjectiveNames); }
Objective objective_from_string(const std::string& s) {
  return numerics::value_of(s, kObjectiveNames, "objective");
}

void OptimizeOptions::validate() const {
  Params::check_name(over, "over");
  validate_search(over, lo, hi, scan_points, bits, max_iterations);
  if (max_refinements < 1 || max_refinements > 100)
    throw InvalidParams("max_refinements",
                        "must be in [1, 100] (got " + std::to_string(max_refinements) + ")");
}

OptimizeResult run(const Params& base, const OptimizeOptions& options) {
  return run(base, options, find_quantity(to_string(options.objective), "objective"));
}

OptimizeResult run(const Params& base, const OptimizeOptions& options, const Quantity& quantity) {
  options.validate();
  const auto value = [&quantity](const Solution& s) { return quantity.value(s); };
  OptimizeResult r;
  r.options = options;
  r.params = base;
  std::tie(r.lo, r.hi) = search_range(options.over, options.lo, options.hi, "over");
  r.log_scale = r.lo > 0;
  for (double v : {r.lo, r.hi}) {
    const Params p = with_param(base, options.over, v);
    validate_for(p, options.solve.method);
    if (options.objective == Objective::Shift && !p.has_test_shift())
      throw InvalidParams("objective", "'shift' minimizes the shifted test protocol's error: "
                                       "set test_overlap or test_levels (docs/general_covariance.md §20)");
  }
  const int n = options.scan_points;
  const std::vector<double> xs =
      r.log_scale ? logspace(r.lo, r.hi, n) : linspace(r.lo, r.hi, n);

  // The coarse scan: every value, warm-started along the path (theory::sweep), each with the
  // exact gradient: the refinement solves the stationarity condition d f / dt = 0.
  SweepOptions so;
  so.solve = options.solve;
  so.solve.gradient = true;
  const auto slope_of = [&](const Solution& s) {
    return exact_slope(s, quantity.name, options.over, r.log_scale);
  };
  std::vector<Solution> scan = sweep(base, options.over, xs, so);
  r.evaluations = n;
  std::vector<Point> pts;  // converged scan points, in order
  for (int i = 0; i < n; ++i) {
    const double f = value(scan[i]);
    if (std::isfinite(f)) pts.push_back({xs[i], f, slope_of(scan[i]), std::move(scan[i])});
  }
  if (pts.size() < 3) {
    r.message = "the scan converged at " + std::to_string(pts.size()) + " of " +
                std::to_string(n) + " points in [" + fmt(r.lo) + ", " + fmt(r.hi) + "]";
    if (!scan.empty()) r.solution = std::move(scan.back());
    return r;
  }

  // Local minima of the scan (ends included when lower than their one neighbour).
  const int m = static_cast<int>(pts.size());
  std::vector<int> candidates;
  for (int i = 0; i < m; ++i) {
    const bool left = i == 0 || pts[i].f < pts[i - 1].f;
    const bool right = i == m - 1 || pts[i].f <= pts[i + 1].f;
    if (left && right) {
      candidates.push_back(i);
      if (i > 0 && i < m - 1) ++r.interior_minima;
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](int a, int b) { return pts[a].f < pts[b].f; });
  if (static_cast<int>(candidates.size()) > options.max_refinements)
    candidates.resize(options.max_refinements);

  Point best = pts[candidates.front()];
  const auto to_t = [&](double x) { return r.log_scale ? std::log(x) : x; };
  const auto to_x = [&](double t) {
    return std::clamp(r.log_scale ? std::exp(t) : t, r.lo, r.hi);
  };
  std::string failure;
  for (int c : candidates) {
    const Point& grid = pts[c];
    const Point& left = pts[c > 0 ? c - 1 : c];
    const Point& right = pts[c < m - 1 ? c + 1 : c];
    // One evaluation at t: the value (kept when it is the best so far) and the exact slope.
    const auto at = [&](double t, double& slope) {
      const double x = to_x(t);
      Solution s = solve_near(with_param(base, options.over, x), so.solve, &grid.s.order);
      ++r.evaluations;
      const double v = value(s);
      slope = slope_of(s);
      if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
      if (v < best.f) best = {x, v, slope, std::move(s)};
      return v;
    };
    std::uintmax_t iterations = options.max_iterations;
    if (left.slope < 0 && right.slope > 0) {
      // An interior minimum: the root of the exact slope (TOMS 748 in t, to 2^(1 - bits)).
      const auto slope = [&](double t) {
        double d = 0;
        at(t, d);
        return d;
      };
      const auto tol = [&](double u, double v) {
        return std::abs(u - v) <= std::ldexp(1.0, 1 - options.bits) *
                                      std::max({1.0, std::abs(u), std::abs(v)});
      };
      boost::math::tools::toms748_solve(slope, to_t(left.x), to_t(right.x), left.slope,
                                        right.slope, tol, iterations);
    } else {
      // At an end of the range (or a scan whose slopes do not bracket a root): Brent on the
      // values.
      const auto f = [&](double t) {
        double d = 0;
        return at(t, d);
      };
      boost::math::tools::brent_find_minima(f, to_t(left.x), to_t(right.x), options.bits,
                                            iterations);
    }
    if (iterations >= static_cast<std::uintmax_t>(options.max_iterations))
      failure = "the refinement did not converge in " + std::to_string(options.max_iterations) +
                " iterations on the bracket [" + fmt(left.x) + ", " + fmt(right.x) +
                "] (best so far " + options.over + " = " + fmt(best.x) + ")";
  }
  if (!failure.empty()) {
    r.message = failure;
    r.solution = std::move(best.s);
    return r;
  }

  // A minimum at an end of the range: Brent stops within its tolerance of the end (and
  // exp(log hi) may differ from hi in the last bit); report the end itself, with its scan value.
  const double tol = 4 * std::ldexp(1.0, 1 - options.bits) *
                     (std::abs(to_t(r.hi)) + std::abs(to_t(r.lo)) + 1);
  for (const Point* end : {&pts.front(), &pts.back()}) {
    if ((end->x == r.lo || end->x == r.hi) && std::abs(to_t(best.x) - to_t(end->x)) <= tol &&
        end->f <= best.f + 1e-12 * std::abs(end->f))
      best = *end;
  }
  r.status = numerics::Status::Converged;
  r.argmin = best.x;
  r.minimum = best.f;
  r.slope = best.slope;
  r.solution = std::move(best.s);
  r.message = std::string(to_string(options.objective)) + " minimal at " + options.over + " = " +
              fmt(r.argmin);
  if (r.argmin == r.lo) r.message += ", at the lower end of the range";
  else if (r.argmin == r.hi) r.message += ", at the upper end of the range";
  if (r.interior_minima > 1)
    r.message += "; the scan saw " + std::to_string(r.interior_minima) +
                 " interior local minima (the lowest " +
                 std::to_string(std::min<int>(r.interior_minima, options.max_refinements)) +
                 " refined)";
  return r;
}

}  // namespace icl::theory
