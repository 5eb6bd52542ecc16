// W x + b for every column of x, shared by the attention projections and the MLP layers
// (internal to verify/patch/model).
#pragma once
#include "verify/patch/model/weights.hpp"

namespace icl::verify::patch::detail {

// With a small inner dimension (the token width 3 of the paper's plain model) a coefficient-wise
// product beats the packed GEMM, whose packing dominates.
template <class S>
Mat<S> affine(const Mat<S>& W, const Mat<S>& x, const Mat<S>& b) {
  constexpr Eigen::Index kSmallInner = 8;
  Mat<S> y(W.rows(), x.cols());
  if (W.cols() <= kSmallInner) y.noalias() = W.lazyProduct(x);
  else y.noalias() = W * x;
  y.colwise() += b.col(0);
  return y;
}

}  // namespace icl::verify::patch::detail
