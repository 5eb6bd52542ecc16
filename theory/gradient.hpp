// Exact derivatives of a solution's outputs with respect to its scalar parameters (docs/
// sensitivity.md §22): the result type. theory/sensitivity.hpp computes it; SolveOptions::
// gradient asks solve() for it (Solution::gradient).
#pragma once
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "numerics/status.hpp"

namespace icl::theory {

struct Gradient {
  // The rows: the quantities of theory/quantity.hpp (solution_quantities(), in that order)
  // that the solution defines (no shift rows without a shifted protocol; Letey: no chi, chibar,
  // conjugates). The columns: gradient_parameters(params) (theory/sensitivity.hpp).
  std::vector<std::string> outputs, parameters;
  Eigen::MatrixXd values;  // d output / d parameter; NaN unless converged()
  // Converged; NotConverged for a solution that did not converge; NumericalFailure when the
  // linear solve is singular or its condition number exceeds kMaxGradientCondition.
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  // Of the linear solve through the root (the saddle point's Jacobian with unknowns and
  // residuals relative to |x_i|, the LU's 1-norm estimate); 1 for the scalar roots of the
  // reduced and Letey methods.
  double condition_number = std::numeric_limits<double>::quiet_NaN();
  bool converged() const { return status == numerics::Status::Converged; }
  // d output / d parameter by name; InvalidParams("output" / "parameter") listing the names.
  double of(const std::string& output, const std::string& parameter) const;
};

}  // namespace icl::theory
