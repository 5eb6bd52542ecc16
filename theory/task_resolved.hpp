// The task-resolved deterministic equivalent (docs/finite_dim.md §21.6): the D -> infinity theory
// of the tasks written task by task, so that tasks may differ in norm t = |w|^2/D and in their
// number of sequences omega (relative to N/M0). Each task has its own channel weights
// (qhat_mu = K/Delta_mu in the Hessian and the linear term, chihat_mu = K E_mu/Delta_mu^2 in the
// noise) found from its own leverage and residual by Sherman-Morrison; the other tasks enter
// through a deterministic equivalent (c + Phi Sigma)^{-1}, for Sigma = P_A/rho a scalar on span(A)
// (a general task spectrum: docs/finite_dim.md §21.12). With
// every task alike it is the saddle point of docs/model.md §4 (a test checks this to 1e-9); with
// the finite-D laws of t and omega it gives the task sources of the finite-D theory
// (docs/finite_dim.md §21).
#pragma once
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

struct TaskResolvedResult {
  numerics::Status status = numerics::Status::NotConverged;
  double residual_norm = 0;  // max |F_i| / max(1, |x_i|) of the task-resolved system at the end
  int iterations = 0;
  std::string message;
  Errors error;        // TM (tasks averaged with equal weights), IDG, ODG; NaN when not converged
  OrderParams order;   // m, q (task averages), qbar, mbar, m0, q0, chibar; the rest 0
  bool converged() const { return status == numerics::Status::Converged; }
};

// Solves the task-resolved system at p (lambda > 0 or tau > 1; any task spectrum) with task norms
// and relative sequence counts drawn independently from `norms` and `counts`, by Newton from
// the saddle-point solution `start` of p.
TaskResolvedResult solve_task_resolved(const Params& p, const Solution& start,
                                       const DiscreteLaw& norms = {},
                                       const DiscreteLaw& counts = {});

}  // namespace icl::theory
