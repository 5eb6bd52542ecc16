// Tracing a boundary curve through the plane of two parameters (docs/errors_phases.md §19.3):
// pseudo-arclength continuation of H(x, y) = 0, with H the level criterion's quantity - level
// (its gradient exact, docs/sensitivity.md §22) or the steepest criterion's d^2 quantity / dt^2
// (central differences of the exact slope). A curve is followed as a curve, with its turning
// points, not as one x per y.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <Eigen/Core>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/boundary.hpp"
#include "theory/param_path.hpp"
#include "theory/quantity.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::fmt;

using numerics::Status;
using Vec2 = Eigen::Vector2d;

// The box [lo, hi] x [min ys, max ys] in unit coordinates u in [0, 1]^2, each axis in its search
// coordinate (t = x or ln x; y or ln y).
struct Box {
  bool log_x = false, log_y = false;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // the ranges of the coordinates
  static double to_t(double v, bool log) { return log ? std::log(v) : v; }
  static double from_t(double t, bool log) { return log ? std::exp(t) : t; }
  Vec2 unit(double x, double y) const {
    return {(to_t(x, log_x) - x0) / (x1 - x0), (to_t(y, log_y) - y0) / (y1 - y0)};
  }
  double x(const Vec2& u) const { return from_t(x0 + u[0] * (x1 - x0), log_x); }
  double y(const Vec2& u) const { return from_t(y0 + u[1] * (y1 - y0), log_y); }
  bool inside(const Vec2& u) const {
    constexpr double eps = 1e-12;
    return u[0] >= -eps && u[0] <= 1 + eps && u[1] >= -eps && u[1] <= 1 + eps;
  }
};

Vec2 perpendicular(const Vec2& v) { return {-v[1], v[0]}; }

class Tracer {
 public:
  Tracer(const Params& base, const BoundaryOptions& o, const Box& box, BoundaryTrace& out)
      : base_(base), o_(o), box_(box), out_(out), quantity_(find_quantity(o.quantity)),
        solve_(o.solve) {
    solve_.gradient = true;
  }

  // H at u, the quantity there, and (Level) the gradient of H in u. False when a solve fails.
  bool eval(const Vec2& u, double& H, double& value, Vec2* grad) {
    double slope_x = 0, slope_y = 0;
    if (!solve_at(u, 0, value, slope_x, slope_y)) return false;
    if (o_.criterion == Criterion::Level) {
      H = value - o_.level;
      if (grad) *grad = {slope_x * (box_.x1 - box_.x0), slope_y * (box_.y1 - box_.y0)};
      return true;
    }
    // Steepest: d^2 f / dt^2 by the central difference of the exact slope, step 1e-4 of the
    // range (truncation 1e-8 relative, rounding of the slopes 1e-12 / 1e-4).
    const double d = 1e-4;
    double vp = 0, vm = 0, sp = 0, sm = 0, unused = 0;
    if (!solve_at(u, d, vp, sp, unused) || !solve_at(u, -d, vm, sm, unused)) return false;
    H = (sp - sm) / (2 * d * (box_.x1 - box_.x0));
    return true;
  }

  // One branch from the point p (on the curve) in the direction tau; appends to `branch`.
  // Returns how it ended.
  std::string follow(Vec2 p, Vec2 tau, const Vec2& start, std::vector<TracePoint>& branch) {
    double h = 0.25 * o_.trace_step;  // grows to trace_step when corrections are easy
    double s = 0;
    while (int(out_.points.size() + branch.size()) < o_.trace_points) {
      Vec2 next;
      double H = 0, value = 0;
      int iterations = 0;
      // A predictor outside the box: the last point is the curve's crossing of that edge,
      // corrected along the edge (beyond it the parameters may not even be valid).
      const double to_edge = edge_distance(p, tau);
      if (to_edge <= 1e-12) return "at the box's edge: " + where(p);
      if (to_edge < h) {
        const Vec2 q = p + to_edge * tau;
        const Vec2 along = std::abs(q[0]) < 1e-9 || std::abs(q[0] - 1) < 1e-9 ? Vec2{0, 1}
                                                                               : Vec2{1, 0};
        if (!correct(q, along, std::max(h, 1e-6), next, H, value, iterations) ||
            !box_.inside(next))
          return "left the box near " + where(q);
        s += (next - p).norm();
        branch.push_back({box_.x(next), box_.y(next), value, H, s});
        return "left the box at " + where(next);
      }
      while (!correct(p + h * tau, perpendicular(tau), h, next, H, value, iterations)) {
        h *= 0.5;
        if (h < 1e-7) return "the corrector failed at " + where(p);
      }
      if (!box_.inside(next)) return "left the box at " + where(p);
      const Vec2 step = next - p;
      const Vec2 tau_next = step.normalized();
      if (tau[1] * tau_next[1] < 0) ++out_.turning_points;
      s += step.norm();
      branch.push_back({box_.x(next), box_.y(next), value, H, s});
      if (branch.size() >= 10 && (next - start).norm() < h) return "closed on itself";
      // Adaptive steps: longer after an easy correction, shorter after a hard one.
      if (iterations <= 3) h = std::min(1.5 * h, o_.trace_step);
      else if (iterations >= 6) h *= 0.7;
      p = next;
      tau = tau_next;
    }
    return "reached trace_points (" + std::to_string(o_.trace_points) + ")";
  }

 private:
  // The point at offset d (in units of the x range) in t from u: the quantity and its exact
  // slopes in the two search coordinates.
  bool solve_at(const Vec2& u, double d, double& value, double& slope_x, double& slope_y) {
    const Vec2 v{u[0] + d, u[1]};
    Params p;
    try {
      p = with_param(with_param(base_, o_.y, box_.y(v)), o_.x, box_.x(v));
      validate_for(p, o_.solve.method);
    } catch (const InvalidParams&) {
      return false;
    }
    const Solution s = solve_near(p, solve_, warm_ ? &*warm_ : nullptr);
    ++out_.evaluations;
    value = quantity_.value(s);
    slope_x = exact_slope(s, o_.quantity, o_.x, box_.log_x);
    slope_y = exact_slope(s, o_.quantity, o_.y, box_.log_y);
    if (!std::isfinite(value) || !std::isfinite(slope_x) || !std::isfinite(slope_y)) return false;
    if (d == 0) warm_ = s.order;
    return true;
  }

  // The corrector of pseudo-arclength continuation: the zero of H on the line q + sigma n
  // (n normal to the tangent, |sigma| < h: the point h along the curve). Level: Newton with the
  // exact directional derivative; Steepest: the secant method. Converged to 1e-10 in u.
  bool correct(const Vec2& q, const Vec2& n, double h, Vec2& p, double& H, double& value,
               int& iterations) {
    double sigma = 0, prev_sigma = 0, prev_H = 0;
    Vec2 grad;
    for (iterations = 1; iterations <= 12; ++iterations) {
      p = q + sigma * n;
      const bool level = o_.criterion == Criterion::Level;
      if (!eval(p, H, value, level ? &grad : nullptr)) return false;
      double next;
      if (level) {
        const double dH = grad.dot(n);
        if (!(std::abs(dH) > 0)) return false;
        next = sigma - H / dH;
      } else {
        next = iterations == 1 ? 0.1 * h : sigma - H * (sigma - prev_sigma) / (H - prev_H);
        if (!std::isfinite(next)) return false;
      }
      if (std::abs(next) > h) return false;  // another branch, or no crossing near: shorter step
      prev_sigma = sigma;
      prev_H = H;
      if (std::abs(next - sigma) <= 1e-10) {
        p = q + next * n;
        return eval(p, H, value, nullptr);
      }
      sigma = next;
    }
    return false;
  }

  // The distance along tau from p (inside the box) to the box's edge.
  static double edge_distance(const Vec2& p, const Vec2& tau) {
    double d = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 2; ++i) {
      if (tau[i] > 0) d = std::min(d, (1 - p[i]) / tau[i]);
      if (tau[i] < 0) d = std::min(d, -p[i] / tau[i]);
    }
    return std::max(d, 0.0);
  }

  std::string where(const Vec2& u) const {
    return o_.x + " = " + fmt(box_.x(u)) + ", " + o_.y + " = " + fmt(box_.y(u));
  }

  const Params& base_;
  const BoundaryOptions& o_;
  const Box& box_;
  BoundaryTrace& out_;
  const Quantity& quantity_;
  SolveOptions solve_;
  std::optional<OrderParams> warm_;
};

}  // namespace

BoundaryTrace trace_boundary(const Params& base, const BoundaryOptions& o,
                             const BoundaryResult& found) {
  BoundaryTrace out;
  if (o.criterion == Criterion::Argmin)
    throw InvalidParams("trace", "traces the level and steepest criteria (argmin: one x per y)");
  Box box;
  box.log_x = o.log_x;
  box.log_y = o.log_y;
  box.x0 = Box::to_t(found.lo, o.log_x);
  box.x1 = Box::to_t(found.hi, o.log_x);
  const auto [ymin, ymax] = std::minmax_element(o.ys.begin(), o.ys.end());
  box.y0 = Box::to_t(*ymin, o.log_y);
  box.y1 = Box::to_t(*ymax, o.log_y);
  // The start: the first two points the per-y search found; the tangent along their secant.
  std::vector<Vec2> starts;
  std::vector<const BoundaryPoint*> found_points;
  for (const BoundaryPoint& pt : found.points)
    if (pt.converged()) starts.push_back(box.unit(pt.x, pt.y)), found_points.push_back(&pt);
  Tracer tracer(base, o, box, out);
  // The tangent: along the secant of the first two points, or for a level curve found at one y
  // only, normal to the exact gradient (pointing to larger y).
  Vec2 tau;
  double H0 = 0, value0 = 0;
  Vec2 grad;
  if (starts.size() >= 2 && (starts[1] - starts[0]).norm() > 0) {
    tau = (starts[1] - starts[0]).normalized();
  } else if (!starts.empty() && o.criterion == Criterion::Level &&
             tracer.eval(starts[0], H0, value0, &grad) && grad.norm() > 0) {
    tau = perpendicular(grad).normalized();
    if (tau[1] < 0) tau = -tau;
  } else {
    out.status = Status::CheckFailed;
    out.message = "the trace starts from two boundary points (one for a level curve); the "
                  "search found " + std::to_string(starts.size()) + " (" + found.message + ")";
    return out;
  }
  std::vector<TracePoint> forward, backward;
  const std::string ahead = tracer.follow(starts[0], tau, starts[0], forward);
  const std::string behind = ahead == "closed on itself"
                                 ? std::string("closed on itself")
                                 : tracer.follow(starts[0], -tau, starts[0], backward);
  // One curve from the backward end to the forward end; arclength negative behind the start.
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) {
    TracePoint q = *it;
    q.arclength = -q.arclength;
    out.points.push_back(q);
  }
  value0 = found_points[0]->value;
  if (!tracer.eval(starts[0], H0, value0, nullptr)) H0 = std::nan("");
  out.points.push_back({found_points[0]->x, found_points[0]->y, value0, H0, 0});
  out.points.insert(out.points.end(), forward.begin(), forward.end());
  for (const TracePoint& q : out.points)
    out.largest_residual = std::max(out.largest_residual, std::abs(q.residual));
  const bool failed = ahead.rfind("the corrector failed", 0) == 0 ||
                      behind.rfind("the corrector failed", 0) == 0;
  out.status = failed ? Status::NotConverged : Status::Converged;
  out.message = std::to_string(out.points.size()) + " points, " +
                std::to_string(out.turning_points) + " turning points; forward: " + ahead +
                "; backward: " + behind;
  return out;
}

}  // namespace icl::theory
