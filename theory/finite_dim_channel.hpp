// The square-loss channel of one training sample at finite D (docs/finite_dim.md §21.4): the
// conjugate half of the saddle map written per sample, as a function of the sample's scalars
// (query norm, context scale, noise level), and its mean over their O(1/D) law. Internal to the
// finite-D theory (theory/finite_dim.cpp).
#pragma once

#include <Eigen/Core>

#include "theory/params.hpp"
#include "theory/saddle_map.hpp"

namespace icl::theory::detail {

using SaddleVec = Eigen::Matrix<double, saddle_map::kN, 1>;

// The channel's per-sample scalars (docs/finite_dim.md §21.4): the query norm a = |x|^2, the
// context estimate's scale along its task (1 + eta) and its noise level b. xi holds their
// deviations from the D -> infinity values (1, 0, 1).
constexpr int kScalars = 3;
enum Scalar { A_NORM, ETA, B_NOISE };
using ScalarVec = Eigen::Matrix<double, kScalars, 1>;
using ScalarCov = Eigen::Matrix<double, kScalars, kScalars>;

// The per-sample law, per unit h = 1/D: the covariance of xi and a deterministic shift of the
// weight of S in Delta and E_tr.
struct ChannelLaw {
  ScalarCov cov = ScalarCov::Zero();
  double weight_shift = 0;
};

// The channel's mean over the scalars' law with weight shift h * law.weight_shift, to first order
// in their covariance h * law.cov (docs/finite_dim.md §21.4): the conjugates qh, mh, chih, qbarh,
// chibarh (out[i] is x[QH + i]) at the order parameters of x.
void channel_mean(const Params& p, const SaddleVec& x, const ChannelLaw& law, double h,
                  double out[5]);

}  // namespace icl::theory::detail
