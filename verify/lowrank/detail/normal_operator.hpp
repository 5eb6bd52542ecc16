// Internal to the simulator: the normal operator of the training loss as a reusable object
// (work space allocated once), used by CG and by the gradient-descent demo.
#pragma once
#include <optional>

#include "verify/lowrank/data.hpp"
#include "verify/lowrank/detail/normal_kernel.hpp"

namespace icl::verify::lowrank::detail {

// out = (1/N) X^T diag(rowdot(X G, Sm)) Sm + ridge G, ridge = lambda M0 / N.
class NormalOperator {
 public:
  // threads: for the blocked BLAS products (1..BlockedNormalOperator::kLanes used); the
  // result does not depend on it. use_blocked = false: plain Eigen products (a test reference).
  NormalOperator(const Dataset& data, double lambda, int threads = 1, bool use_blocked = true);
  void apply(const MatrixXd& G, MatrixXd& out);
  // The right-hand side (1/N) X^T diag(y) Sm, on this operator's work space when blocked.
  MatrixXd rhs() const;
  double ridge() const { return ridge_; }

 private:
  const Dataset& d_;
  double ridge_;
  std::optional<BlockedNormalOperator> blocked_;  // BLAS on row blocks (detail/normal_kernel.hpp)
  MatrixXd XG_;                                 // N x D work space of the Eigen path
};

}  // namespace icl::verify::lowrank::detail
