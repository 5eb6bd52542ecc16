// One convergence vocabulary for every result of the project (theory solutions, simulations,
// trainings, identity checks, theory-vs-simulation comparisons), in the manner of Ceres's
// Solver::Summary: each result type carries `status`, a `residual_norm` where a residual exists,
// and a human-readable `message`. Nothing is relaxed silently: a result that missed its
// tolerance says so here, with the residual it reached.
#pragma once

namespace icl::numerics {

enum class Status {
  Converged,         // reached its stated tolerance (a check: ran, and what it checks holds)
  NotConverged,      // stopped above its tolerance (iterations, stagnation): not to be trusted
  NumericalFailure,  // a value could not be computed (non-finite, quadrature, bracketing)
  CheckFailed,       // ran to completion, but the comparison it performs does not hold
  Interrupted,       // stopped on request (Ctrl-C) before completion: the result holds what finished
};

// "converged" | "not_converged" | "numerical_failure" | "check_failed" | "interrupted"
const char* to_string(Status status);

}  // namespace icl::numerics
