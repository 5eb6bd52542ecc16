// Optimal hyperparameters (theory/optimize.hpp, docs/errors_phases.md §18), checked independently
// against a dense brute-force grid with a local parabola through the three lowest neighbours.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "numerics/error.hpp"
#include "theory/optimize.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"

using namespace icl::theory;

namespace {

double error_of(const Solution& s, Objective o) {
  return o == Objective::Tm ? s.error.tm : o == Objective::Idg ? s.error.idg : s.error.odg;
}

struct BruteForce {
  double argmin, minimum;
  int index, count;
};

// `count` log-spaced points in [lo, hi] solved one by one (no warm starts, no Brent); the
// minimum of the grid refined by the parabola through it and its neighbours (in log x).
BruteForce brute_force(const Params& base, const std::string& name, Objective o, double lo,
                       double hi, int count) {
  const auto xs = logspace(lo, hi, count);
  std::vector<double> f(count);
  int k = 0;
  for (int i = 0; i < count; ++i) {
    Params p = base;
    p.set(name, xs[i]);
    const Solution s = solve(p);
    REQUIRE(s.converged());
    f[i] = error_of(s, o);
    if (f[i] < f[k]) k = i;
  }
  if (k == 0 || k == count - 1) return {xs[k], f[k], k, count};
  const double h = std::log(xs[k + 1]) - std::log(xs[k]);
  const double d1 = (f[k + 1] - f[k - 1]) / (2 * h), d2 = (f[k + 1] - 2 * f[k] + f[k - 1]) / (h * h);
  const double dt = -d1 / d2;
  return {std::exp(std::log(xs[k]) + dt), f[k] - 0.5 * d1 * d1 / d2, k, count};
}

void check_against_brute_force(const Params& base, const OptimizeOptions& o, bool interior) {
  const OptimizeResult r = run(base, o);
  CAPTURE(r.message);
  REQUIRE(r.converged());
  const BruteForce b = brute_force(base, o.over, o.objective, o.lo, o.hi, 2000);
  CHECK(((b.index > 0 && b.index < b.count - 1) == interior));
  if (interior) CHECK(r.argmin == doctest::Approx(b.argmin).epsilon(1e-4));
  else CHECK(r.argmin == b.argmin);  // the end itself
  CHECK(r.minimum == doctest::Approx(b.minimum).epsilon(1e-9));
  // The optimizer's value is the theory's value at its argmin, and no grid point is lower.
  CHECK(r.minimum == doctest::Approx(error_of(r.solution, o.objective)).epsilon(1e-14));
  CHECK(r.solution.params.get(o.over) == r.argmin);
  CHECK(r.minimum <= b.minimum * (1 + 1e-9));
  const bool at_end = r.message.find("end of the range") != std::string::npos;
  CHECK(at_end == !interior);
}

}  // namespace

TEST_CASE("the optimal ridge for IDG at the paper's point matches a 2000-point brute force") {
  // IDG(lambda) has an interior minimum there (lambda* ~ 0.69: the ridge trades memorization of
  // the finite task set against shrinkage).
  OptimizeOptions o{.objective = Objective::Idg, .over = "lambda", .lo = 1e-3, .hi = 10};
  check_against_brute_force(Params{}, o, true);
}

TEST_CASE("the ODG-optimal pretraining context length is interior (ODG is not monotone in alpha)") {
  OptimizeOptions o{.objective = Objective::Odg, .over = "alpha", .lo = 0.5, .hi = 50};
  check_against_brute_force(Params{}, o, true);
  const OptimizeResult r = run(Params{}, o);
  CHECK(r.argmin > 5);
  CHECK(r.argmin < 40);
}

TEST_CASE("a minimum on the boundary is the end of the range itself, still converged") {
  // TM decreases with the context length over [0.5, 20]: the minimizer is alpha = 20.
  OptimizeOptions o{.objective = Objective::Tm, .over = "alpha", .lo = 0.5, .hi = 20};
  check_against_brute_force(Params{}, o, false);
  const OptimizeResult r = run(Params{}, o);
  CHECK(r.argmin == 20.0);
  CHECK(r.message.find("at the upper end of the range") != std::string::npos);
  CHECK(r.status == icl::numerics::Status::Converged);
}

TEST_CASE("two interior minima: both basins refined, the lower one wins, the message says so") {
  // TM over the task count kappa at this point has local minima near kappa = 0.22 and 11.1
  // (found by a random search of parameter points; the brute force confirms both).
  const Params p{.alpha = 19.4, .tau = 1.28, .rho = 0.87, .sigma = 0.25, .lambda = 0.01};
  OptimizeOptions o{.objective = Objective::Tm, .over = "kappa", .lo = 0.05, .hi = 50};
  check_against_brute_force(p, o, true);
  const OptimizeResult r = run(p, o);
  CHECK(r.interior_minima == 2);
  CHECK(r.message.find("the scan saw 2 interior local minima") != std::string::npos);
  CHECK(r.argmin == doctest::Approx(0.2226).epsilon(2e-3));
  // The other basin alone (a range that excludes the global one).
  OptimizeOptions upper{.objective = Objective::Tm, .over = "kappa", .lo = 2, .hi = 50};
  const OptimizeResult u = run(p, upper);
  REQUIRE(u.converged());
  CHECK(u.interior_minima == 1);
  CHECK(u.argmin == doctest::Approx(11.10).epsilon(2e-3));
  CHECK(u.minimum > r.minimum);
}

TEST_CASE("a linear range (lo = 0) and the JSON layout") {
  OptimizeOptions o{.objective = Objective::Idg, .over = "lambda", .lo = 0, .hi = 5};
  const OptimizeResult r = run(Params{}, o);
  REQUIRE(r.converged());
  CHECK_FALSE(r.log_scale);
  OptimizeOptions g{.objective = Objective::Idg, .over = "lambda", .lo = 1e-3, .hi = 10};
  CHECK(r.argmin == doctest::Approx(run(Params{}, g).argmin).epsilon(1e-5));
  const auto j = to_json(r);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"objective", "over", "argmin", "minimum", "slope",
                                         "converged", "status", "message", "evaluations",
                                         "interior_minima", "range", "scale", "params"});
  CHECK(j["params"]["lambda"].get<double>() == r.argmin);
  CHECK(j["scale"] == "linear");
  CHECK(to_text(r).rfind("minimum idg = ", 0) == 0);
}

TEST_CASE("Brent stopped by its iteration limit is NotConverged with NaN argmin and minimum") {
  OptimizeOptions o{.objective = Objective::Idg, .over = "lambda", .lo = 1e-3, .hi = 10};
  o.max_iterations = 1;
  const OptimizeResult r = run(Params{}, o);
  CHECK(r.status == icl::numerics::Status::NotConverged);
  CHECK(std::isnan(r.argmin));
  CHECK(std::isnan(r.minimum));
  CHECK(r.message.find("bracket") != std::string::npos);
  CHECK(to_text(r) == "no minimum (not_converged): " + r.message + " (" +
                          std::to_string(r.evaluations) + " solves)\n");
}

TEST_CASE("validate() names the field") {
  const auto field_of = [](const OptimizeOptions& o, const Params& p = Params{}) {
    try {
      run(p, o);
    } catch (const icl::InvalidParams& e) {
      return e.field();
    }
    return std::string("none");
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(field_of({.over = "beta", .lo = 0.1, .hi = 1}) == "over");
  CHECK(field_of({.over = "lambda", .lo = 1, .hi = 0.5}) == "hi");
  CHECK(field_of({.over = "lambda", .lo = 1, .hi = 1}) == "hi");
  CHECK(field_of({.over = "lambda", .lo = -1, .hi = 1}) == "lo");
  CHECK(field_of({.over = "alpha", .lo = 0, .hi = 1}) == "lo");
  CHECK(field_of({.over = "rho", .lo = 0.1, .hi = 1.5}) == "hi");
  CHECK(field_of({.over = "lambda", .lo = 0.1, .hi = nan}) == "hi");
  CHECK(field_of({.over = "lambda", .lo = 0.1, .hi = INFINITY}) == "hi");
  CHECK(field_of({.over = "lambda", .lo = 0.1, .hi = 1, .scan_points = 2}) == "scan_points");
  CHECK(field_of({.over = "lambda", .lo = 0.1, .hi = 1, .bits = 60}) == "bits");
  // The saddle point needs lambda > 0 below the interpolation threshold tau = 1.
  Params below;
  below.tau = 0.5;
  CHECK(field_of({.over = "lambda", .lo = 0, .hi = 1}, below) == "lambda");
  CHECK_THROWS_AS(objective_from_string("bayes"), icl::InvalidParams);
  // 'shift' needs a shifted test protocol (docs/general_covariance.md §20).
  CHECK(field_of({.objective = Objective::Shift, .over = "lambda", .lo = 0.1, .hi = 1}) ==
        "objective");
  Params shifted;
  shifted.test_overlap = 0.5;
  CHECK(field_of({.objective = Objective::Shift, .over = "lambda", .lo = 0.1, .hi = 1},
                 shifted) == "none");
  // Default ranges: both ends NaN.
  CHECK(field_of({.over = "lambda"}) == "none");
}
