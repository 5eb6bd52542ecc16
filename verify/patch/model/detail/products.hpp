// The matrix products of the model (internal to verify/patch/model): W x + b for the attention
// projections, the MLP layers, the embedding and the readout; the attention's scores and weighted
// values; the backward passes' products.
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

using numerics::Transpose;

// c = alpha op(a) op(b) + beta c through numerics::gemm; a, b, c column-major matrices or blocks
// of their rows or columns (data() and outerStride() describe them), c of the product's size.
template <class DA, class DB, class DC>
void blas_product(Transpose ta, Transpose tb, double alpha, const DA& a, const DB& b, double beta,
                  DC& c) {
  const auto k = ta == Transpose::No ? a.cols() : a.rows();
  numerics::gemm(ta, tb, int(c.rows()), int(c.cols()), int(k), alpha, a.data(), int(a.outerStride()),
                 b.data(), int(b.outerStride()), beta, c.data(), int(c.outerStride()));
}

// c = op(a) op(b), or c += op(a) op(b) with `accumulate`; c (a matrix or a block of one) already
// of the product's size.
template <class DA, class DB, class DC>
void multiply(Transpose ta, Transpose tb, const DA& a, const DB& b, DC&& c, bool accumulate = false) {
  using S = typename std::decay_t<DC>::Scalar;
  if constexpr (std::is_same_v<S, double>) {
    blas_product(ta, tb, 1.0, a, b, accumulate ? 1.0 : 0.0, c);
  } else {
    auto run = [&](const auto& x, const auto& y) {
      if (accumulate) c.noalias() += x * y;
      else c.noalias() = x * y;
    };
    if (ta == Transpose::No && tb == Transpose::No) run(a, b);
    else if (ta == Transpose::No) run(a, b.transpose());
    else if (tb == Transpose::No) run(a.transpose(), b);
    else run(a.transpose(), b.transpose());
  }
}

// c = alpha op(a) b, op(a) = a or a^T, c resized (the forward pass).
template <class S, class DA, class DB>
void product(bool transpose_a, S alpha, const Eigen::MatrixBase<DA>& a,
             const Eigen::MatrixBase<DB>& b, Mat<S>& c) {
  const Eigen::Index m = transpose_a ? a.cols() : a.rows(), k = transpose_a ? a.rows() : a.cols();
  c.resize(m, b.cols());
  // With a small inner dimension (the token width 3 of the paper's plain model) a
  // coefficient-wise product beats a packed GEMM, whose packing dominates (the float model).
  constexpr Eigen::Index kSmallInner = 8;
  if constexpr (std::is_same_v<S, double>) {
    blas_product(transpose_a ? Transpose::Yes : Transpose::No, Transpose::No, alpha, a.derived(),
                 b.derived(), 0.0, c);
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
