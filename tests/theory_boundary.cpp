// Phase boundaries in any plane (theory/boundary.hpp, docs/errors_phases.md §19), each criterion
// checked by an independent route: the level crossing and the steepest point against dense grids of
// independent solves, the steepest IDG point along rho against the D -> infinity transition
// rho = kappa (§10.2), and the argmin against theory/optimize.hpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "theory/boundary.hpp"
#include "theory/optimize.hpp"
#include "theory/param_path.hpp"
#include "theory/quantity.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"

using namespace icl::theory;

namespace {

// `count` values of `name` in [lo, hi], log-spaced (t = ln x) or with `linear` evenly spaced
// (t = x), each solved on its own (no warm start, no refinement), and the quantity there.
struct Grid {
  std::vector<double> t, f;
  bool linear = false;
  double x(std::size_t k) const { return linear ? t[k] : std::exp(t[k]); }
};
Grid dense(const Params& base, const std::string& name, const std::string& quantity, double lo,
           double hi, int count, bool linear = false) {
  Grid g;
  g.linear = linear;
  for (double x : linear ? linspace(lo, hi, count) : logspace(lo, hi, count)) {
    const Solution s = solve(with_param(base, name, x));
    REQUIRE(s.converged());
    g.t.push_back(linear ? x : std::log(x));
    g.f.push_back(find_quantity(quantity).value(s));
  }
  return g;
}

// The first sign change of f - level on the grid, located by linear interpolation in t.
double first_crossing(const Grid& g, double level) {
  for (std::size_t k = 0; k + 1 < g.f.size(); ++k) {
    const double a = g.f[k] - level, b = g.f[k + 1] - level;
    if (a == 0) return std::exp(g.t[k]);
    if ((a < 0) != (b < 0)) return std::exp(g.t[k] + (g.t[k + 1] - g.t[k]) * a / (a - b));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The grid point with the largest |central difference| (uniform grid in t).
double steepest_on_grid(const Grid& g) {
  std::size_t best = 1;
  double best_d = 0;
  for (std::size_t k = 1; k + 1 < g.f.size(); ++k) {
    const double d = std::abs(g.f[k + 1] - g.f[k - 1]);
    if (d > best_d) best_d = d, best = k;
  }
  return g.x(best);
}

// The D -> infinity point of docs/errors_phases.md §10.2: alpha -> infinity, lambda = 0, tau > 1,
// sigma = 0, where IDG has a kink at rho = kappa.
Params transition_point(double kappa) {
  return {.tau = 2.25, .kappa = kappa, .sigma = 0, .lambda = 0};
}

}  // namespace

TEST_CASE("boundary level: the crossing matches a 2000-point grid of independent solves") {
  Params base = transition_point(0.5);
  base.alpha = 10;
  const BoundaryOptions o{.criterion = Criterion::Level, .quantity = "idg", .level = 0.3,
                         .x = "rho", .lo = 0.05, .hi = 1.0, .y = "kappa", .ys = {0.3, 0.6}};
  const BoundaryResult r = run(base, o);
  CAPTURE(r.message);
  REQUIRE(r.converged());
  for (const BoundaryPoint& p : r.points) {
    CAPTURE(p.message);
    REQUIRE(p.converged());
    CHECK(p.candidates == 1);
    const Grid g = dense(with_param(base, "kappa", p.y), "rho", "idg", o.lo, o.hi, 2000);
    // Linear interpolation on a grid of step h = ln(20)/1999 = 1.5e-3 in t is off by at most
    // h^2/8 |f''/f'| (a few 1e-7 for IDG, whose |f''/f'| is O(1) here); 1e-5 leaves room.
    CHECK(p.x == doctest::Approx(first_crossing(g, o.level)).epsilon(1e-5));
    // TOMS 748 stopped within 2^-29 in t: |IDG - level| <= slope * 2^-29 ~ 2e-9.
    CHECK(std::abs(p.value - o.level) < 1e-8);
  }
}

TEST_CASE("boundary level: two crossings (ODG is not monotone in alpha), the first reported") {
  // ODG against alpha falls then rises (docs/errors_phases.md §18.2): a level between its minimum
  // and both ends is crossed twice.
  BoundaryOptions o{.criterion = Criterion::Level, .quantity = "odg", .level = 0.7, .x = "alpha",
                   .lo = 0.5, .hi = 100, .y = "lambda", .ys = {0.0}};
  const BoundaryResult r = run(Params{}, o);
  const BoundaryPoint& p = r.points.at(0);
  CAPTURE(p.message);
  REQUIRE(p.converged());
  CHECK(p.candidates == 2);
  CHECK(p.message.find("2 crossings") != std::string::npos);
  const Grid g = dense(Params{}, "alpha", "odg", o.lo, o.hi, 2000);
  CHECK(p.x == doctest::Approx(first_crossing(g, o.level)).epsilon(1e-5));
  // The second crossing is above the ODG-optimal alpha; narrowing the range finds it.
  o.lo = 20;
  const BoundaryResult second = run(Params{}, o);
  REQUIRE(second.points.at(0).converged());
  CHECK(second.points[0].candidates == 1);
  CHECK(second.points[0].x > 20);
}

TEST_CASE("boundary level: no crossing in range is null with the reason, not a failure") {
  // IDG stays below 1.2 at the paper's point over rho in [0.01, 1] (the default range).
  const BoundaryOptions o{.criterion = Criterion::Level, .quantity = "idg", .level = 5.0,
                          .x = "rho", .y = "alpha", .ys = {2.0, 4.0}};
  const BoundaryResult r = run(Params{}, o);
  CHECK(r.status == icl::numerics::Status::CheckFailed);
  for (const auto& p : r.points) {
    CHECK(p.status == icl::numerics::Status::CheckFailed);
    CHECK(std::isnan(p.x));
    CHECK(std::isnan(p.value));
    CHECK(p.message.find("no crossing") != std::string::npos);
  }
  const auto j = to_json(r);
  CHECK(j["points"][0]["rho"].is_null());
  CHECK(j["points"][0]["converged"] == false);
}

TEST_CASE("boundary steepest: the refined point matches the steepest point of a dense grid") {
  // kappa = 0.5 at moderate alpha, and kappa = 0.3 at alpha = 10^3.5 with 81 scan points, where
  // the slope's peak (about 0.045 wide in ln rho) spans about one scan cell and its maximum lies
  // outside the first Brent bracket (the bracket has to move).
  struct Case {
    double kappa, alpha;
    int scan_points;
  };
  for (const Case c : {Case{0.5, 3.0, 41}, Case{0.5, 30.0, 41}, Case{0.3, 3162.2776601683795, 81}}) {
    CAPTURE(c.alpha);
    Params base = transition_point(c.kappa);
    const BoundaryOptions o{.criterion = Criterion::Steepest, .quantity = "idg", .x = "rho",
                            .lo = 0.05, .hi = 1.0, .log_x = true, .y = "alpha", .ys = {c.alpha},
                            .scan_points = c.scan_points};
    const BoundaryResult r = run(base, o);
    REQUIRE(r.converged());
    CHECK(r.derivative == "d idg / d ln rho");
    for (const BoundaryPoint& p : r.points) {
      CAPTURE(p.message);
      const int count = 4001;
      const Grid g = dense(with_param(base, "alpha", p.y), "rho", "idg", o.lo, o.hi, count);
      // The grid's steepest point is within one grid step (ln 20 / 4000 = 7.5e-4 in t) of the
      // true one; the refinement's own error (difference step 1e-3, bias O(h^2)) is far smaller.
      const double step = std::log(o.hi / o.lo) / (count - 1);
      CHECK(std::abs(std::log(p.x) - std::log(steepest_on_grid(g))) <= 1.5 * step);
      // The slope is d IDG / d ln rho, positive here (IDG rises into the task-poor phase).
      CHECK(p.slope > 0);
    }
  }
}

TEST_CASE("boundary steepest: the linear x axis (the default) maximizes d/dx, not d/d ln x") {
  // docs/errors_phases.md §19.1: on the linear axis the steepest point is that of |d IDG / d rho|,
  // checked against a 4001-point linear grid; at alpha = 32 it differs from the log axis's
  // steepest point (|d IDG / d ln rho| = rho |d IDG / d rho| favours larger rho) by several
  // percent of rho, so the axis matters.
  const Params base = transition_point(0.5);
  BoundaryOptions o{.criterion = Criterion::Steepest, .quantity = "idg", .x = "rho", .lo = 0.05,
                    .hi = 1.0, .y = "alpha", .ys = {32.0}};
  const BoundaryResult lin = run(base, o);
  REQUIRE(lin.converged());
  CHECK(!lin.log_scale);
  CHECK(lin.derivative == "d idg / d rho");
  const BoundaryPoint& p = lin.points[0];
  const int count = 4001;
  const Grid g = dense(with_param(base, "alpha", p.y), "rho", "idg", o.lo, o.hi, count, true);
  CHECK(std::abs(p.x - steepest_on_grid(g)) <= 1.5 * (o.hi - o.lo) / (count - 1));
  o.log_x = true;
  const BoundaryResult log = run(base, o);
  REQUIRE(log.converged());
  CAPTURE(p.x);
  CAPTURE(log.points[0].x);
  CHECK(std::abs(log.points[0].x - p.x) > 0.03 * p.x);
  // The slopes are the two derivatives at their own maxima: |d/d ln rho| = rho |d/d rho|, so the
  // log axis's maximum is at least rho* times the linear one's at rho*.
  CHECK(std::abs(log.points[0].slope) >= p.x * std::abs(p.slope) * (1 - 1e-6));
}

TEST_CASE("boundary level and argmin: the x axis changes the scan, not the answer") {
  const Params base = transition_point(0.5);
  BoundaryOptions o{.criterion = Criterion::Level, .quantity = "idg", .level = 0.3, .x = "rho",
                    .lo = 0.05, .hi = 1.0, .y = "alpha", .ys = {10.0, 100.0}};
  const BoundaryResult lin = run(base, o);
  o.log_x = true;
  const BoundaryResult log = run(base, o);
  REQUIRE(lin.converged());
  REQUIRE(log.converged());
  CHECK(lin.derivative.empty());
  for (std::size_t k = 0; k < lin.points.size(); ++k)  // TOMS 748 to 2^-29 relative in t
    CHECK(lin.points[k].x == doctest::Approx(log.points[k].x).epsilon(1e-8));
  BoundaryOptions a{.criterion = Criterion::Argmin, .quantity = "idg", .x = "lambda", .lo = 1e-4,
                    .hi = 10, .y = "alpha", .ys = {1.0, 2.0}};
  const BoundaryResult am = run(Params{}, a);
  a.log_x = true;
  const BoundaryResult am_log = run(Params{}, a);
  for (std::size_t k = 0; k < am.points.size(); ++k) CHECK(am.points[k].x == am_log.points[k].x);
}

TEST_CASE("boundary steepest: at large alpha the steepest IDG point along rho approaches rho = kappa") {
  // docs/errors_phases.md §10.2: as alpha -> infinity (sigma = 0, lambda = 0, tau > 1) IDG -> 0 for
  // rho < kappa and (1 - kappa/rho)(1 + kappa/(tau - 1)) above, whose slope is largest at
  // rho = kappa+: 1 + kappa/(tau - 1) in ln rho, (1 + kappa/(tau - 1)) / kappa in rho. On either
  // axis the finite-alpha steepest point must move towards kappa and its slope towards that
  // value as alpha grows (beyond alpha ~ 30 on the linear axis, where rho* - kappa is largest,
  // docs/errors_phases.md §19.2; beyond 3-7 on the log axis).
  for (const auto& [kappa, log_x] : {std::pair{0.3, true}, {0.7, true}, {0.3, false}, {0.7, false}}) {
    CAPTURE(kappa);
    CAPTURE(log_x);
    const Params base = transition_point(kappa);
    const BoundaryOptions o{.criterion = Criterion::Steepest, .quantity = "idg", .x = "rho",
                            .lo = 0.05, .hi = 1.0, .log_x = log_x, .y = "alpha",
                            .ys = log_x ? std::vector<double>{10, 100, 1000, 10000}
                                        : std::vector<double>{100, 1000, 10000}};
    const BoundaryResult r = run(base, o);
    CAPTURE(r.message);
    REQUIRE(r.converged());
    const double limit_slope = (1 + kappa / (base.tau - 1)) / (log_x ? 1.0 : kappa);
    for (std::size_t k = 1; k < r.points.size(); ++k) {
      const BoundaryPoint &prev = r.points[k - 1], &p = r.points[k];
      CAPTURE(p.y);
      CHECK(std::abs(p.x - kappa) < std::abs(prev.x - kappa));
      CHECK(std::abs(p.slope - limit_slope) < std::abs(prev.slope - limit_slope));
    }
  }
}

TEST_CASE("boundary argmin: agrees with optimize at every y; a minimum at an end is null") {
  const BoundaryOptions o{.criterion = Criterion::Argmin, .quantity = "idg", .x = "lambda",
                          .lo = 1e-4, .hi = 10, .y = "alpha", .ys = {1.0, 2.0, 4.0}};
  const BoundaryResult r = run(Params{}, o);
  REQUIRE(r.converged());
  for (const BoundaryPoint& p : r.points) {
    const OptimizeOptions oo{.objective = Objective::Idg, .over = "lambda", .lo = o.lo, .hi = o.hi};
    const OptimizeResult opt = run(with_param(Params{}, "alpha", p.y), oo);
    REQUIRE(opt.converged());
    // The same procedure on the same point: the same solves, so the same numbers.
    CHECK(p.x == opt.argmin);
    CHECK(p.value == opt.minimum);
  }
  // TM decreases over the whole alpha range at the paper's point (docs/errors_phases.md §18.2): its
  // minimum over [0.1, 100] is the upper end, which is not an interior minimum.
  const BoundaryOptions tm{.criterion = Criterion::Argmin, .quantity = "tm", .x = "alpha",
                           .lo = 0.1, .hi = 100, .y = "lambda", .ys = {0.0}};
  const BoundaryResult end = run(Params{}, tm);
  CHECK(end.points[0].status == icl::numerics::Status::CheckFailed);
  CHECK(std::isnan(end.points[0].x));
  CHECK(end.points[0].message.find("upper end") != std::string::npos);
}

TEST_CASE("boundary: the result does not depend on the number of threads") {
  // Any quantity of the Solution: the in-subspace overlap m0, kinked at kappa.
  BoundaryOptions o{.criterion = Criterion::Steepest, .quantity = "m0", .x = "rho", .lo = 0.05,
                    .hi = 1, .y = "kappa", .ys = {0.3, 0.4, 0.5, 0.6}, .threads = 1};
  const BoundaryResult one = run(transition_point(0.5), o);
  o.threads = 3;
  const BoundaryResult three = run(transition_point(0.5), o);
  REQUIRE(one.points.size() == three.points.size());
  for (std::size_t k = 0; k < one.points.size(); ++k) {
    CHECK(one.points[k].x == three.points[k].x);
    CHECK(one.points[k].slope == three.points[k].slope);
    CHECK(one.points[k].message == three.points[k].message);
  }
  CHECK(to_json(one).dump() == to_json(three).dump());
}

TEST_CASE("boundary: validate() names the field") {
  // The field named when the valid options `ok` are changed by `change`.
  const auto field_of = [](void (*change)(BoundaryOptions&)) {
    BoundaryOptions o;
    o.ys = {2.0};
    change(o);
    try {
      run(Params{}, o);
    } catch (const icl::InvalidParams& e) {
      return e.field();
    }
    return std::string("none");
  };
  using O = BoundaryOptions;
  CHECK(field_of([](O& o) { o.quantity = "foo"; }) == "quantity");
  CHECK(field_of([](O& o) { o.criterion = Criterion::Level; }) == "level");  // level NaN
  CHECK(field_of([](O& o) { o.level = 0.5; }) == "level");  // without the level criterion
  CHECK(field_of([](O& o) { o.threads = 257; }) == "threads");
  CHECK(field_of([](O& o) { o.x = "beta"; }) == "x");
  CHECK(field_of([](O& o) { o.y = "rho"; }) == "y");  // == x
  CHECK(field_of([](O& o) { o.lo = 0.5; }) == "hi");
  CHECK(field_of([](O& o) { o.x = "lambda", o.lo = 0, o.hi = 1, o.log_x = true; }) == "log_x");
  CHECK(field_of([](O& o) { o.lo = 0.5, o.hi = 2; }) == "hi");  // rho <= 1
  CHECK(field_of([](O& o) { o.ys = {}; }) == "ys");
  CHECK(field_of([](O& o) { o.scan_points = 4; }) == "scan_points");
  CHECK(field_of([](O& o) { o.ys = {-1.0}; }) == "alpha");  // alpha = -1 is not a valid point
  CHECK(field_of([](O&) {}) == "none");
  CHECK_THROWS_AS(criterion_from_string("steep"), icl::InvalidParams);
}

TEST_CASE("the quantity table: every quantity by name, NaN without convergence") {
  const Solution s = solve(Params{});
  REQUIRE(s.converged());
  const auto value = [](const Solution& sol, const std::string& name) {
    return find_quantity(name).value(sol);
  };
  CHECK(value(s, "idg") == s.error.idg);
  CHECK(value(s, "odg_struct") == s.decomposition.odg.structural);
  CHECK(value(s, "m0") == s.order.m0);
  CHECK(value(s, "z") == s.z);
  CHECK(value(s, "bayes_idg") == s.bayes_optimal.idg);
  // Every quantity is finite at a converged point with a shifted test protocol (the shift
  // quantities are NaN without one, docs/general_covariance.md §20).
  Params shifted;
  shifted.test_overlap = 0.3;
  const Solution t = solve(shifted);
  REQUIRE(t.converged());
  for (const Quantity& q : solution_quantities()) {
    CAPTURE(q.name);
    CHECK(std::isfinite(q.value(t)));
    CHECK(std::isnan(q.value(Solution{})));  // status NotConverged
    const bool shift_only = std::string(q.name).find("shift") != std::string::npos;
    CHECK(std::isfinite(q.value(s)) == !shift_only);
    CHECK(&find_quantity(q.name) == &q);
  }
  // The bookkeeping columns are not quantities; an unknown name lists the valid ones.
  CHECK_THROWS_AS(find_quantity("converged"), icl::InvalidParams);
  try {
    find_quantity("foo", "objective");
    FAIL("no exception");
  } catch (const icl::InvalidParams& e) {
    CHECK(e.field() == "objective");
    CHECK(e.detail().find("tm idg odg tm_algo") != std::string::npos);
    CHECK(e.detail().find("bayes_shift") != std::string::npos);
  }
}

TEST_CASE("the sweep TSV columns are the bookkeeping columns and the table's column quantities") {
  for (const bool shift : {false, true}) {
    CAPTURE(shift);
    std::vector<std::string> expected = {"converged", "residual", "iterations"};
    for (const Quantity& q : solution_quantities())
      if (q.column == Column::Always || (shift && q.column == Column::TestShift))
        expected.push_back(q.name);
    CHECK(solution_columns(shift) == expected);
  }
  // The ridgeless method leaves chi, chibar and the conjugates undefined: NaN in the row, absent
  // from the JSON order block (kOrderFields).
  Params p;
  p.lambda = 0;
  p.tau = 0.5;
  const Solution l = solve(p, {.method = Method::Letey});
  REQUIRE(l.converged());
  const auto columns = solution_columns();
  const auto row = solution_row(l);
  const auto order = to_json(l)["order"];
  for (const OrderField& f : kOrderFields) {
    CAPTURE(f.name);
    const auto k = std::find(columns.begin(), columns.end(), f.name) - columns.begin();
    CHECK(std::isnan(row[k]) == f.undefined_for_letey);
    CHECK(order.contains(f.name) == !f.undefined_for_letey);
  }
}

TEST_CASE("boundary trace: a level curve through the plane, every point on it") {
  // IDG = 0.3 in the (rho, kappa) plane at alpha = 10 (docs/errors_phases.md §19.3): every traced
  // point has |IDG - 0.3| at the corrector's tolerance, steps stay below trace_step of the box,
  // the ends are on the box's edges, and at three points along the curve the per-y level search
  // (an independent route: scan + Newton along x at that kappa) finds the same rho.
  const Params base{.alpha = 10, .tau = 2.25, .sigma = 0, .lambda = 0};
  BoundaryOptions o{.criterion = Criterion::Level, .quantity = "idg", .level = 0.3, .x = "rho",
                    .lo = 0.05, .hi = 1.0, .y = "kappa", .ys = {0.2, 0.4, 0.6, 0.8}};
  o.trace = true;
  const BoundaryResult r = run(base, o);
  REQUIRE(r.trace);
  const BoundaryTrace& t = *r.trace;
  CAPTURE(t.message);
  REQUIRE(t.converged());
  CHECK(t.points.size() > 30);
  CHECK(t.turning_points == 0);
  CHECK(t.largest_residual < 1e-10);
  for (std::size_t k = 1; k < t.points.size(); ++k) {
    const double dx = (t.points[k].x - t.points[k - 1].x) / (o.hi - o.lo);
    const double dy = (t.points[k].y - t.points[k - 1].y) / (0.8 - 0.2);
    // The step is trace_step along the tangent plus the corrector's normal move (second order
    // in the step where the curve bends gently): chords within 5% of trace_step.
    CHECK(std::hypot(dx, dy) <= 1.05 * o.trace_step);
    CHECK(t.points[k].arclength > t.points[k - 1].arclength);
  }
  const auto on_edge = [&](const TracePoint& q) {
    return std::abs(q.y - 0.2) < 1e-9 || std::abs(q.y - 0.8) < 1e-9 ||
           std::abs(q.x - o.lo) < 1e-9 || std::abs(q.x - o.hi) < 1e-9;
  };
  CHECK(on_edge(t.points.front()));
  CHECK(on_edge(t.points.back()));
  for (std::size_t k : {t.points.size() / 4, t.points.size() / 2, 3 * t.points.size() / 4}) {
    BoundaryOptions one = o;
    one.trace = false;
    one.ys = {t.points[k].y};
    const BoundaryResult at = run(base, one);
    REQUIRE(at.points[0].converged());
    CHECK(at.points[0].x == doctest::Approx(t.points[k].x).epsilon(1e-8));
  }
}

TEST_CASE("boundary trace: a level curve that turns back, and a steepest curve") {
  // ODG is not monotone in alpha (docs/errors_phases.md §18.2): at sigma = 0.3 the level 0.7 is
  // crossed twice, and as sigma grows the minimum over alpha rises past 0.7, so the two crossings
  // meet: the curve in the (ln alpha, sigma) plane turns back in sigma. One x per y cannot
  // describe it; the trace goes from one crossing to the other through the turning point.
  BoundaryOptions o{.criterion = Criterion::Level, .quantity = "odg", .level = 0.7, .x = "alpha",
                    .lo = 0.5, .hi = 100, .log_x = true, .y = "sigma", .ys = {0.3, 1.0}};
  o.trace = true;
  const BoundaryResult r = run(Params{}, o);
  REQUIRE(r.trace);
  const BoundaryTrace& t = *r.trace;
  CAPTURE(t.message);
  REQUIRE(t.converged());
  CHECK(t.turning_points == 1);
  CHECK(t.largest_residual < 1e-10);
  // Both ends at sigma = 0.3: the two crossings of the per-y search (the second with the range
  // narrowed above the ODG-optimal alpha).
  CHECK(t.points.front().y == doctest::Approx(0.3));
  CHECK(t.points.back().y == doctest::Approx(0.3));
  const double first = std::min(t.points.front().x, t.points.back().x);
  const double second = std::max(t.points.front().x, t.points.back().x);
  BoundaryOptions one = o;
  one.trace = false;
  one.ys = {0.3};
  CHECK(run(Params{}, one).points[0].x == doctest::Approx(first).epsilon(1e-8));
  one.lo = 20;
  CHECK(run(Params{}, one).points[0].x == doctest::Approx(second).epsilon(1e-8));
  // The steepest IDG point along rho against ln alpha (figure 13's curve, kappa = 0.5): each
  // traced point is where the per-y steepest search puts it (to the second derivative's central
  // differences, 1e-6).
  BoundaryOptions s{.criterion = Criterion::Steepest, .quantity = "idg", .x = "rho", .lo = 0.05,
                    .hi = 1.0, .y = "alpha", .ys = {100, 1000}};
  s.trace = true;
  s.log_y = true;
  const Params point{.tau = 2.25, .kappa = 0.5, .sigma = 0, .lambda = 0};
  const BoundaryResult st = run(point, s);
  REQUIRE(st.trace);
  CAPTURE(st.trace->message);
  REQUIRE(st.trace->converged());
  CHECK(st.trace->points.size() > 10);
  for (std::size_t k : {std::size_t(2), st.trace->points.size() / 2}) {
    BoundaryOptions one_y = s;
    one_y.trace = false;
    one_y.ys = {st.trace->points[k].y};
    const BoundaryResult at = run(point, one_y);
    REQUIRE(at.points[0].converged());
    CHECK(at.points[0].x == doctest::Approx(st.trace->points[k].x).epsilon(1e-6));
  }
  // Argmin has no curve to trace; the options say so.
  BoundaryOptions bad = o;
  bad.criterion = Criterion::Argmin;
  bad.level = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(run(Params{}, bad), doctest::Contains("trace"), icl::InvalidParams);
}
