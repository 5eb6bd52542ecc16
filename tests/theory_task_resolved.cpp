// The task-resolved deterministic equivalent (docs/finite_dim.md §21.6): an independent formulation
// of the low-rank theory, task by task; with every task alike it must be the saddle point.
#include <cmath>

#include <doctest/doctest.h>

#include "numerics/error.hpp"
#include "theory/task_resolved.hpp"

using namespace icl::theory;

namespace {
// With every task alike the task-resolved system is the saddle point.
void check_equal_tasks(const Params& p) {
  const Solution s = solve(p);
  REQUIRE(s.converged());
  const TaskResolvedResult t = solve_task_resolved(p, s);
  REQUIRE(t.converged());
  CHECK(t.error.tm == doctest::Approx(s.error.tm).epsilon(1e-9));
  CHECK(t.error.idg == doctest::Approx(s.error.idg).epsilon(1e-9));
  CHECK(t.error.odg == doctest::Approx(s.error.odg).epsilon(1e-9));
  CHECK(t.order.q == doctest::Approx(s.order.q).epsilon(1e-9));
  CHECK(t.order.m0 == doctest::Approx(s.order.m0).epsilon(1e-9));
  CHECK(t.order.q0 == doctest::Approx(s.order.q0).epsilon(1e-9));
  CHECK(t.order.chibar == doctest::Approx(s.order.chibar).epsilon(1e-9));
}
}  // namespace

TEST_CASE("task_resolved_with_equal_tasks_is_the_saddle_point") {
  // Both sides of rho = kappa, tau on both sides of 1 (lambda > 0 below), alpha_test and
  // sigma_test: the task-resolved system (Sherman-Morrison per task, a scalar deterministic
  // equivalent on span(A)) and the ten-unknown saddle point agree to the solvers' tolerances.
  const Params paper, poor{.kappa = 0.5}, ridge{.tau = 0.6, .rho = 0.5, .lambda = 0.1};
  const Params shifted{.alpha = 1.5, .alpha_test = 1, .tau = 0.8, .kappa = 0.4, .rho = 0.8,
                       .sigma = 0.2, .sigma_test = 0.1, .lambda = 0.02};
  for (const Params& p : {paper, poor, ridge, shifted}) check_equal_tasks(p);
}

TEST_CASE("task_resolved_unequal_tasks_move_the_errors_and_bad_laws_are_refused") {
  Params p;
  const Solution s = solve(p);
  const TaskResolvedResult equal = solve_task_resolved(p, s);
  const TaskResolvedResult spread = solve_task_resolved(p, s, DiscreteLaw{{0.8, 1.2}, {0.5, 0.5}});
  REQUIRE(spread.converged());
  CHECK(spread.error.idg > equal.error.idg);  // heterogeneous norms cost (docs/finite_dim.md §21.7)
  CHECK_THROWS_AS(solve_task_resolved(p, s, DiscreteLaw{{1.0}, {0.5}}), icl::InvalidParams);
  CHECK_THROWS_AS(solve_task_resolved(p, s, DiscreteLaw{{-1.0, 3.0}, {0.5, 0.5}}),
                  icl::InvalidParams);
}

TEST_CASE("task_resolved_with_equal_tasks_is_the_saddle_point_for_a_general_task_spectrum") {
  // docs/finite_dim.md §21.15: the deterministic equivalent (c + Phi Sigma)^{-1} level by level;
  // with every task alike the saddle point of the generalized Marchenko-Pastur law and the
  // deterministic equivalent of docs/general_covariance.md §12 (the verify grid's general point,
  // a power law at kappa > 1, and a tau < 1 ridge point).
  Params general{.alpha = 2, .tau = 2.25, .kappa = 0.8, .rho = 1, .sigma = 0.3, .lambda = 0.1};
  general.task_spectrum = low_rank_plus_complement_spectrum(0.4, 0.2);
  Params power = general;
  power.kappa = 1.5;
  power.task_spectrum = power_law_spectrum(1.0, 4);
  Params ridge = general;
  ridge.tau = 0.6;
  for (const Params& p : {general, power, ridge}) check_equal_tasks(p);
}
