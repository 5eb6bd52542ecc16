// The square-loss channel of one training sample at finite D (docs/finite_dim.md §21.4): the
// conjugate half of the saddle map written per sample, as a function of the sample's scalars
// (query norm, context scale, noise level), and its mean over their O(1/D) law. Internal to the
// finite-D theory (theory/finite_dim.cpp).
#pragma once

#include <vector>

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

// One point of an exact law of the scalars (docs/finite_dim.md §21.18): the deviations xi, the
// probability and the sample's own shift of the S weight (c1 = (1 + eta)^2 + shift).
struct ScalarNode {
  ScalarVec xi;
  double weight = 0, shift = 0;
};

// The per-sample law, per unit h = 1/D: the covariance of xi and a deterministic shift of the
// weight of S in Delta and E_tr; or, when `exact` is set, the law itself (docs/finite_dim.md
// §21.18), whose mean is then the weighted sum over its points (cov unused).
struct ChannelLaw {
  ScalarCov cov = ScalarCov::Zero();
  double weight_shift = 0;
  const std::vector<ScalarNode>* exact = nullptr;
};

// The exact law at dimension D of a training sample's scalars in the representation
// s = (1 + eta) w + n, n perpendicular to w with variance nu b per direction (docs/finite_dim.md
// §21.18, the sampler of docs/simulation.md §13.3): the query norm a = chi^2_D / D (with
// `query`), and (with `context`) 1 + eta = (G + sigma sqrt(G) z)/L, b = (r^2 G + 2 r s sqrt(G) z +
// s^2 (z^2 + Q))/L, G ~ chi^2_L, Q ~ chi^2_{L-1}, z ~ N(0, 1) independent, r = 1/sqrt(1 + sigma^2),
// s = sigma r, L = alpha D, with the sample's shift -nu b / D. Tensor Gauss rules of n points per
// variable.
std::vector<ScalarNode> exact_scalar_law(const Params& p, double D, bool query, bool context,
                                         int n);

// The mean of f over the scalars' law to first order in its covariance h * cov (docs/finite_dim.md
// §21.4): f(0) + (h/2) sum_ij cov_ij d_i d_j f(0), the second derivatives by central differences
// of the given step (f is a smooth rational function of xi near 0). f(xi, v) writes N values.
template <int N, class F>
void mean_to_first_order(const ScalarCov& cov, double h, double step, const F& f, double out[N]) {
  f(ScalarVec::Zero(), out);
  if (h == 0) return;
  for (int i = 0; i < kScalars; ++i)
    for (int j = 0; j < kScalars; ++j) {
      if (cov(i, j) == 0) continue;
      double v[4][N];
      const int si[4] = {1, 1, -1, -1}, sj[4] = {1, -1, 1, -1};
      for (int u = 0; u < 4; ++u) {
        ScalarVec xi = ScalarVec::Zero();
        xi[i] += si[u] * step;
        xi[j] += sj[u] * step;
        f(xi, v[u]);
      }
      for (int k = 0; k < N; ++k)
        out[k] += 0.5 * h * cov(i, j) * (v[0][k] - v[1][k] - v[2][k] + v[3][k]) / (4 * step * step);
    }
}

// The channel's mean over the scalars' law with weight shift h * law.weight_shift, to first order
// in their covariance h * law.cov (docs/finite_dim.md §21.4), or over law.exact (§21.18): the
// conjugates qh, mh, chih, qbarh,
// chibarh (out[i] is x[QH + i]) at the order parameters of x.
void channel_mean(const Params& p, const SaddleVec& x, const ChannelLaw& law, double h,
                  double out[5]);

}  // namespace icl::theory::detail
