// The model's products (verify/patch/model/detail/products.hpp, docs/patch.md §2.7): the double
// model's through numerics::gemm equal Eigen's to rounding, forward and backward, on the blocks
// of rows the attention heads use (a leading dimension larger than the block); the float model's
// forward products are Eigen's, bit for bit.
#include <doctest/doctest.h>

#include "verify/patch/model/detail/products.hpp"

using namespace icl::verify::patch;

namespace {

template <class S>
Mat<S> random(Eigen::Index r, Eigen::Index c, unsigned seed) {
  std::srand(seed);
  return Mat<double>::Random(r, c).cast<S>();
}

double rel(const Mat<double>& a, const Mat<double>& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("patch products: the double model's head blocks through gemm equal Eigen's to rounding") {
  const Mat<double> K = random<double>(16, 51, 1), Q = random<double>(16, 51, 2),
                    V = random<double>(16, 51, 3);
  Mat<double> P, O;
  for (int h = 0; h < 4; ++h) {
    detail::product(true, 0.5, K.middleRows(4 * h, 4), Q.middleRows(4 * h, 4), P);
    const Mat<double> P_ref = 0.5 * (K.middleRows(4 * h, 4).transpose() * Q.middleRows(4 * h, 4));
    REQUIRE(P.rows() == 51);
    REQUIRE(P.cols() == 51);
    CHECK(rel(P, P_ref) < 1e-14);
    detail::product(false, 1.0, V.middleRows(4 * h, 4), P, O);
    CHECK(rel(O, Mat<double>(V.middleRows(4 * h, 4) * P)) < 1e-14);
  }
  const Mat<double> W = random<double>(64, 16, 4), b = random<double>(64, 1, 5);
  const Mat<double> y = detail::affine(W, K, b);
  Mat<double> y_ref = W * K;
  y_ref.colwise() += b.col(0);
  CHECK(rel(y, y_ref) < 1e-14);
  CHECK(rel(detail::affine(W, Mat<double>(K.col(7)), b), Mat<double>(y_ref.col(7))) < 1e-14);
}

TEST_CASE("patch products: the backward pass's, transposed and accumulated into head blocks, equal Eigen's to rounding") {
  using detail::Transpose;
  constexpr auto N = Transpose::No, T = Transpose::Yes;
  const Mat<double> dO = random<double>(16, 51, 6), P = random<double>(51, 51, 7),
                    W = random<double>(16, 64, 8), X = random<double>(16, 51, 9);
  Mat<double> dV = random<double>(16, 51, 10);
  const Mat<double> dV0 = dV;
  // dV_h = dO_h P^T into rows 4..7; the other rows untouched
  detail::multiply(N, T, dO.middleRows(4, 4), P, dV.middleRows(4, 4));
  CHECK(rel(dV.middleRows(4, 4), Mat<double>(dO.middleRows(4, 4) * P.transpose())) < 1e-14);
  CHECK(dV.topRows(4) == dV0.topRows(4));
  CHECK(dV.bottomRows(8) == dV0.bottomRows(8));
  // dP = V_h^T dO_h (keys x queries)
  Mat<double> dP(51, 51);
  detail::multiply(T, N, X.middleRows(8, 4), dO.middleRows(8, 4), dP);
  CHECK(rel(dP, Mat<double>(X.middleRows(8, 4).transpose() * dO.middleRows(8, 4))) < 1e-14);
  // g += dpre in^T (accumulated), da = W^T dpre, then da += W^T dpre again
  Mat<double> g = random<double>(16, 16, 11);
  const Mat<double> g_ref = g + dO * X.transpose();
  detail::multiply(N, T, dO, X, g, true);
  CHECK(rel(g, g_ref) < 1e-14);
  Mat<double> da(64, 51);
  detail::multiply(T, N, W, X, da);
  detail::multiply(T, N, W, X, da, true);
  CHECK(rel(da, Mat<double>(2 * W.transpose() * X)) < 1e-14);
}

TEST_CASE("patch products: the float model's are Eigen's, bit for bit") {
  const Mat<float> K = random<float>(16, 51, 1), Q = random<float>(16, 51, 2);
  Mat<float> P;
  detail::product(true, 0.5f, K.middleRows(4, 4), Q.middleRows(4, 4), P);
  Mat<float> P_ref = K.middleRows(4, 4).transpose().lazyProduct(Q.middleRows(4, 4));
  P_ref *= 0.5f;
  CHECK(P == P_ref);
  const Mat<float> W = random<float>(64, 16, 4);
  Mat<float> y;
  detail::product(false, 1.0f, W, K, y);
  CHECK(y == Mat<float>(W * K));
}
