// The task-resolved deterministic equivalent (docs/finite_dim.md §21.6): the D -> infinity theory
// of the tasks written task by task, so that tasks may differ in norm t = |w|^2/D and in their
// number of sequences omega (relative to N/M0). Each task has its own channel weights
// (qhat_mu = K/Delta_mu in the Hessian and the linear term, chihat_mu = K E_mu/Delta_mu^2 in the
// noise) found from its own leverage and residual by Sherman-Morrison; the other tasks enter
// through a deterministic equivalent (c + Phi Sigma)^{-1}, for Sigma = P_A/rho a scalar on span(A)
// (a general task spectrum: docs/finite_dim.md §21.15). With
// every task alike it is the saddle point of docs/model.md §4 (a test checks this to 1e-9); with
// the finite-D laws of t and omega it gives the task sources of the finite-D theory
// (docs/finite_dim.md §21).
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "numerics/status.hpp"
#include "theory/lowrank.hpp"
#include "theory/params.hpp"

namespace icl::theory {

// A discrete law: values with weights summing to 1 (mean 1 for the laws used here).
struct DiscreteLaw {
  std::vector<double> values = {1.0};
  std::vector<double> weights = {1.0};
};

// A discrete law of task energies per population level of Sigma (docs/finite_dim.md §21.15):
// chi[i][l] is class i's energy on level l relative to its mean (p.population_spectrum() order),
// weights[i] its probability. A task of norm t and typical direction has chi_l = t on every level.
struct LevelLaw {
  std::vector<std::vector<double>> chi;
  std::vector<double> weights;
};

struct TaskResolvedResult {
  numerics::Status status = numerics::Status::NotConverged;
  double residual_norm = 0;  // max |F_i| / max(1, |x_i|) of the task-resolved system at the end
  int iterations = 0;
  std::string message;
  Errors error;        // TM (tasks averaged with equal weights), IDG, ODG; NaN when not converged
  OrderParams order;   // m, q (task averages), qbar, mbar, m0, q0, chibar; the rest 0
  // A shifted protocol's error (the IDG formula with C_test in place of Sigma, docs/finite_dim.md
  // §21.11); NaN without one or when not converged.
  double shift = std::numeric_limits<double>::quiet_NaN();
  bool converged() const { return status == numerics::Status::Converged; }
};

// Solves the task-resolved system at p (lambda > 0 or tau > 1; any task spectrum) with task norms
// and relative sequence counts drawn independently from `norms` and `counts`, by Newton from
// the saddle-point solution `start` of p.
TaskResolvedResult solve_task_resolved(const Params& p, const Solution& start,
                                       const DiscreteLaw& norms = {},
                                       const DiscreteLaw& counts = {});
// The same with the tasks' energies per level of Sigma (norm and direction; §21.15).
TaskResolvedResult solve_task_resolved_levels(const Params& p, const Solution& start,
                                              const LevelLaw& energies,
                                              const DiscreteLaw& counts = {});

// The energies of Gaussian tasks w = Sigma^{1/2} g on the levels of Sigma (docs/finite_dim.md
// §21.15): chi_l independent, mean 1, variance 2/(w_l deff) on each level of t_l > 0, as the
// sigma points 1 +- sqrt(L 2/(w_l deff)) on one of the L such levels at a time (exact to second
// order); with fixed_norm each point divided by its norm sum_l w_l t_l chi_l.
LevelLaw gaussian_task_energies(const Params& p, double deff, bool fixed_norm);

}  // namespace icl::theory
