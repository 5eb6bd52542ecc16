// The forward pass's products (verify/patch/model/detail/products.hpp, docs/patch.md §2.7): the
// double model's through numerics::gemm equal Eigen's to rounding, on the blocks of rows the
// attention heads use (a leading dimension larger than the block); the float model's are
// Eigen's, bit for bit.
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
