// Sweeps with continuation and phase grids.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "theory/phase_grid.hpp"
#include "theory/sweep.hpp"

using namespace icl::theory;

TEST_CASE("a warm-started sweep gives the same points as independent solves") {
  const Params base;
  const auto alphas = logspace(0.2, 50, 25);
  const auto curve = sweep(base, "alpha", alphas);
  REQUIRE(curve.size() == alphas.size());
  for (std::size_t i = 0; i < alphas.size(); ++i) {
    Params p = base;
    p.alpha = alphas[i];
    const Solution s = solve(p, {.method = Method::Reduced});
    REQUIRE(curve[i].converged());
    CHECK(curve[i].params.alpha == alphas[i]);
    CHECK(curve[i].error.idg == doctest::Approx(s.error.idg).epsilon(1e-9));
    CHECK(curve[i].error.odg == doctest::Approx(s.error.odg).epsilon(1e-9));
  }
}

TEST_CASE("sweeps accept gamma (keeping kappa, setting tau) and alpha_test") {
  const auto gammas = linspace(1.0, 3.0, 5);
  const auto curve = sweep(Params{}, "gamma", gammas);
  for (std::size_t i = 0; i < gammas.size(); ++i) {
    CHECK(curve[i].params.tau == doctest::Approx(gammas[i] * 1.5));
    CHECK(curve[i].converged());
  }
  const auto ratio = sweep(Params{}, "alpha_test", linspace(0.2, 8, 5));
  for (const auto& s : ratio) CHECK(s.converged());
  // The test context only enters through v qbar: longer test context, lower error.
  CHECK(ratio.back().error.idg < ratio.front().error.idg);
}

TEST_CASE("an invalid point in a sweep is an error naming it, not a silent skip") {
  CHECK_THROWS_AS(sweep(Params{}, "rho", linspace(0.5, 1.2, 4)), icl::InvalidParams);
  CHECK_THROWS_AS(sweep(Params{}, "tau", linspace(0.5, 2, 4)), icl::InvalidParams);  // lambda 0
  CHECK_THROWS_AS(sweep(Params{}, "nonsense", linspace(0.5, 2, 4)), icl::InvalidParams);
  // The ridgeless theory covers tau < 1 at lambda = 0.
  SweepOptions so;
  so.solve.method = Method::Letey;
  const auto curve = sweep(Params{}, "tau", {0.5, 0.8, 1.5, 2}, so);
  for (const auto& s : curve) CHECK(s.converged());
}

TEST_CASE("phase grid: regimes and results independent of the thread count") {
  const auto rhos = linspace(0.1, 1.0, 7), kappas = linspace(0.25, 2.0, 6);
  PhaseOptions one;
  one.threads = 1;
  PhaseOptions two;
  two.threads = 2;
  const auto a = phase_grid(Params{}, "rho", rhos, "kappa", kappas, one);
  const auto b = phase_grid(Params{}, "rho", rhos, "kappa", kappas, two);
  REQUIRE(a.size() == rhos.size() * kappas.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    REQUIRE(a[k].converged());
    CHECK(a[k].error.idg == b[k].error.idg);  // bit for bit
    CHECK(a[k].params.rho == rhos[k / kappas.size()]);
    CHECK(a[k].params.kappa == kappas[k % kappas.size()]);
    CHECK((regime(a[k].params) == Regime::TaskRich) == (a[k].params.rho < a[k].params.kappa));
  }
}

TEST_CASE("solve_points: each point is its own solve, for any thread count; bad points named") {
  std::vector<Params> points;
  for (double a : {0.5, 2.0, 6.0})
    for (double r : {0.2, 0.9}) points.push_back(Params{.alpha = a, .rho = r});
  PhaseOptions one, two;
  one.threads = 1;
  two.threads = 2;
  const auto a = solve_points(points, one);
  const auto b = solve_points(points, two);
  REQUIRE(a.size() == points.size());
  for (std::size_t k = 0; k < points.size(); ++k) {
    const Solution s = solve(points[k]);
    CHECK(a[k].converged() == s.converged());
    // The same computation from the same closed-form start: bit for bit.
    CHECK(a[k].error.idg == s.error.idg);
    CHECK(b[k].error.idg == s.error.idg);
    CHECK(b[k].order.q0 == s.order.q0);
  }
  points[3].rho = 1.5;
  try {
    solve_points(points, one);
    FAIL("an invalid point must throw");
  } catch (const icl::InvalidParams& e) {
    CHECK(e.field() == "rho");
    CHECK(std::string(e.what()).find("point 3") != std::string::npos);
  }
}

TEST_CASE("solve_points: a progress function that throws cancels the remaining points") {
  std::vector<Params> points(40);
  for (std::size_t k = 0; k < points.size(); ++k) points[k].alpha = 0.5 + 0.1 * double(k);
  for (int threads : {1, 2}) {
    PhaseOptions o;
    o.threads = threads;
    std::size_t reports = 0;
    const auto progress = [&](std::size_t done, std::size_t, const std::string&) {
      ++reports;
      if (done == 3) throw std::runtime_error("stop");
    };
    CHECK_THROWS_WITH_AS(solve_points(points, o, progress), "stop", std::runtime_error);
    CHECK(reports == 3);  // no report after the cancelling one
  }
}
