// The per-sample square-loss channel and its mean over the sample's scalars (docs/finite_dim.md
// §21.4; theory/finite_dim_channel.hpp).
#include "theory/finite_dim_channel.hpp"

#include <cmath>
#include <utility>

#include <Eigen/Eigenvalues>

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

// The mean over law.exact's points, or to first order in the covariance (step 1e-4 leaves an
// error of order 1e-8 relative).
void channel_mean(const Params& p, const SaddleVec& x, const ChannelLaw& law, double h,
                  double out[5]) {
  const double shift = h * law.weight_shift;
  if (law.exact) {
    for (int k = 0; k < 5; ++k) out[k] = 0;
    double f[5];
    for (const ScalarNode& nd : *law.exact) {
      channel(p, x, nd.xi, shift + nd.shift, f);
      for (int k = 0; k < 5; ++k) out[k] += nd.weight * f[k];
    }
    return;
  }
  mean_to_first_order<5>(law.cov, h, 1e-4,
                         [&](const ScalarVec& xi, double* v) { channel(p, x, xi, shift, v); }, out);
}

namespace {

// A Gauss rule (Golub-Welsch) from its Jacobi matrix: nodes and normalized weights.
std::vector<std::pair<double, double>> gauss_rule(const Eigen::VectorXd& diag,
                                                  const Eigen::VectorXd& off) {
  const int n = static_cast<int>(diag.size());
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) T(i, i) = diag[i];
  for (int i = 0; i + 1 < n; ++i) T(i, i + 1) = T(i + 1, i) = off[i];
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(T);
  std::vector<std::pair<double, double>> r;
  for (int i = 0; i < n; ++i)
    r.emplace_back(es.eigenvalues()[i], es.eigenvectors()(0, i) * es.eigenvectors()(0, i));
  return r;
}

// chi^2_k = 2 Gamma(k/2): the generalized Laguerre rule of exponent k/2 - 1, doubled.
std::vector<std::pair<double, double>> chi2_rule(double k, int n) {
  const double ex = k / 2 - 1;
  Eigen::VectorXd d(n), o(n - 1);
  for (int i = 0; i < n; ++i) d[i] = 2 * i + ex + 1;
  for (int i = 1; i < n; ++i) o[i - 1] = std::sqrt(i * (i + ex));
  auto r = gauss_rule(d, o);
  for (auto& v : r) v.first *= 2;
  return r;
}

// N(0, 1): the probabilists' Hermite rule.
std::vector<std::pair<double, double>> normal_rule(int n) {
  Eigen::VectorXd o(n - 1);
  for (int i = 1; i < n; ++i) o[i - 1] = std::sqrt(static_cast<double>(i));
  return gauss_rule(Eigen::VectorXd::Zero(n), o);
}

}  // namespace

std::vector<ScalarNode> exact_scalar_law(const Params& p, double D, bool query, bool context,
                                         int n) {
  std::vector<std::pair<double, double>> qa = {{D, 1.0}};  // a D = chi^2_D
  if (query) qa = chi2_rule(D, n);
  std::vector<ScalarNode> ctx = {{ScalarVec::Zero(), 1.0, 0.0}};
  if (context) {
    ctx.clear();
    const double L = p.alpha * D, r = 1 / std::sqrt(1 + p.sigma * p.sigma), s = p.sigma * r;
    const auto G = chi2_rule(L, n), Q = chi2_rule(L - 1, n), Z = normal_rule(n);
    for (const auto& [g, wg] : G)
      for (const auto& [z, wz] : Z)
        for (const auto& [qq, wq] : Q) {
          const double e = (g + p.sigma * std::sqrt(g) * z) / L;
          const double b = (r * r * g + 2 * r * s * std::sqrt(g) * z + s * s * (z * z + qq)) / L;
          ctx.push_back({ScalarVec(0, e - 1, b - 1), wg * wz * wq, -p.nu() * b / D});
        }
  }
  std::vector<ScalarNode> out;
  out.reserve(qa.size() * ctx.size());
  for (const auto& [a, wa] : qa)
    for (const ScalarNode& c : ctx)
      out.push_back({ScalarVec(a / D - 1, c.xi[ETA], c.xi[B_NOISE]), wa * c.weight, c.shift});
  return out;
}

}  // namespace icl::theory::detail
