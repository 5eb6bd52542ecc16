// The per-sample square-loss channel and its mean over the sample's scalars (docs/finite_dim.md
// §21.4; theory/finite_dim_channel.hpp).
#include "theory/finite_dim_channel.hpp"

namespace icl::theory::detail {

using namespace saddle_map;  // the unknowns' indices

namespace {

// The square-loss channel of one training sample (docs/finite_dim.md §21.4), with the S weight
// c1 = (1 + eta)^2 + shift:
//   Delta = 1 + a (c1 chi + nu b chibar),  E = sigma^2 + a (1 - 2 (1 + eta) m + c1 q + nu b qbar),
//   qh = K a c1 / Delta, mh = K a (1 + eta) / Delta, qbarh = K a nu b / Delta,
//   chih = K a c1 E / Delta^2, chibarh = K a nu b E / Delta^2.
// With xi = 0 and shift = 0 these are the conjugates of docs/model.md §4.2 at the root.
void channel(const Params& p, const SaddleVec& x, const ScalarVec& xi, double shift, double out[5]) {
  const double K = p.tau / p.kappa;
  const double nu = p.nu();
  const double a = 1 + xi[A_NORM], e = 1 + xi[ETA], b = 1 + xi[B_NOISE];
  const double c1 = e * e + shift;
  const double Delta = 1 + a * (c1 * x[CHI] + nu * b * x[CHIBAR]);
  const double E = p.sigma * p.sigma + a * (1 - 2 * e * x[M] + c1 * x[Q] + nu * b * x[QBAR]);
  // In the order of the unknowns: qh, mh, chih, qbarh, chibarh (out[i] is x[QH + i]).
  out[QH - QH] = K * a * c1 / Delta;
  out[MH - QH] = K * a * e / Delta;
  out[CHIH - QH] = K * a * c1 * E / (Delta * Delta);
  out[QBARH - QH] = K * a * nu * b / Delta;
  out[CHIBARH - QH] = K * a * nu * b * E / (Delta * Delta);
}

}  // namespace

// E over the scalars to first order in their covariance h * cov: f(0) + (h/2) sum_ij cov_ij
// d_i d_j f(0), the second derivatives by central differences (f is a smooth rational
// function of xi near 0; step 1e-4 leaves an error of order 1e-8 relative).
void channel_mean(const Params& p, const SaddleVec& x, const ChannelLaw& law, double h,
                  double out[5]) {
  const double shift = h * law.weight_shift;
  channel(p, x, ScalarVec::Zero(), shift, out);
  if (h == 0 || law.cov.isZero()) return;
  constexpr double d = 1e-4;
  for (int i = 0; i < kScalars; ++i)
    for (int j = 0; j < kScalars; ++j) {
      if (law.cov(i, j) == 0) continue;
      double f[4][5];
      const int si[4] = {1, 1, -1, -1}, sj[4] = {1, -1, 1, -1};
      for (int k = 0; k < 4; ++k) {
        ScalarVec xi = ScalarVec::Zero();
        xi[i] += si[k] * d;
        xi[j] += sj[k] * d;
        channel(p, x, xi, shift, f[k]);
      }
      for (int k = 0; k < 5; ++k)
        out[k] += 0.5 * h * law.cov(i, j) * (f[0][k] - f[1][k] - f[2][k] + f[3][k]) / (4 * d * d);
    }
}

}  // namespace icl::theory::detail
