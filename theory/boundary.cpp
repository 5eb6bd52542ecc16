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

namespace icl::theory {
namespace {

using numerics::Status;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string fmt(double v) { return numerics::format_significant(v); }

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

// A converged scan point.
struct ScanPoint {
  double t = 0, x = 0, f = 0;
  OrderParams order;
};

// A solve inside a refinement failed: the refinement stops and the point reports it.
struct EvaluationFailed {
  double x;
  std::string message;
};

class YSolver {
 public:
  YSolver(const Params& base, const BoundaryOptions& o, const Axis& axis, double h)
      : base_(base), o_(o), quantity_(find_quantity(o.quantity)), axis_(axis), h_(h) {}

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
  // The quantity at t (one solve, warm-started from `warm` when the closed-form start fails).
  double eval(double t, const OrderParams& warm, BoundaryPoint& pt) {
    const double x = axis_.to_x(t);
    Solution s = solve_near(with_param(at_y_, o_.x, x), o_.solve, &warm);
    ++pt.evaluations;
    const double v = quantity_.value(s);
    if (!std::isfinite(v)) throw EvaluationFailed{x, s.message};
    return v;
  }

  // The coarse scan; false (with the point's status and message set) when fewer than 3 scan
  // points converged.
  bool scan(BoundaryPoint& pt) {
    const int n = o_.scan_points;
    const std::vector<double> xs =
        axis_.log_scale ? logspace(axis_.lo, axis_.hi, n) : linspace(axis_.lo, axis_.hi, n);
    SweepOptions so;
    so.solve = o_.solve;
    const std::vector<Solution> sols = sweep(at_y_, o_.x, xs, so);
    pt.evaluations += n;
    pts_.clear();
    for (int i = 0; i < n; ++i) {
      const double f = quantity_.value(sols[i]);
      if (std::isfinite(f)) pts_.push_back({axis_.to_t(xs[i]), xs[i], f, sols[i].order});
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
      const auto g = [&](double t) {
        const double v = eval(t, std::abs(t - a.t) < std::abs(t - b.t) ? a.order : b.order, pt);
        if (std::abs(v - c) < best_g) best_x = axis_.to_x(t), best_f = v, best_g = std::abs(v - c);
        return v - c;
      };
      std::uintmax_t iterations = o_.max_iterations;
      const auto tol = [&](double u, double v) { return std::abs(u - v) <= tolerance(u, v, o_.bits); };
      const auto bracket = boost::math::tools::toms748_solve(g, a.t, b.t, a.f - c, b.f - c, tol, iterations);
      if (!tol(bracket.first, bracket.second) && best_g != 0) {
        pt.status = Status::NotConverged;
        pt.message = "TOMS 748 did not reach its tolerance in " + std::to_string(o_.max_iterations) +
                     " iterations on [" + fmt(a.x) + ", " + fmt(b.x) + "]";
        return;
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
    // The slope on the scan: one-sided at the ends, the three-point central difference for
    // unequal spacings inside (exact for quadratics).
    std::vector<double> d(m);
    d[0] = (pts_[1].f - pts_[0].f) / (pts_[1].t - pts_[0].t);
    d[m - 1] = (pts_[m - 1].f - pts_[m - 2].f) / (pts_[m - 1].t - pts_[m - 2].t);
    for (int k = 1; k < m - 1; ++k) {
      const double hm = pts_[k].t - pts_[k - 1].t, hp = pts_[k + 1].t - pts_[k].t;
      d[k] = ((pts_[k + 1].f - pts_[k].f) * hm / hp + (pts_[k].f - pts_[k - 1].f) * hp / hm) /
             (hm + hp);
    }
    int best = 0;
    for (int k = 1; k < m; ++k)
      if (std::abs(d[k]) > std::abs(d[best])) best = k;
    for (int k = 1; k < m - 1; ++k)
      if (std::abs(d[k]) > std::abs(d[k - 1]) && std::abs(d[k]) >= std::abs(d[k + 1])) ++pt.candidates;
    const std::string slope_name = "|d " + o_.quantity + " / " + axis_.derivative() + "|";
    if (best == 0 || best == m - 1) {
      pt.status = Status::CheckFailed;
      pt.message = slope_name + " is largest at the " + (best == 0 ? "lower" : "upper") +
                   " end of " + range_text() + " (no interior maximum on the scan)" + skipped_text();
      return;
    }
    // Refine the maximum of |D_h f|, D_h f(t) = (f(t + h) - f(t - h)) / 2h, by Brent on the
    // bracket [t_{k-1}, t_{k+1}] around the scan's largest slope, kept h inside the range. A peak
    // narrower than the scan spacing can sit just outside that bracket (the scan's three-point
    // slopes smooth it): when Brent ends at an edge of its bracket, the bracket moves one scan
    // cell that way (at most scan_points times) while the slope keeps growing.
    const ScanPoint& mid = pts_[best];
    const double t_lo = axis_.to_t(axis_.lo) + h_, t_hi = axis_.to_t(axis_.hi) - h_;
    double best_t = mid.t, best_slope = 0;
    const auto slope = [&](double t) {
      return (eval(t + h_, mid.order, pt) - eval(t - h_, mid.order, pt)) / (2 * h_);
    };
    const auto objective = [&](double t) {
      const double s = slope(t);
      if (std::abs(s) > std::abs(best_slope)) best_t = t, best_slope = s;
      return -std::abs(s);
    };
    int centre = best;
    for (int moves = 0;; ++moves) {
      const double a = std::max(pts_[centre - 1].t, t_lo), b = std::min(pts_[centre + 1].t, t_hi);
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
    pt.value = eval(best_t, mid.order, pt);
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
  double h_;
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
  if (!(derivative_step > 0 && derivative_step <= 0.1))
    throw InvalidParams("derivative_step", "must be in (0, 0.1] (got " + fmt(derivative_step) + ")");
  numerics::check_threads(threads, /*zero_means_all_cores=*/true);
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
  // The difference step: derivative_step in t (a fraction of hi - lo on a linear scale), at most
  // a quarter of the scan spacing so that t +- h stays within the scan cell being refined.
  const double span = axis.to_t(r.hi) - axis.to_t(r.lo);
  const double spacing = span / (options.scan_points - 1);
  r.derivative_step = std::min(options.derivative_step * (r.log_scale ? 1.0 : span), spacing / 4);
  if (options.criterion != Criterion::Steepest) r.derivative_step = kNaN;

  const std::size_t n = options.ys.size();
  r.points.resize(n);
  // Each y is independent (its scan starts from closed forms), so the result does not depend on
  // the number of threads or the order of work.
  numerics::parallel_for(
      n, options.threads,
      [&](std::size_t k) { r.points[k] = YSolver(base, options, axis, r.derivative_step).run(options.ys[k]); },
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
  return r;
}

}  // namespace icl::theory
