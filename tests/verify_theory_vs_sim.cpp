// Theory vs simulation at small D, and the 1/D extrapolation machinery.
#include <doctest/doctest.h>

#include <cmath>

#include "verify/lowrank/compare.hpp"

using namespace icl::verify::lowrank;
using icl::theory::Params;

TEST_CASE("weighted 1/D extrapolation recovers a + b/D and its standard error") {
  const std::vector<double> dims{20, 30, 40, 60};
  std::vector<double> means, sems;
  for (double D : dims) {
    means.push_back(0.5 + 2.0 / D);
    sems.push_back(0.01);
  }
  const Extrapolation e = extrapolate_inverse_d(dims, means, sems);
  CHECK(e.value == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(e.slope == doctest::Approx(2.0).epsilon(1e-10));
  CHECK(e.chi2 < 1e-20);
  // se(a) from (J^T W J)^{-1}: compare with the closed form for equal weights.
  double sx = 0, sxx = 0;
  for (double D : dims) {
    sx += 1 / D;
    sxx += 1 / (D * D);
  }
  const double n = double(dims.size());
  const double var_a = 0.01 * 0.01 * sxx / (n * sxx - sx * sx);
  CHECK(e.se == doctest::Approx(std::sqrt(var_a)).epsilon(1e-10));
}

// Paper point (alpha 2, tau 2.25, kappa 1.5, rho 0.9, sigma 0.3, lambda 0), D = 16..32.
// Tolerance for each quantity at fixed D: 4 standard errors (statistical) plus an O(1/D)
// allowance 3|theory|/D: docs/simulation.md §14.4 puts D = 60 simulations 1-5% away from theory,
// i.e. a finite-size bias coefficient of at most 0.05 * 60 = 3 in relative units; the test fails if
// the simulation is off by more than that scaling or beyond its statistical error. The 1/D
// extrapolation must land within 3 se + 3% of the theory (the O(1/D^2) curvature left in a
// linear fit over D = 16..32 is of the order of the squared relative bias, (3/16)^2 ~ 3%).
TEST_CASE("small-D simulation agrees with the replica theory (paper point)") {
  const Params p{.alpha = 2, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3};
  GridPoint gp{"paper", p};
  VerifyOptions o;
  o.dims = {16, 24, 32};
  o.seeds = {160, 80, 40};
  o.k_se = 3.0;
  o.rel_tol = 0.03;
  const PointResult r = verify_point(gp, o);
  REQUIRE(r.theory.converged());
  for (const auto& row : r.rows) {
    if (!row.enforced) {
      MESSAGE(row.quantity << ": theory " << row.theory << ", extrapolated "
                           << row.extrapolated.value << " +- " << row.extrapolated.se);
      continue;
    }
    for (const auto& d : row.dims) {
      INFO(row.quantity << " D=" << d.dim << ": sim " << d.mean << " +- " << d.sem << ", theory "
                        << row.theory);
      CHECK(std::abs(d.mean - row.theory) <= 4 * d.sem + 3.0 * std::abs(row.theory) / d.dim);
    }
    INFO(row.quantity << ": extrapolated " << row.extrapolated.value << " +- "
                      << row.extrapolated.se << ", theory " << row.theory);
    CHECK(row.passed());
  }
}
