// The matrix products of the forward pass (internal to verify/patch/model): W x + b for the
// attention projections and the MLP layers, and the attention's scores and weighted values.
//
// For the double model every product runs through numerics::gemm (docs/patch.md §2.7): OpenBLAS
// when the machine has it, whose kernels are chosen at run time for the CPU (its small-matrix
// AVX-512 kernels here), while Eigen's products of this baseline x86-64 build are SSE2. The float
// model keeps Eigen's products.
#pragma once
#include <type_traits>

#include "numerics/blas.hpp"
#include "verify/patch/model/weights.hpp"

namespace icl::verify::patch::detail {

// c = alpha op(a) b, op(a) = a or a^T; a and b column-major matrices or blocks of their rows
// or columns (data() and outerStride() describe them), c resized.
template <class S, class DA, class DB>
void product(bool transpose_a, S alpha, const Eigen::MatrixBase<DA>& a,
             const Eigen::MatrixBase<DB>& b, Mat<S>& c) {
  const Eigen::Index m = transpose_a ? a.cols() : a.rows(), k = transpose_a ? a.rows() : a.cols();
  c.resize(m, b.cols());
  // With a small inner dimension (the token width 3 of the paper's plain model) a
  // coefficient-wise product beats a packed GEMM, whose packing dominates (the float model).
  constexpr Eigen::Index kSmallInner = 8;
  if constexpr (std::is_same_v<S, double>) {
    using numerics::Transpose;
    numerics::gemm(transpose_a ? Transpose::Yes : Transpose::No, Transpose::No, int(m),
                   int(b.cols()), int(k), alpha, a.derived().data(), int(a.derived().outerStride()),
                   b.derived().data(), int(b.derived().outerStride()), 0.0, c.data(), int(m));
  } else if (transpose_a) {
    if (k <= kSmallInner) c.noalias() = a.transpose().lazyProduct(b);
    else c.noalias() = a.transpose() * b;
    if (alpha != S(1)) c *= alpha;
  } else {
    if (k <= kSmallInner) c.noalias() = a.lazyProduct(b);
    else c.noalias() = a * b;
    if (alpha != S(1)) c *= alpha;
  }
}

// W x + b for every column of x.
template <class S>
Mat<S> affine(const Mat<S>& W, const Mat<S>& x, const Mat<S>& b) {
  Mat<S> y;
  product(false, S(1), W, x, y);
  y.colwise() += b.col(0);
  return y;
}

}  // namespace icl::verify::patch::detail
