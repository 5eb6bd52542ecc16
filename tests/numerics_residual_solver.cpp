// Ceres residual solver, damped fixed point, bracketed root.
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/error.hpp"
#include "numerics/residual_solver.hpp"

using namespace icl::numerics;

TEST_CASE("solve_residual_system finds the root of a known system (numeric and analytic J)") {
  // F(x, y) = (x^2 + y^2 - 4, x - y): root (sqrt 2, sqrt 2) from (1, 0.5)
  ResidualSystem sys;
  sys.size = 2;
  sys.residual = [](const Eigen::VectorXd& x, Eigen::VectorXd& F) {
    F.resize(2);
    F << x[0] * x[0] + x[1] * x[1] - 4.0, x[0] - x[1];
    return true;
  };
  Eigen::VectorXd x0(2);
  x0 << 1.0, 0.5;
  SolveResult r = solve_residual_system(sys, x0);
  CHECK(r.status == Status::Converged);
  CHECK(r.residual_norm <= 1e-10);
  CHECK(std::abs(r.x[0] - std::sqrt(2.0)) < 1e-10);
  CHECK(std::abs(r.x[1] - std::sqrt(2.0)) < 1e-10);
  sys.jacobian = [](const Eigen::VectorXd& x, Eigen::VectorXd& F, Eigen::MatrixXd& J) {
    F.resize(2);
    F << x[0] * x[0] + x[1] * x[1] - 4.0, x[0] - x[1];
    J.resize(2, 2);
    J << 2 * x[0], 2 * x[1], 1, -1;
    return true;
  };
  r = solve_residual_system(sys, x0);
  CHECK(r.converged());
  CHECK(std::abs(r.x[0] - std::sqrt(2.0)) < 1e-10);
  // bounds select the other root (-sqrt 2, -sqrt 2)
  SolverOptions o;
  o.upper_bounds = Eigen::VectorXd::Constant(2, 0.0);
  o.lower_bounds = Eigen::VectorXd::Constant(2, -INFINITY);
  Eigen::VectorXd xm(2);
  xm << -1.0, -0.5;
  r = solve_residual_system(sys, xm, o);
  CHECK(r.converged());
  CHECK(std::abs(r.x[0] + std::sqrt(2.0)) < 1e-10);
}

TEST_CASE("solve_residual_system: no root -> NotConverged with the true residual") {
  ResidualSystem sys;
  sys.size = 1;
  sys.residual = [](const Eigen::VectorXd& x, Eigen::VectorXd& F) {
    F.resize(1);
    F[0] = x[0] * x[0] + 1.0;
    return true;
  };
  const SolveResult r = solve_residual_system(sys, Eigen::VectorXd::Constant(1, 0.7));
  CHECK(r.status == Status::NotConverged);
  CHECK(r.residual_norm == doctest::Approx(r.x[0] * r.x[0] + 1.0).epsilon(1e-15));
  CHECK(r.residual_norm >= 1.0);
  CHECK(r.residual_norm < 1.0 + 1e-6);  // Ceres reached the least-squares minimum x = 0
  CHECK(!r.message.empty());
}

TEST_CASE("solve_residual_system: F fails at x0 -> NumericalFailure, and domain back-off") {
  ResidualSystem sys;
  sys.size = 1;
  sys.residual = [](const Eigen::VectorXd& x, Eigen::VectorXd& F) {
    F.resize(1);
    if (x[0] <= 0.0) return false;  // log domain
    F[0] = std::log(x[0]) - 1.0;
    return true;
  };
  SolveResult r = solve_residual_system(sys, Eigen::VectorXd::Constant(1, -1.0));
  CHECK(r.status == Status::NumericalFailure);
  r = solve_residual_system(sys, Eigen::VectorXd::Constant(1, 0.05));
  CHECK(r.converged());
  CHECK(std::abs(r.x[0] - std::exp(1.0)) < 1e-9);
}

TEST_CASE("damped_fixed_point") {
  // x = cos x
  FixedPointMap g = [](const Eigen::VectorXd& x, Eigen::VectorXd& G) {
    G = x.array().cos();
    return true;
  };
  SolveResult r = damped_fixed_point(g, Eigen::VectorXd::Constant(1, 1.0));
  CHECK(r.converged());
  CHECK(std::abs(r.x[0] - 0.7390851332151607) < 1e-11);
  CHECK(r.residual_norm <= 1e-12);
  FixedPointOptions o;
  o.max_iterations = 3;
  r = damped_fixed_point(g, Eigen::VectorXd::Constant(1, 1.0), o);
  CHECK(r.status == Status::NotConverged);
  CHECK(r.iterations == 3);
  FixedPointMap bad = [](const Eigen::VectorXd&, Eigen::VectorXd&) { return false; };
  CHECK(damped_fixed_point(bad, Eigen::VectorXd::Zero(1)).status == Status::NumericalFailure);
}

TEST_CASE("bracketed_root grows the bracket, respects hard limits, throws without sign change") {
  int calls = 0;
  auto f = [&](double x) {
    ++calls;
    return x * x * x - 1000.0;
  };
  const ScalarRoot r = bracketed_root(f, 0.0, 1.0);  // root 10 outside the bracket
  CHECK(std::abs(r.x - 10.0) < 1e-13);
  CHECK(std::abs(r.f) < 1e-9);
  // hard limit below the root: no sign change can be found
  ScalarRootOptions o;
  o.hard_hi = 5.0;
  CHECK_THROWS_AS(bracketed_root(f, 0.0, 1.0, o), icl::NumericalError);
  CHECK_THROWS_AS(bracketed_root([](double x) { return x * x + 1.0; }, -1.0, 1.0), icl::NumericalError);
  // approaching a hard limit geometrically: 1/x - 1e6 has its root at 1e-6 near hard_lo = 0
  ScalarRootOptions p;
  p.hard_lo = 0.0;
  const ScalarRoot s = bracketed_root([](double x) { return 1.0 / x - 1e6; }, 0.5, 1.0, p);
  CHECK(std::abs(s.x - 1e-6) < 1e-18);
}

TEST_CASE("NumericalError: residual_norm is NaN unless given") {
  CHECK(std::isnan(icl::NumericalError("no residual").residual_norm()));
  CHECK(icl::NumericalError("with residual", 0.25).residual_norm() == 0.25);
  try {
    bracketed_root([](double x) { return x * x + 1.0; }, -1.0, 1.0);
    FAIL("no throw");
  } catch (const icl::NumericalError& e) {
    CHECK(std::isnan(e.residual_norm()));  // a failed bracket has no residual
  }
}
