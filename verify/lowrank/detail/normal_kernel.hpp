// Internal to the simulator. The hot loops of its training (docs/simulation.md §13.4) as BLAS
// matrix products on blocks of rows: the normal operator X^T diag(rowdot(X G, Sm)) Sm, its
// right-hand side X^T diag(y) Sm and the preconditioner's Gram matrices A^T A. The N rows are
// cut into kLanes fixed lanes, each summed block by block into its own D x D partial, and the
// partials are added in lane order: results do not depend on the number of threads.
#pragma once
#include <vector>

#include <Eigen/Core>

namespace icl::verify::lowrank::detail {

class BlockedNormalOperator {
 public:
  // Fixed: the summation order (and so the result) depends on these, never on the threads.
  static constexpr int kLanes = 8;         // partial sums, at most this many threads
  static constexpr int kBlockRows = 1024;  // rows per product within a lane (cache-sized)

  // X, Sm: N x D, referenced (they must outlive the operator). threads: 1..kLanes run the lanes.
  BlockedNormalOperator(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Sm, int threads);
  // out = X^T diag(rowdot(X G, Sm)) Sm  (no 1/N, no ridge).
  void apply(const Eigen::MatrixXd& G, Eigen::MatrixXd& out) const;
  // X^T diag(w) Sm for a weight per row (the right-hand side with w = y).
  Eigen::MatrixXd weighted_cross(const Eigen::VectorXd& w) const;
  // Bytes of work space at dimension D on `threads` threads (SimOptions::memory_bytes).
  static double work_bytes(double D, int threads);

 private:
  template <class Block>
  void over_lanes(const Block& block) const;
  const Eigen::MatrixXd& X_;
  const Eigen::MatrixXd& S_;
  int threads_;
  mutable std::vector<double> blocks_;    // per thread: kBlockRows x D (X G, then diag(u) Sm)
  mutable std::vector<double> partials_;  // per lane: D x D
};

// A^T A (N x D -> D x D) by the same fixed lanes, on `threads` threads.
Eigen::MatrixXd blocked_gram(const Eigen::MatrixXd& A, int threads);

}  // namespace icl::verify::lowrank::detail
