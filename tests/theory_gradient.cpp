// Exact derivatives through the fixed point (docs/sensitivity.md §22, theory/sensitivity.hpp):
// every output's derivative in every parameter against central differences of the solver
// itself (five-point stencil, steps of docs/sensitivity.md §22.4), the saddle point's against
// the scalar reduction's, the Letey/Lu method's against its own differences, and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "theory/lowrank.hpp"
#include "theory/param_path.hpp"
#include "theory/quantity.hpp"
#include "theory/sensitivity.hpp"

using namespace icl::theory;

namespace {

// The points: both phases, both sides of tau = 1 with a ridge, the ridgeless saddle point, an
// explicit test context with test noise, a shifted protocol, a task spectrum with test levels.
std::vector<std::pair<std::string, Params>> points() {
  Params paper;  // alpha 2, tau 2.25, kappa 1.5, rho 0.9, sigma 0.3, lambda 0
  Params poor{.alpha = 3, .tau = 1.8, .kappa = 0.5, .rho = 0.8, .sigma = 0.2, .lambda = 0.05};
  Params ridge{.alpha = 1.5, .tau = 0.6, .kappa = 1.2, .rho = 0.5, .sigma = 0.4, .lambda = 0.1};
  Params test{.alpha = 2, .alpha_test = 4, .tau = 1.5, .kappa = 1.0, .rho = 0.6, .sigma = 0.3,
              .sigma_test = 0.2, .lambda = 0.05};
  Params shift = paper;
  shift.lambda = 0.02;
  shift.test_overlap = 0.3;
  Params spectrum{.alpha = 2, .tau = 2.25, .kappa = 0.8, .sigma = 0.3, .lambda = 0.1};
  spectrum.task_spectrum = {{0.5, 0.6}, {1.75, 0.4}};
  spectrum.test_levels = {1.5, 0.25};
  return {{"paper", paper}, {"task-poor with ridge", poor}, {"tau < 1 with ridge", ridge},
          {"alpha_test, sigma_test", test}, {"test overlap", shift}, {"task spectrum", spectrum}};
}

// d quantity / d parameter by the five-point stencil (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h,
// h = step * max(1, |theta|): truncation O(h^4), rounding (value noise) / h. Parameters are
// moved as Params::set moves them; alpha_test that follows alpha moves with it (a copy of p
// keeps alpha_test < 0).
double central(const Params& p, const std::string& quantity, const std::string& parameter,
               const SolveOptions& o, double step) {
  const double theta = p.get(parameter);
  const double h = step * std::max(1.0, std::abs(theta));
  const Quantity& q = find_quantity(quantity);
  const auto f = [&](double x) {
    Params moved = p;
    moved.set(parameter, x);
    const Solution s = solve(moved, o);
    REQUIRE(s.converged());
    return q.value(s);
  };
  return (f(theta - 2 * h) - 8 * f(theta - h) + 8 * f(theta + h) - f(theta + 2 * h)) / (12 * h);
}

}  // namespace

TEST_CASE("gradient: every output's derivative equals the central differences of the reduced solver") {
  // The reduced solver is a closed form with a root solved to the last bit: its values carry
  // about 1e-15 relative noise, so steps of 1e-3 give the derivative to about 1e-10 (rounding
  // 1e-12, truncation h^4 f^(5) ~ 1e-12). Tolerance 1e-7 relative + 1e-9.
  SolveOptions o{.method = Method::Reduced};
  o.gradient = true;
  for (const auto& [label, p] : points()) {
    CAPTURE(label);
    const Solution s = solve(p, o);
    REQUIRE(s.converged());
    REQUIRE(s.gradient);
    const Gradient& g = *s.gradient;
    REQUIRE(g.converged());
    int checked = 0;
    double worst = 0;
    for (const std::string& param : g.parameters) {
      // At the edge of the domain (lambda, sigma, sigma_test at 0) central differences do not
      // exist; the one-sided derivative is checked below.
      if (p.get(param) == 0) continue;
      for (const std::string& out : g.outputs) {
        const double exact = g.of(out, param);
        const double fd = central(p, out, param, o, 1e-3);
        CAPTURE(out);
        CAPTURE(param);
        CHECK(std::abs(exact - fd) <= 1e-7 * std::abs(fd) + 1e-9);
        worst = std::max(worst, std::abs(exact - fd) / (std::abs(fd) + 1e-2));
        ++checked;
      }
    }
    CHECK(checked > 100);
    MESSAGE(label << ": " << checked << " derivatives, largest |exact - fd| / (|fd| + 0.01) " << worst);
  }
}

TEST_CASE("gradient: the saddle point's derivatives are the scalar reduction's to 1e-8") {
  // Two routes to the same root: the 10-unknown saddle map with its 10 x 10 linear solve, and
  // the scalar equation in r = 1/qh. Their derivatives agree to the saddle solve's own error
  // (its residual tolerance 1e-10 times the condition number, 21 to 175 here).
  SolveOptions saddle;
  saddle.gradient = true;
  SolveOptions reduced = saddle;
  reduced.method = Method::Reduced;
  for (const auto& [label, p] : points()) {
    CAPTURE(label);
    const Solution a = solve(p, saddle), b = solve(p, reduced);
    REQUIRE(a.gradient->converged());
    REQUIRE(b.gradient->converged());
    CHECK(a.gradient->condition_number < 1e3);
    CHECK(a.gradient->outputs == b.gradient->outputs);
    CHECK(a.gradient->parameters == b.gradient->parameters);
    const Eigen::MatrixXd& x = a.gradient->values;
    const Eigen::MatrixXd& y = b.gradient->values;
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) {
        CAPTURE(a.gradient->outputs[std::size_t(i)]);
        CAPTURE(a.gradient->parameters[std::size_t(j)]);
        CHECK(std::abs(x(i, j) - y(i, j)) <= 1e-8 * std::max(1.0, std::abs(y(i, j))));
      }
  }
}

TEST_CASE("gradient: the saddle solver's own central differences, and the one-sided edges") {
  // The saddle solver's values carry its residual tolerance (1e-10): with steps of 1e-3 its
  // differences are good to about 1e-7, the tolerance here 1e-5 relative + 1e-7. At lambda = 0
  // and sigma_test = 0 (the edges of the domain) the gradient is the one-sided derivative:
  // checked by (-3 f(0) + 4 f(h) - f(2h)) / 2h with h = 1e-4 (truncation O(h^2)), 1e-5.
  const Params p;
  SolveOptions o;
  o.gradient = true;
  const Solution s = solve(p, o);
  const Gradient& g = *s.gradient;
  for (const std::string out : {"tm", "idg", "odg", "m0", "q", "bayes_idg"})
    for (const std::string param : {"alpha", "tau", "gamma", "kappa", "rho", "sigma"}) {
      CAPTURE(out);
      CAPTURE(param);
      const double fd = central(p, out, param, SolveOptions{}, 1e-3);
      CHECK(std::abs(g.of(out, param) - fd) <= 1e-5 * std::abs(fd) + 1e-7);
    }
  for (const std::string param : {"lambda", "sigma_test"}) {
    const double h = 1e-4;
    for (const std::string out : {"tm", "idg", "odg", "bayes_idg"}) {
      const auto f = [&](double x) {
        Params moved = p;
        moved.set(param, x);
        return find_quantity(out).value(solve(moved, SolveOptions{.method = Method::Reduced}));
      };
      const double fd = (-3 * f(0) + 4 * f(h) - f(2 * h)) / (2 * h);
      CAPTURE(out);
      CAPTURE(param);
      CHECK(std::abs(g.of(out, param) - fd) <= 1e-5 * std::abs(fd) + 1e-6);
    }
  }
  // The errors depend on sigma_test through sigma_test^2 only: zero slope at 0.
  CHECK(g.of("idg", "sigma_test") == 0);
  CHECK(g.of("bayes_odg", "sigma_test") == 0);
}

TEST_CASE("gradient: the Letey/Lu method differentiates its ridgeless root") {
  // tau < 1 (xi > 0 moves with the parameters) and tau > 1 (xi = 0); lambda is not a column
  // (the method is ridgeless); with a shifted protocol too. The Letey solver is a closed form
  // around a root solved to the last bit: 1e-7 relative + 1e-9 against its differences.
  SolveOptions o{.method = Method::Letey};
  o.gradient = true;
  Params below{.alpha = 2, .tau = 0.6, .kappa = 1.5, .rho = 0.9, .sigma = 0.3, .lambda = 0};
  below.test_overlap = 0.5;
  Params above{.alpha = 1.5, .tau = 2.0, .kappa = 0.5, .rho = 0.7, .sigma = 0.2, .lambda = 0};
  for (const Params& p : {below, above}) {
    const Solution s = solve(p, o);
    REQUIRE(s.converged());
    const Gradient& g = *s.gradient;
    REQUIRE(g.converged());
    CHECK(std::find(g.parameters.begin(), g.parameters.end(), "lambda") == g.parameters.end());
    CHECK(std::find(g.outputs.begin(), g.outputs.end(), "chi") == g.outputs.end());
    for (const std::string& param : g.parameters) {
      if (p.get(param) == 0) continue;
      for (const std::string& out : g.outputs) {
        CAPTURE(out);
        CAPTURE(param);
        const double fd = central(p, out, param, o, 1e-3);
        CHECK(std::abs(g.of(out, param) - fd) <= 1e-7 * std::abs(fd) + 1e-9);
      }
    }
  }
}

TEST_CASE("gradient: no number where the root is not there or the solve is ill-conditioned") {
  SolveOptions o;
  o.gradient = true;
  // Not converged (kappa 1e-300: the spectrum of S is out of reach of its quadrature, a
  // numerical failure): NaN, the reason.
  const Solution failed = solve(Params{.kappa = 1e-300}, o);
  REQUIRE(!failed.converged());
  REQUIRE(failed.gradient);
  CHECK(failed.gradient->status == icl::numerics::Status::NotConverged);
  CHECK(std::isnan(failed.gradient->of("idg", "alpha")));
  CHECK(failed.gradient->message.find("did not converge") != std::string::npos);
  // A singular or ill-conditioned linear solve is NaN with the condition number, never a number.
  Eigen::MatrixXd J(2, 2), B(2, 1);
  J << 1, 1, 1, 1 + 1e-14;
  B << 1, 2;
  const LinearResponse lr = linear_response(J, B, Eigen::VectorXd::Ones(2));
  CHECK(!lr.ok);
  CHECK(lr.condition_number > kMaxGradientCondition);
  CHECK(std::isnan(lr.dx(0, 0)));
  CHECK(lr.message.find("condition number") != std::string::npos);
  // At very large alpha the saddle point's 10 x 10 solve is ill-conditioned (condition number
  // growing as alpha^2: 5.8e13 at alpha = 1e6, as measured); the derivatives then come from the
  // scalar reduction (the same root), and say so: equal to the reduced method's.
  const Params huge{.alpha = 1e6, .tau = 2.25, .kappa = 0.3, .rho = 0.3, .sigma = 0, .lambda = 0};
  const Solution s = solve(huge, o);
  REQUIRE(s.converged());
  CHECK(s.gradient->converged());
  CHECK(s.gradient->condition_number > kMaxGradientCondition);
  CHECK(s.gradient->message.find("ill-conditioned") != std::string::npos);
  const Solution r = solve(huge, SolveOptions{.method = Method::Reduced, .gradient = true});
  CHECK(s.gradient->of("idg", "rho") ==
        doctest::Approx(r.gradient->of("idg", "rho")).epsilon(1e-8));
  // Names: an unknown output or parameter is InvalidParams naming the field.
  const Solution ok = solve(Params{}, o);
  CHECK_THROWS_WITH_AS(ok.gradient->of("idgg", "alpha"), doctest::Contains("output"),
                       icl::InvalidParams);
  CHECK_THROWS_WITH_AS(ok.gradient->of("idg", "beta"), doctest::Contains("parameter"),
                       icl::InvalidParams);
  // Without a shifted protocol or a task spectrum: no shift rows, no test_overlap column.
  CHECK(std::find(ok.gradient->outputs.begin(), ok.gradient->outputs.end(), "shift") ==
        ok.gradient->outputs.end());
  CHECK(ok.gradient->parameters ==
        std::vector<std::string>{"alpha", "alpha_test", "tau", "gamma", "kappa", "rho", "sigma",
                                 "sigma_test", "lambda"});
  // Without SolveOptions::gradient, no gradient.
  CHECK(!solve(Params{}).gradient);
}

TEST_CASE("gradient: alpha moves alpha_test with it only when alpha_test follows alpha") {
  SolveOptions o;
  o.gradient = true;
  Params follows;  // alpha_test = alpha
  Params fixed = follows;
  fixed.alpha_test = follows.alpha;  // the same point, alpha_test explicit
  const Gradient a = *solve(follows, o).gradient, b = *solve(fixed, o).gradient;
  // Same point, same partials in alpha_test; alpha's column adds alpha_test's when it follows.
  CHECK(a.of("idg", "alpha_test") == doctest::Approx(b.of("idg", "alpha_test")).epsilon(1e-12));
  CHECK(a.of("idg", "alpha") ==
        doctest::Approx(b.of("idg", "alpha") + b.of("idg", "alpha_test")).epsilon(1e-12));
  CHECK(a.of("bayes_idg", "alpha") == doctest::Approx(b.of("bayes_idg", "alpha_test")).epsilon(1e-12));
  // gamma = tau / kappa at fixed kappa: kappa times the tau column.
  CHECK(a.of("odg", "gamma") == doctest::Approx(follows.kappa * a.of("odg", "tau")).epsilon(1e-14));
}
