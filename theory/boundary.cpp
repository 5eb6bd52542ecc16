// Phase boundaries in any plane: per y, a coarse scan along x (theory::sweep) then a bracketed
// refinement (docs/errors_phases.md §19).
#include "theory/boundary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/toms748_solve.hpp>

#include "numerics/enum_names.hpp"
#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/parallel.hpp"
#include "theory/optimize.hpp"
#include "theory/param_path.hpp"
#include "theory/quantity.hpp"
#include "theory/sweep.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::kNaN;
using detail::fmt;

using numerics::Status;

constexpr std::pair<Criterion, const char*> kCriterionNames[] = {
    {Criterion::Level, "level"}, {Criterion::Steepest, "steepest"}, {Criterion::Argmin, "argmin"}};

// The search coordinate t: ln x on a log scale, x on a linear one (docs/errors_phases.md §19.1).
struct Axis {
  std::string name;
  double lo = 0, hi = 0;
  bool log_scale = false;
  double to_t(double x) const { return log_scale ? std::log(x) : x; }
  double to_x(double t) const { return std::clamp(log_scale ? std::exp(t) : t, lo, hi); }
  std::string derivative() const { return log_scale ? "d ln " + name : "d " + name; }
};

// A converged scan point, with the exact slope df/dt (Level, Steepest).
struct ScanPoint {
  double t = 0, x = 0, f = 0, slope = 0;
  OrderParams order;
};

// A solve inside a refinement failed: the refinement stops and the point reports it.
struct EvaluationFailed {
  double x;
  std::string message;
};

class YSolver {
 public:
  YSolver(const Params& base, const BoundaryOptions& o, const Axis& axis)
      : base_(base), o_(o), quantity_(find_quantity(o.quantity)), axis_(axis), solve_(o.solve) {
    // Level and Steepest use the exact slope (docs/sensitivity.md §22) of every solve.
    solve_.gradient = o.criterion != Criterion::Argmin;
  }

  BoundaryPoint run(double y) {
    BoundaryPoint pt;
    pt.y = y;
    at_y_ = with_param(base_, o_.y, y);
    try {
      if (o_.criterion == Criterion::Argmin) argmin(pt);
      else if (scan(pt)) {
        if (o_.criterion == Criterion::Level) level(pt);
        else steepest(pt);
      }
    } catch (const EvaluationFailed& e) {
      pt.status = Status::NotConverged;
      pt.message = "the theory did not converge at " + o_.x + " = " + fmt(e.x) +
                   " during the refinement: " + e.message;
    }
    if (!pt.converged()) pt.x = pt.value = pt.slope = kNaN;
    return pt;
  }

 private:
  // The quantity at t and its exact slope df/dt (one solve, warm-started from `warm` when the
  // closed-form start fails).
  double eval(double t, const OrderParams& warm, BoundaryPoint& pt, double* slope = nullptr) {
    const double x = axis_.to_x(t);
    Solution s = solve_near(with_param(at_y_, o_.x, x), solve_, &warm);
    ++pt.evaluations;
    const double v = quantity_.value(s);
    const double d = slope ? exact_slope(s, o_.quantity, o_.x, axis_.log_scale) : 0.0;
    if (!std::isfinite(v) || !std::isfinite(d))
      throw EvaluationFailed{x, std::isfinite(v) ? "no exact slope: " + s.gradient->message
                                                 : s.message};
    if (slope) *slope = d;
    return v;
  }

  // The coarse scan; false (with the point's status and message set) when fewer than 3 scan
  // points converged.
  bool scan(BoundaryPoint& pt) {
    const int n = o_.scan_points;
    const std::vector<double> xs =
        axis_.log_scale ? logspace(axis_.lo, axis_.hi, n) : linspace(axis_.lo, axis_.hi, n);
    SweepOptions so;
    so.solve = solve_;
    const std::vector<Solution> sols = sweep(at_y_, o_.x, xs, so);
    pt.evaluations += n;
    pts_.clear();
    for (int i = 0; i < n; ++i) {
      const double f = quantity_.value(sols[i]);
      const double d = solve_.gradient ? exact_slope(sols[i], o_.quantity, o_.x, axis_.log_scale)
                                       : 0.0;
      if (std::isfinite(f) && std::isfinite(d))
        pts_.push_back({axis_.to_t(xs[i]), xs[i], f, d, sols[i].order});
    }
    skipped_ = n - static_cast<int>(pts_.size());
    if (pts_.size() >= 3) return true;
    pt.status = Status::NotConverged;
    pt.message = "the scan converged at " + std::to_string(pts_.size()) + " of " +
                 std::to_string(n) + " points in " + range_text();
    return false;
  }

  std::string range_text() const {
    return o_.x + " in [" + fmt(axis_.lo) + ", " + fmt(axis_.hi) + "]";
  }
  std::string skipped_text() const {
    return skipped_ == 0 ? "" : "; " + std::to_string(skipped_) + " scan points did not converge (skipped)";
  }
  // TOMS 748 / Brent tolerance: 2^(1-bits) relative in t, absolute below |t| = 1.
  double tolerance(double a, double b, int bits) const {
    return std::ldexp(1.0, 1 - bits) * std::max({1.0, std::abs(a), std::abs(b)});
  }

  // Safeguarded Newton for f(t) = c on the bracket [a, b] with the exact slope: the bracket
  // shrinks at every step, a step outside it is a bisection. True when it converged to the
  // tolerance in t within max_iterations.
  template <class Warm, class Keep>
  bool newton(const ScanPoint& a, const ScanPoint& b, double c, const Warm& warm, const Keep& keep,
              BoundaryPoint& pt) {
    double lo = a.t, hi = b.t;
    const bool increasing = b.f > a.f;
    // The secant through the bracket's ends: the first iterate.
    double t = a.t + (b.t - a.t) * (c - a.f) / (b.f - a.f);
    for (int i = 0; i < o_.max_iterations; ++i) {
      double slope = 0;
      const double v = eval(t, warm(t), pt, &slope);
      keep(t, v);
      if (v == c) return true;
      ((v < c) == increasing ? lo : hi) = t;
      double next = t - (v - c) / slope;
      if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
      if (std::abs(next - t) <= tolerance(next, t, o_.bits)) return true;
      t = next;
    }
    return false;
  }

  void level(BoundaryPoint& pt) {
    const double c = o_.level;
    const int m = static_cast<int>(pts_.size());
    // Sign changes of g = f - level between consecutive converged scan points (an exact zero at
    // a scan point counts once); the first one (smallest x) is refined.
    int first = -1;
    bool exact = false;
    for (int k = 0; k < m; ++k) {
      const double g = pts_[k].f - c;
      const bool zero = g == 0;
      const bool change = k + 1 < m && g != 0 && pts_[k + 1].f - c != 0 &&
                          std::signbit(g) != std::signbit(pts_[k + 1].f - c);
      if (zero || change) {
        if (pt.candidates++ == 0) {
          first = k;
          exact = zero;
        }
      }
    }
    const std::string what = o_.quantity + " = " + fmt(c);
    if (first < 0) {
      double fmin = pts_[0].f, fmax = pts_[0].f;
      for (const auto& p : pts_) fmin = std::min(fmin, p.f), fmax = std::max(fmax, p.f);
      pt.status = Status::CheckFailed;
      pt.message = "no crossing of " + what + " for " + range_text() + " (" + o_.quantity +
                   " between " + fmt(fmin) + " and " + fmt(fmax) + " on the scan)" + skipped_text();
      return;
    }
    double best_x = pts_[first].x, best_f = pts_[first].f;
    if (!exact) {
      const ScanPoint& a = pts_[first];
      const ScanPoint& b = pts_[first + 1];
      double best_g = std::abs(a.f - c);
      if (std::abs(b.f - c) < best_g) best_x = b.x, best_f = b.f, best_g = std::abs(b.f - c);
      const auto warm = [&](double t) -> const OrderParams& {
        return std::abs(t - a.t) < std::abs(t - b.t) ? a.order : b.order;
      };
      const auto keep = [&](double t, double v) {
        if (std::abs(v - c) < best_g) best_x = axis_.to_x(t), best_f = v, best_g = std::abs(v - c);
      };
      const auto tol = [&](double u, double v) { return std::abs(u - v) <= tolerance(u, v, o_.bits); };
      // Newton on the exact slope (docs/sensitivity.md §22), kept inside the bracket by
      // bisection; TOMS 748 on the values is the safeguard when it does not reach the tolerance.
      if (!newton(a, b, c, warm, keep, pt)) {
        const auto g = [&](double t) {
          const double v = eval(t, warm(t), pt);
          keep(t, v);
          return v - c;
        };
        std::uintmax_t iterations = o_.max_iterations;
        const auto bracket =
            boost::math::tools::toms748_solve(g, a.t, b.t, a.f - c, b.f - c, tol, iterations);
        if (!tol(bracket.first, bracket.second) && best_g != 0) {
          pt.status = Status::NotConverged;
          pt.message = "Newton and TOMS 748 did not reach their tolerance in " +
                       std::to_string(o_.max_iterations) + " iterations on [" + fmt(a.x) + ", " +
                       fmt(b.x) + "]";
          return;
        }
      }
    }
    pt.status = Status::Converged;
    pt.x = best_x;
    pt.value = best_f;
    pt.message = what + " at " + o_.x + " = " + fmt(best_x);
    if (pt.candidates > 1)
      pt.message += "; the scan saw " + std::to_string(pt.candidates) +
                    " crossings, the one at the smallest " + o_.x + " reported";
    pt.message += skipped_text();
  }

  void steepest(BoundaryPoint& pt) {
    const int m = static_cast<int>(pts_.size());
    // The exact slopes on the scan (docs/sensitivity.md §22); the largest |slope| is the
    // candidate, the local maxima of |slope| are counted.
    int best = 0;
    for (int k = 1; k < m; ++k)
      if (std::abs(pts_[k].slope) > std::abs(pts_[best].slope)) best = k;
    for (int k = 1; k < m - 1; ++k)
      if (std::abs(pts_[k].slope) > std::abs(pts_[k - 1].slope) &&
          std::abs(pts_[k].slope) >= std::abs(pts_[k + 1].slope))
        ++pt.candidates;
    const std::string slope_name = "|d " + o_.quantity + " / " + axis_.derivative() + "|";
    if (best == 0 || best == m - 1) {
      pt.status = Status::CheckFailed;
      pt.message = slope_name + " is largest at the " + (best == 0 ? "lower" : "upper") +
                   " end of " + range_text() + " (no interior maximum on the scan)" + skipped_text();
      return;
    }
    // Refine the maximum of the exact |df/dt| by Brent on the bracket [t_{k-1}, t_{k+1}] around
    // the scan's largest slope. A peak narrower than the scan spacing can sit just outside that
    // bracket: when Brent ends at an edge of its bracket, the bracket moves one scan cell that
    // way (at most scan_points times) while the slope keeps growing.
    const ScanPoint& mid = pts_[best];
    const double t_lo = axis_.to_t(axis_.lo), t_hi = axis_.to_t(axis_.hi);
    double best_t = mid.t, best_slope = mid.slope, best_value = mid.f;
    const auto objective = [&](double t) {
      double s = 0;
      const double v = eval(t, mid.order, pt, &s);
      if (std::abs(s) > std::abs(best_slope)) best_t = t, best_slope = s, best_value = v;
      return -std::abs(s);
    };
    int centre = best;
    for (int moves = 0;; ++moves) {
      const double a = pts_[centre - 1].t, b = pts_[centre + 1].t;
      const double before = std::abs(best_slope);
      std::uintmax_t iterations = o_.max_iterations;
      boost::math::tools::brent_find_minima(objective, a, b, o_.bits, iterations);
      if (iterations >= static_cast<std::uintmax_t>(o_.max_iterations)) {
        pt.status = Status::NotConverged;
        pt.message = "Brent did not converge in " + std::to_string(o_.max_iterations) +
                     " iterations on [" + fmt(axis_.to_x(a)) + ", " + fmt(axis_.to_x(b)) + "]";
        return;
      }
      const double edge = 4 * tolerance(a, b, o_.bits) + 1e-3 * (b - a);
      const int step = best_t - a <= edge && a > t_lo ? -1 : b - best_t <= edge && b < t_hi ? 1 : 0;
      if (step == 0 || moves == o_.scan_points || (moves > 0 && !(std::abs(best_slope) > before)) ||
          centre + step < 1 || centre + step > m - 2)
        break;
      centre += step;
    }
    if (best_t - t_lo <= 4 * tolerance(t_lo, t_hi, o_.bits) ||
        t_hi - best_t <= 4 * tolerance(t_lo, t_hi, o_.bits)) {
      pt.status = Status::CheckFailed;
      pt.message = slope_name + " grows up to the " + (best_t - t_lo < t_hi - best_t ? "lower" : "upper") +
                   " end of " + range_text() + " (no interior maximum)" + skipped_text();
      return;
    }
    pt.status = Status::Converged;
    pt.x = axis_.to_x(best_t);
    pt.value = best_value;
    pt.slope = best_slope;
    pt.message = slope_name + " largest at " + o_.x + " = " + fmt(pt.x) + " (slope " +
                 fmt(best_slope) + ")";
    if (pt.candidates > 1)
      pt.message += "; the scan saw " + std::to_string(pt.candidates) +
                    " local maxima of the slope, the largest refined";
    pt.message += skipped_text();
  }

  void argmin(BoundaryPoint& pt) {
    const OptimizeOptions oo{.over = o_.x, .lo = axis_.lo, .hi = axis_.hi,
                             .scan_points = o_.scan_points, .bits = o_.bits,
                             .max_iterations = o_.max_iterations, .solve = o_.solve};
    const std::string& q = o_.quantity;
    const OptimizeResult r = theory::run(at_y_, oo, quantity_);
    pt.evaluations = r.evaluations;
    pt.candidates = r.interior_minima;
    if (!r.converged()) {
      pt.status = r.status;
      pt.message = r.message;
      return;
    }
    if (r.argmin == axis_.lo || r.argmin == axis_.hi) {
      pt.status = Status::CheckFailed;
      pt.message = q + " is smallest at the " + (r.argmin == axis_.lo ? "lower" : "upper") +
                   " end of " + range_text() + " (" + fmt(r.minimum) + "; no interior minimum)";
      return;
    }
    pt.status = Status::Converged;
    pt.x = r.argmin;
    pt.value = r.minimum;
    pt.message = q + " minimal at " + o_.x + " = " + fmt(r.argmin);
    if (r.interior_minima > 1)
      pt.message += "; the scan saw " + std::to_string(r.interior_minima) +
                    " interior local minima, the lowest value reported";
  }

  const Params& base_;
  const BoundaryOptions& o_;
  const Quantity& quantity_;
  const Axis& axis_;
  SolveOptions solve_;  // o_.solve, with the gradient for Level and Steepest
  Params at_y_;
  std::vector<ScanPoint> pts_;
  int skipped_ = 0;
};

}  // namespace

const char* to_string(Criterion c) { return numerics::name_of(c, kCriterionNames); }
Criterion criterion_from_string(const std::string& s) {
  return numerics::value_of(s, kCriterionNames, "criterion");
}

void BoundaryOptions::validate() const {
  find_quantity(quantity, "quantity");
  if (criterion == Criterion::Level && !std::isfinite(level))
    throw InvalidParams("level", "the level criterion needs a finite level (got " + fmt(level) + ")");
  if (criterion != Criterion::Level && !std::isnan(level))
    throw InvalidParams("level", "only with the level criterion (got criterion " +
                                     std::string(to_string(criterion)) + ")");
  Params::check_name(x, "x");
  Params::check_name(y, "y");
  if (x == y) throw InvalidParams("y", "must differ from x (both '" + x + "')");
  // gamma = tau / kappa: stepping one of them while searching the other is well defined, but
  // gamma with tau would overwrite each other (Params::set).
  if ((x == "gamma" && y == "tau") || (x == "tau" && y == "gamma"))
    throw InvalidParams("y", "tau and gamma = tau/kappa cannot be x and y together");
  validate_search(x, lo, hi, scan_points, bits, max_iterations);
  if (log_x) {
    const double from = search_range(x, lo, hi, "x").first;
    if (!(from > 0))
      throw InvalidParams("log_x", "a logarithmic x axis needs a range above 0 (" + x +
                                       " from " + fmt(from) + ")");
  }
  if (ys.empty() || ys.size() > 100000)
    throw InvalidParams("ys", "needs 1 to 100000 values (got " + std::to_string(ys.size()) + ")");
  numerics::check_threads(threads, /*zero_means_all_cores=*/true);
  if (trace && criterion == Criterion::Argmin)
    throw InvalidParams("trace", "follows a level or a steepest curve (argmin: one x per y)");
  if (trace && ys.size() < 2)
    throw InvalidParams("trace", "starts from two boundary points: give at least two ys");
  if (log_y)
    for (double v : ys)
      if (!(v > 0))
        throw InvalidParams("log_y", "a logarithmic y axis needs ys above 0 (got " + fmt(v) + ")");
  if (trace_points < 10 || trace_points > 100000)
    throw InvalidParams("trace_points",
                        "must be in [10, 100000] (got " + std::to_string(trace_points) + ")");
  if (!(trace_step > 0 && trace_step <= 0.5))
    throw InvalidParams("trace_step", "must be in (0, 0.5] (got " + fmt(trace_step) + ")");
}

BoundaryResult run(const Params& base, const BoundaryOptions& options,
                   const numerics::Progress& progress) {
  options.validate();
  BoundaryResult r;
  r.options = options;
  r.params = base;
  std::tie(r.lo, r.hi) = search_range(options.x, options.lo, options.hi, "x");
  r.log_scale = options.log_x;
  const Axis axis{options.x, r.lo, r.hi, r.log_scale};
  if (options.criterion == Criterion::Steepest)
    r.derivative = "d " + options.quantity + " / " + axis.derivative();
  for (double y : options.ys) {
    const Params at_y = with_param(base, options.y, y);
    for (double x : {r.lo, r.hi}) {
      try {
        validate_for(with_param(at_y, options.x, x), options.solve.method);
      } catch (const InvalidParams& e) {
        throw InvalidParams(e.field(), e.detail() + " (at " + options.y + " = " + fmt(y) + ", " +
                                           options.x + " = " + fmt(x) + ")");
      }
    }
  }
  const std::size_t n = options.ys.size();
  r.points.resize(n);
  // Each y is independent (its scan starts from closed forms), so the result does not depend on
  // the number of threads or the order of work.
  numerics::parallel_for(
      n, options.threads,
      [&](std::size_t k) { r.points[k] = YSolver(base, options, axis).run(options.ys[k]); },
      progress, "y");

  int found = 0, none = 0, failed = 0;
  for (const auto& p : r.points) {
    if (p.converged()) ++found;
    else if (p.status == Status::CheckFailed) ++none;
    else ++failed;
  }
  r.status = failed > 0 ? Status::NotConverged : none > 0 ? Status::CheckFailed : Status::Converged;
  r.message = std::to_string(found) + " of " + std::to_string(n) + " " + options.y +
              " values have a boundary point";
  if (none > 0) r.message += ", " + std::to_string(none) + " none in range";
  if (failed > 0) r.message += ", " + std::to_string(failed) + " failed";
  if (options.trace) r.trace = trace_boundary(base, options, r);
  return r;
}

}  // namespace icl::theory
