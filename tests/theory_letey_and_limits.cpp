// The replica solution against an independent theory (Letey/Lu deterministic equivalent,
// docs/errors_phases.md §11) and against limits derived by hand (docs/model.md §5.3,
// docs/errors_phases.md §10).
#include <doctest/doctest.h>

#include <cmath>

#include "theory/lowrank.hpp"

using namespace icl::theory;

TEST_CASE("replica = Letey/Lu deterministic equivalent at lambda = 0, tau > 1 (1e-12)") {
  const Params points[] = {
      Params{},
      {.alpha = 8, .alpha_test = 2, .tau = 2.25, .kappa = 0.5, .rho = 0.9, .sigma = 0.3,
       .sigma_test = 0.5, .lambda = 0},
      {.alpha = 3, .alpha_test = -1, .tau = 1.5, .kappa = 2, .rho = 1.0, .sigma = 0.1,
       .sigma_test = 0, .lambda = 0},
      {.alpha = 0.5, .alpha_test = 1, .tau = 4, .kappa = 0.25, .rho = 0.3, .sigma = 1,
       .sigma_test = 0.3, .lambda = 0},
      {.alpha = 20, .alpha_test = -1, .tau = 1.1, .kappa = 1.0, .rho = 1.0, .sigma = 0.0,
       .sigma_test = 0, .lambda = 0},
  };
  for (const Params& p : points) {
    CAPTURE(p.alpha); CAPTURE(p.tau); CAPTURE(p.kappa); CAPTURE(p.rho);
    const Solution r = solve(p, {.method = Method::Reduced});
    const Solution s = solve(p, {.method = Method::Saddle});
    const Solution l = solve(p, {.method = Method::Letey});
    REQUIRE(r.converged());
    REQUIRE(s.converged());
    REQUIRE(l.converged());
    CHECK(std::abs(r.error.idg - l.error.idg) <= 1e-12 * std::max(1.0, l.error.idg));
    CHECK(std::abs(r.error.odg - l.error.odg) <= 1e-12 * std::max(1.0, l.error.odg));
    CHECK(std::abs(s.error.idg - l.error.idg) <= 1e-9 * std::max(1.0, l.error.idg));
    CHECK(std::abs(s.error.odg - l.error.odg) <= 1e-9 * std::max(1.0, l.error.odg));
  }
}

TEST_CASE("small-lambda replica approaches the Letey/Lu ridgeless branch below tau = 1") {
  // As lambda -> 0+ at tau < 1, xi = lambda/qh stays finite and solves Letey/Lu's
  // xi g(-xi - nu) = 1 - tau; the replica errors converge to the ridgeless ones at rate O(lambda)
  // (the constant grows near the interpolation peak tau -> 1).
  for (double tau : {0.3, 0.7, 0.95}) {
    Params p{.alpha = 2, .alpha_test = -1, .tau = tau, .kappa = 1.2, .rho = 0.6, .sigma = 0.3,
             .sigma_test = 0, .lambda = 0};
    const Solution l = solve(p, {.method = Method::Letey});
    REQUIRE(l.converged());
    double gaps[3];
    const double lambdas[3] = {1e-4, 1e-6, 1e-8};
    for (int i = 0; i < 3; ++i) {
      p.lambda = lambdas[i];
      const Solution s = solve(p, {.method = Method::Saddle});
      REQUIRE(s.converged());
      gaps[i] = std::abs(s.error.idg - l.error.idg) + std::abs(s.error.odg - l.error.odg) +
                std::abs(s.error.tm - l.error.tm);
      MESSAGE("tau " << tau << " lambda " << lambdas[i] << " gap " << gaps[i]);
    }
    CAPTURE(tau);
    // Linear rate: 100x smaller lambda, ~100x smaller gap (at least 50x).
    CHECK(gaps[1] < gaps[0] / 50);
    CHECK(gaps[2] < gaps[1] / 50);
    CHECK(gaps[2] < 1e-4 * (l.error.tm + l.error.idg + l.error.odg));
  }
}

TEST_CASE("Letey/Lu: the decomposition comes from the ridgeless limit and sums to the errors") {
  // docs/errors_phases.md §11.3: the order parameters, TM and the decomposition of Method::Letey
  // are the lambda -> 0+ limit of the reduced solution; IDG and ODG are Letey/Lu's formula. Both
  // sides of tau = 1.
  for (double tau : {0.6, 2.25}) {
    const Params p{.alpha = 2, .alpha_test = -1, .tau = tau, .kappa = 1.5, .rho = 0.9,
                   .sigma = 0.3, .sigma_test = 0, .lambda = 0};
    const Solution l = solve(p, {.method = Method::Letey});
    REQUIRE(l.converged());
    CAPTURE(tau);
    for (const Components* c : {&l.decomposition.tm, &l.decomposition.idg, &l.decomposition.odg}) {
      CHECK(c->algo > 0);
      CHECK(c->mem > 0);
      CHECK(c->structural > 0);
    }
    CHECK(l.decomposition.tm.total() == doctest::Approx(l.error.tm).epsilon(1e-10));
    CHECK(l.decomposition.idg.total() == doctest::Approx(l.error.idg).epsilon(1e-10));
    CHECK(l.decomposition.odg.total() == doctest::Approx(l.error.odg).epsilon(1e-10));
  }
}

TEST_CASE("rho = 1 (isotropic tasks): IDG = ODG and m0 = mbar") {
  for (double lambda : {0.0, 0.3}) {
    const Params p{.alpha = 2, .alpha_test = -1, .tau = 2.5, .kappa = 0.7, .rho = 1.0,
                   .sigma = 0.4, .sigma_test = 0.1, .lambda = lambda};
    const Solution s = solve(p);
    REQUIRE(s.converged());
    CHECK(s.error.idg == doctest::Approx(s.error.odg).epsilon(1e-12));
    CHECK(s.order.m0 == doctest::Approx(s.order.mbar).epsilon(1e-12));
    CHECK(s.error.tm < s.error.idg);  // memorized tasks are easier
  }
}

TEST_CASE("kappa, tau -> infinity: Bayes shrinkage onto the subspace") {
  // The oracle of docs/model.md §5.3.
  // Gamma -> c P_A, c = 1/(1 + rho nu): IDG -> sigma^2 + rho nu/(1 + rho nu),
  // ODG -> sigma^2 + (1 - rho) + rho [(1 - c)^2 + nu c^2]  (sigma_t = sigma, alpha_t = alpha).
  for (double rho : {0.2, 0.6, 1.0}) {
    const double sigma = 0.5, alpha = 1.5;
    const double nu = (1 + sigma * sigma) / alpha, c = 1 / (1 + rho * nu);
    const double idg_inf = sigma * sigma + rho * nu / (1 + rho * nu);
    const double odg_inf = sigma * sigma + (1 - rho) + rho * ((1 - c) * (1 - c) + nu * c * c);
    double prev_gap = 1e300;
    for (double kappa : {1e2, 1e3, 1e4}) {
      const Params p{.alpha = alpha, .alpha_test = -1, .tau = kappa * kappa, .kappa = kappa,
                     .rho = rho, .sigma = sigma, .sigma_test = sigma, .lambda = 0};
      const Solution s = solve(p);
      REQUIRE(s.converged());
      const double gap = std::abs(s.error.idg - idg_inf) + std::abs(s.error.odg - odg_inf);
      CAPTURE(rho); CAPTURE(kappa); CAPTURE(gap);
      CHECK(gap < 10.0 / kappa);  // the finite-kappa correction is O(1/kappa)
      CHECK(gap < prev_gap);
      prev_gap = gap;
    }
  }
}

TEST_CASE("alpha -> infinity limits at lambda = 0") {
  // docs/errors_phases.md §10.2.
  const double tau = 2.0, sigma = 0.3;
  for (double rho : {0.3, 0.9}) {
    const double kappa = 0.6, k = std::min(rho, kappa);
    const double alpha = 1e6;
    const Params p{.alpha = alpha, .alpha_test = -1, .tau = tau, .kappa = kappa, .rho = rho,
                   .sigma = sigma, .sigma_test = 0, .lambda = 0};
    const Solution s = solve(p, {.method = Method::Reduced});
    REQUIRE(s.converged());
    CAPTURE(rho);
    CHECK(s.order.m == doctest::Approx(1.0).epsilon(1e-4));
    CHECK(s.order.mbar == doctest::Approx(k).epsilon(1e-4));
    CHECK(s.order.m0 == doctest::Approx(k / rho).epsilon(1e-4));
    CHECK(s.order.q == doctest::Approx(1 + sigma * sigma * k / (tau - 1)).epsilon(1e-3));
    // qbar grows linearly in alpha with slope sigma^2 (1 - k)/((1 + sigma^2)(tau - 1)).
    const double slope = sigma * sigma * (1 - k) / ((1 + sigma * sigma) * (tau - 1));
    CHECK(s.order.qbar / alpha == doctest::Approx(slope).epsilon(1e-3));
  }
}

TEST_CASE("phase transition at rho = kappa, sigma = 0, alpha -> infinity") {
  // docs/errors_phases.md §10.1-§10.2.
  const double kappa = 0.5, tau = 2.25, alpha = 1e7;
  for (double rho : {0.2, 0.4, 0.6, 0.9}) {
    const Params p{.alpha = alpha, .alpha_test = -1, .tau = tau, .kappa = kappa, .rho = rho,
                   .sigma = 0, .sigma_test = 0, .lambda = 0};
    const Solution s = solve(p, {.method = Method::Reduced});
    REQUIRE(s.converged());
    const double expected = rho < kappa ? 0.0 : (1 - kappa / rho) * (1 + kappa / (tau - 1));
    CAPTURE(rho);
    CHECK(std::abs(s.error.idg - expected) < 1e-3);
    CHECK(regime(p) == (rho < kappa ? Regime::TaskRich : Regime::TaskPoor));
    CHECK(atom_mass(p) == doctest::Approx(std::max(0.0, 1 - kappa / rho)));
  }
  CHECK(critical_rho(Params{.kappa = 0.5}) == 0.5);
  CHECK(has_transition(Params{.kappa = 0.5}));
  CHECK_FALSE(has_transition(Params{.kappa = 1.5}));
}

TEST_CASE("interpolation peak: the ridgeless error grows without bound as tau -> 1") {
  Params p{.alpha = 2, .alpha_test = -1, .tau = 1.0, .kappa = 1.5, .rho = 0.9, .sigma = 0.3,
           .sigma_test = 0, .lambda = 0};
  double below = 0, above = 0;
  for (double eps : {1e-1, 1e-2, 1e-3}) {
    p.tau = 1 - eps;
    const double b = solve(p, {.method = Method::Letey}).error.odg;
    p.tau = 1 + eps;
    const double a = solve(p, {.method = Method::Letey}).error.odg;
    CHECK(b > below);
    CHECK(a > above);
    below = b;
    above = a;
  }
  CHECK(below > 10);
  CHECK(above > 10);
}
