// Internal to the simulator. The hot loop of its conjugate gradient:
// out = X^T diag(rowdot(X G, Sm)) Sm for row-major, zero-padded data (an AVX2/FMA kernel chosen at run time when the CPU has it,
// else a portable loop). The summation order is fixed, so results do not depend on threads.
#pragma once
#include <vector>

#include <Eigen/Core>

namespace icl::verify::lowrank::detail {

class PackedNormalOperator {
 public:
  // X, Sm: N x D. Copies them into row-major buffers padded to Dp = 8k columns and Np = 4k rows.
  PackedNormalOperator(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Sm);
  // out = X^T diag(rowdot(X G, Sm)) Sm  (no 1/N, no ridge).
  void apply(const Eigen::MatrixXd& G, Eigen::MatrixXd& out) const;
  bool vectorized() const { return avx2_; }

 private:
  int N_, D_, Np_, Dp_;
  bool avx2_;
  std::vector<double> X_, S_;          // Np x Dp row-major
  mutable std::vector<double> G_, O_;  // Dp x Dp row-major work space
};

// Whether the AVX2/FMA kernel is used on this machine.
bool normal_kernel_vectorized();

}  // namespace icl::verify::lowrank::detail
