// Continuation along a path: warm starts, halvings, failures recorded.
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/continuation.hpp"

using namespace icl::numerics;

namespace {
// A toy solver that converges only when started within `radius` of the solution x*(t) = t^2.
PathSolver toy(double radius, int& calls) {
  return [radius, &calls](double t, const Eigen::VectorXd& x0) {
    ++calls;
    SolveResult r;
    const double xs = t * t;
    if (t > 10.0 || std::abs(x0[0] - xs) > radius) {  // t > 10: no solution at all
      r.status = Status::NotConverged;
      r.x = x0;
      r.residual_norm = std::abs(x0[0] - xs) + 1.0;
      return r;
    }
    r.status = Status::Converged;
    r.x = Eigen::VectorXd::Constant(1, xs);
    return r;
  };
}
}  // namespace

TEST_CASE("continuation: warm starts, halvings and recorded failures") {
  int calls = 0;
  const auto cold = [](double) { return Eigen::VectorXd::Constant(1, 0.0); };
  // steps of 1 in t near t = 4 move x* by ~9 > radius 3: needs halvings
  const std::vector<double> path = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 11.0, 6.0};
  const auto pts = continuation(path, toy(3.0, calls), cold);
  REQUIRE(pts.size() == path.size());
  CHECK(pts[0].result.converged());
  CHECK(pts[0].halvings == 0);
  CHECK(pts[1].result.converged());
  CHECK(pts[2].result.converged());
  CHECK(pts[2].halvings == 0);    // |4 - 1| = 3 <= radius from the warm start
  CHECK(pts[3].halvings == 1);    // 9 - 4 = 5 > 3 -> half steps (2.5 -> 6.25: 2.25, 2.75)
  CHECK(pts[4].halvings >= 1);
  CHECK(pts[4].result.converged());
  CHECK(pts[5].result.converged());
  CHECK(std::abs(pts[5].result.x[0] - 25.0) < 1e-15);
  CHECK(!pts[6].result.converged());  // t = 11 has no solution: recorded, not skipped
  CHECK(pts[6].t == 11.0);
  CHECK(pts[6].result.residual_norm > 0.0);
  CHECK(pts[7].result.converged());  // continues from t = 5, the last converged point
  CHECK(std::abs(pts[7].result.x[0] - 36.0) < 1e-15);

  // without warm starts every point after the first few fails from the cold start
  ContinuationOptions cold_only;
  cold_only.warm_start = false;
  cold_only.max_halvings = 0;
  const auto c2 = continuation({0.0, 1.0, 3.0}, toy(3.0, calls), cold, cold_only);
  CHECK(c2[1].result.converged());
  CHECK(!c2[2].result.converged());
}
