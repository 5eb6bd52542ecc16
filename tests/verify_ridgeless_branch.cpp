// Below the interpolation threshold (tau < 1) at lambda = 0 the minimum-norm Gamma is the
// lambda -> 0+ limit of ridge regression; its D -> infinity errors are the ridgeless Letey/Lu
// branch (IDG, ODG) and the ridgeless limit of the replica solution (TM, derived here).
#include <doctest/doctest.h>

#include <cmath>

#include "verify/lowrank/compare.hpp"

using namespace icl::verify::lowrank;

TEST_CASE("minimum-norm simulation at tau < 1 agrees with the ridgeless theory") {
  icl::theory::Params p;  // paper point but tau = 0.6 (N = 0.6 D^2 < D^2), lambda = 0
  p.tau = 0.6;
  REQUIRE(ridgeless_point(p));
  VerifyOptions o;
  o.dims = {16, 24, 32};
  o.seeds = {96, 48, 24};
  // Same rule as the small-D paper-point test (verify_theory_vs_sim.cpp): 3 se + 3% of the
  // theory for the O(1/D^2) curvature a linear fit over D = 16..32 leaves.
  o.rel_tol = 0.03;
  const PointResult r = verify_point({"ridgeless", p}, o);
  REQUIRE(r.theory.converged());
  CHECK(r.theory.method == icl::theory::Method::Letey);
  int enforced = 0;
  for (const auto& row : r.rows) {
    if (!row.enforced) continue;
    ++enforced;
    INFO(row.quantity << ": theory " << row.theory << ", extrapolated " << row.extrapolated.value
                      << " +- " << row.extrapolated.se);
    CHECK(row.passed());
    // Finite D sits above the theory (positive bias), as everywhere else.
    if (row.quantity.rfind("error.", 0) == 0) CHECK(row.dims.back().mean > row.theory);
  }
  CHECK(enforced >= 3);
}
