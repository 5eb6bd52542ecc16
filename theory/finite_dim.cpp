// The finite-D theory of docs/theory.md §21: the D -> infinity saddle point at the integer sizes
// of dimension D, plus the O(1/D) term of each derived source by linear response of the
// saddle point.
//
// The perturbed map is x = Phi_h(x), h = 1/D: its order-parameter half is that of §4.2 with the
// spectral values R, T shifted by h * (their 1/D bias) (§21.5), its conjugate half is the
// square-loss channel averaged over the per-sample scalars (query norm, context scale and noise
// level) to first order in their O(1/D) covariance (§21.4). At h = 0 it is the map of §4.2 (a
// test checks this). The slope of a source is dx/dh = -J^{-1} dF/dh at the D -> infinity root,
// pushed through the observables of §7 (plus the exact test-context term of §21.3).
#include "theory/finite_dim.hpp"

#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "numerics/error.hpp"
#include "theory/saddle_map.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

using numerics::MomentMethod;
using numerics::Status;

const std::vector<std::string>& finite_dim_source_names() {
  static const std::vector<std::string> names = {
      "test_context", "context_mean", "context_scalars", "query_norms",
      "task_sampling", "task_norms", "task_counts"};
  return names;
}

void FiniteDimOptions::validate() const {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2 (got " + std::to_string(dim) + ")");
}

Params at_dimension(const Params& p, int dim) {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2 (got " + std::to_string(dim) + ")");
  p.validate();
  // The simulator's integer sizes (docs/theory.md §13.1), each at least 1.
  const double D = dim;
  auto size = [](double x) { return std::max(1.0, double(std::llround(x))); };
  Params s = p;
  if (p.task_spectrum.empty()) s.rho = size(p.rho * D) / D;
  s.kappa = size(p.kappa * D) / D;
  s.tau = size(p.tau * D * D) / (D * D);
  s.alpha = size(p.alpha * D) / D;
  if (p.alpha_test >= 0) s.alpha_test = size(p.alpha_test * D) / D;
  return s;
}

namespace {

using namespace saddle_map;  // kN and the unknowns' indices Q, M, ..., CHIBARH
using Vec = Eigen::Matrix<double, kN, 1>;
using Mat = Eigen::Matrix<double, kN, kN>;

double z_at(const Params& p, const Vec& x) { return -(p.lambda + x[QBARH]) / x[QH]; }

// 1/D biases of the spectral values, per unit h = 1/D: dR_{k,j}/dh and dT_{k,j}/dh for j <= 2
// (docs/theory.md §21.5). Zero for the channel sources.
struct SpectralBias {
  double R[4][3] = {};
  double T[4][3] = {};
};

// The per-sample law of the channel's scalars (docs/theory.md §21.4), per unit h = 1/D:
// the covariance of (a - 1, eta, b - 1) (query norm |x|^2, the context estimate's scale along w,
// its noise level) and a deterministic shift of the weight of S in Delta and E_tr.
struct ChannelLaw {
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  double weight_shift = 0;
};

// One source: its spectral bias, its channel law, and whether it adds the test-context term.
struct Source {
  SpectralBias bias;
  ChannelLaw law;
  bool test_context = false;
};

// The square-loss channel of one training sample with scalars xi = (a - 1, eta, b - 1) and S
// weight c1 = (1 + eta)^2 + shift (docs/theory.md §21.4):
//   Delta = 1 + a (c1 chi + nu b chibar),  E = sigma^2 + a (1 - 2 (1 + eta) m + c1 q + nu b qbar)
//   qh = K a c1 / Delta, mh = K a (1 + eta) / Delta, qbarh = K a nu b / Delta,
//   chih = K a c1 E / Delta^2, chibarh = K a nu b E / Delta^2.
// With xi = 0 and shift = 0 these are the conjugates of §4.2 at the root.
void channel(const Params& p, const Vec& x, const double xi[3], double shift, double out[5]) {
  const double K = p.tau / p.kappa;
  const double nu = p.nu();
  const double a = 1 + xi[0], e = 1 + xi[1], b = 1 + xi[2];
  const double c1 = e * e + shift;
  const double Delta = 1 + a * (c1 * x[CHI] + nu * b * x[CHIBAR]);
  const double E = p.sigma * p.sigma + a * (1 - 2 * e * x[M] + c1 * x[Q] + nu * b * x[QBAR]);
  out[0] = K * a * c1 / Delta;
  out[1] = K * a * e / Delta;
  out[2] = K * a * nu * b / Delta;
  out[3] = K * a * c1 * E / (Delta * Delta);
  out[4] = K * a * nu * b * E / (Delta * Delta);
}

// E over the scalars to first order in their covariance h * cov: f(0) + (h/2) sum_ij cov_ij
// d_i d_j f(0), the second derivatives by central differences (f is a smooth rational
// function of xi near 0; step 1e-4 leaves an error of order 1e-8 relative).
void channel_mean(const Params& p, const Vec& x, const ChannelLaw& law, double h, double out[5]) {
  const double shift = h * law.weight_shift;
  const double zero[3] = {0, 0, 0};
  channel(p, x, zero, shift, out);
  if (h == 0 || law.cov.isZero()) return;
  constexpr double d = 1e-4;
  auto f = [&](int i, double si, int j, double sj, double r[5]) {
    double xi[3] = {0, 0, 0};
    xi[i] += si * d;
    xi[j] += sj * d;
    channel(p, x, xi, shift, r);
  };
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      if (law.cov(i, j) == 0) continue;
      double pp[5], pm[5], mp[5], mm[5];
      f(i, 1, j, 1, pp);
      f(i, 1, j, -1, pm);
      f(i, -1, j, 1, mp);
      f(i, -1, j, -1, mm);
      for (int k = 0; k < 5; ++k)
        out[k] += 0.5 * h * law.cov(i, j) * (pp[k] - pm[k] - mp[k] + mm[k]) / (4 * d * d);
    }
}

class PerturbedMap {
 public:
  PerturbedMap(const Params& p, const SpectralModel& model) : p_(p), model_(model) {}

  // Spectral values at z with the bias h * bias added.
  SpectralValues values(double z, const SpectralBias& bias, double h) const {
    SpectralValues v = model_.at(z, MomentMethod::Exact);
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 3; ++j) {
        v.R.r[k][j] += h * bias.R[k][j];
        v.T.r[k][j] += h * bias.T[k][j];
      }
    return v;
  }

  // F(x) = x - Phi_h(x); false outside the domain (z at or above the spectrum of S).
  bool residual(const Vec& x, const Source& s, double h, Vec& F) const {
    const double z = z_at(p_, x);
    if (!(x[QH] > 0) || !std::isfinite(z) || z >= model_.lower_edge()) return false;
    const SpectralValues v = values(z, s.bias, h);
    const double spec[7] = {v.R(3, 2), v.R(2, 2), v.R(1, 2), v.R(0, 2),
                            v.R(2, 1), v.R(1, 1), v.R(0, 1)};
    double phi[kN];
    order_half(p_, x.data(), spec, phi);
    channel_mean(p_, x, s.law, h, phi + QH);
    for (int i = 0; i < kN; ++i) F[i] = x[i] - phi[i];
    return F.allFinite();
  }

  // The observables at x with the bias h * bias (and h * q_P / alpha_t for the test context).
  bool observables(const Vec& x, const Source& s, double h, Errors& err, OrderParams& o) const {
    const double z = z_at(p_, x);
    if (!(x[QH] > 0) || !std::isfinite(z) || z >= model_.lower_edge()) return false;
    const Solution sol = observables_at(p_, model_, values(z, s.bias, h), order_from_vector(x));
    err = sol.error;
    o = sol.order;
    if (s.test_context) {
      // docs/theory.md §21.3: (1/L_t) tr(Gamma C Gamma^T)/D = q_P / (alpha_t D).
      const double at = p_.effective_alpha_test();
      err.tm += h * o.q / at;
      err.idg += h * o.q0 / at;
      err.odg += h * o.qbar / at;
    }
    return true;
  }

 private:
  const Params& p_;
  const SpectralModel& model_;
};

// --- Spectral biases of S for low-rank tasks (docs/theory.md §21.5) -----------------------
// In span(A), S = T / rho with T = V V^T / M0 an r x M0 Wishart matrix (y = r/M0). The
// deterministic equivalent: T01(z) = (1/D) tr Sigma (S - z)^{-1} = 1/P with
//   P = -z + phi(delta)/rho,  delta = 1/(kappa P),  phi(delta) = E_w[w / (1 + w delta)],
// where w are per-task weights of mean 1 (phi = 1/(1 + delta) without weights), and
// g(z) = rho / P + (1 - rho)/(-z).

// d T01/dh for weights of variance v h: phi -> 1/(1 + delta) - h v delta/(1 + delta)^3.
double mixture_dT01(const Params& p, const SpectralModel& model, double z, double v) {
  const double T01 = model.at(z, MomentMethod::Exact).T(0, 1);
  const double P = 1 / T01, delta = T01 / p.kappa, rho = p.rho, kappa = p.kappa;
  const double dphi = -1 / ((1 + delta) * (1 + delta));
  const double psi = -v * delta / std::pow(1 + delta, 3);
  const double ddelta = -(kappa * delta * psi / rho) / (kappa * P + kappa * delta * dphi / rho);
  const double dP = (dphi * ddelta + psi) / rho;
  return -dP / (P * P);
}

// d T01/dh for Gaussian columns: the real-Wishart bias of Bai and Silverstein,
//   E tr(T - zeta)^{-1} - r m_T(zeta) -> y mu^3 (1 + mu)^{-3} / (1 - y mu^2 (1 + mu)^{-2})^2,
// mu = -(1 - y)/zeta + y m_T(zeta) (the companion transform), at zeta = rho z; per unit 1/D it
// is the bias of T01 = (1/r) tr(S_A - z)^{-1} = rho m_T(rho z) times D/r * rho = 1.
double wishart_dT01(const Params& p, const SpectralModel& model, double z) {
  const double y = p.rho / p.kappa;
  const double zeta = p.rho * z;
  const double mT = model.at(z, MomentMethod::Exact).T(0, 1) / p.rho;
  const double mu = -(1 - y) / zeta + y * mT;
  const double r = mu / (1 + mu);
  const double den = 1 - y * r * r;
  return y * r * r * r / (den * den);
}

// The bias of every R_{k,j}, T_{k,j} (j <= 2) from dT01/dh as a function of z: dg = rho dT01;
// the z-derivative gives j = 2; S^k (S - z)^{-j} = S^{k-1} (S - z)^{-(j-1)} + z S^{k-1}
// (S - z)^{-j} gives k >= 1 (the moments tr S/D and tr Sigma S/D have no bias: they are linear
// in S and E S = Sigma).
template <typename F>
SpectralBias bias_from(const Params& p, double z, F dT01) {
  const double step = 1e-4 * std::abs(z);
  const double b1 = dT01(z);
  const double b2 = (dT01(z + step) - dT01(z - step)) / (2 * step);
  SpectralBias out;
  auto fill = [z](double (&B)[4][3], double d01, double d02) {
    B[0][1] = d01;
    B[0][2] = d02;
    B[1][1] = z * B[0][1];  // + bias of tr S^0/D = 1: none
    B[1][2] = B[0][1] + z * B[0][2];
    B[2][1] = z * B[1][1];  // + bias of tr S/D: none
    B[2][2] = B[1][1] + z * B[1][2];
    B[3][2] = B[2][1] + z * B[2][2];
    // B[3][1] would need the bias of tr S^2/D; no formula uses R_{3,1}: left 0.
  };
  fill(out.T, b1, b2);
  fill(out.R, p.rho * b1, p.rho * b2);
  return out;
}

FiniteDimResult failed(FiniteDimResult r) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  r.error = {nan, nan, nan};
  r.slope = {nan, nan, nan};
  r.order = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan};
  for (auto& s : r.sources) {
    s.slope = s.correction = {nan, nan, nan};
    s.order_slope = r.order;
  }
  return r;
}

}  // namespace

FiniteDimResult solve_finite_dim(const Params& p, const FiniteDimOptions& options) {
  options.validate();
  p.validate();
  if (!(p.lambda > 0 || p.tau > 1))
    throw InvalidParams("lambda", "the finite-D theory linearizes the replica saddle point, which "
                                  "needs lambda > 0 or tau > 1 (the ridgeless tau < 1 branch is "
                                  "not covered)");
  FiniteDimResult r;
  r.options = options;
  r.dim = options.dim;
  r.sized = at_dimension(p, options.dim);
  r.sized.validate_for_saddle_point();
  SolveOptions so = options.solve;
  so.method = Method::Saddle;
  r.limit = solve(r.sized, so);
  r.residual_norm = r.limit.residual_norm;
  const bool low_rank = p.task_spectrum.empty();
  for (const auto& name : finite_dim_source_names()) r.sources.push_back({name, {}, {}, {}});
  r.omitted = {"context_quadratic_forms", "task_channel", "task_counts_tm", "sequences"};
  if (!low_rank) r.omitted.insert(r.omitted.begin(), "task_spectrum_general");
  if (!r.limit.converged()) {
    r.status = r.limit.status;
    r.message = "the D -> infinity solve did not converge: " + r.limit.message;
    return failed(r);
  }

  const Params& q = r.sized;
  const SpectralModel model(q);
  const PerturbedMap map(q, model);
  const Vec x0 = to_vector(r.limit.order);
  const double z0 = z_at(q, x0);

  // The sources (docs/theory.md §21.3-§21.5), per unit h = 1/D.
  const double alpha = q.alpha, s2 = 1 + q.sigma * q.sigma;
  std::vector<Source> sources(r.sources.size());
  sources[0].test_context = true;
  sources[1].law.weight_shift = 1 / alpha;  // E[s s^T] = (1 + 1/L) w w^T + nu I
  // context_scalars: eta and b of variance 2/L, covariance 2/(L (1 + sigma^2)); the along-w noise
  // deficit (-1/L) with the mean of eta^2 (+2/L) is context_mean's +1/L, removed here.
  sources[2].law.cov(1, 1) = sources[2].law.cov(2, 2) = 2 / alpha;
  sources[2].law.cov(1, 2) = sources[2].law.cov(2, 1) = 2 / (alpha * s2);
  sources[2].law.weight_shift = -2 / alpha;
  if (!options.sphere_queries) sources[3].law.cov(0, 0) = 2.0;  // Var |x|^2 = 2/D
  if (low_rank) {
    auto wishart = [&](double z) { return wishart_dT01(q, model, z); };
    auto norms = [&](double z) { return mixture_dT01(q, model, z, 2 / q.rho); };
    auto counts = [&](double z) { return mixture_dT01(q, model, z, q.kappa / q.tau); };
    sources[4].bias = bias_from(q, z0, [&](double z) { return wishart(z) - norms(z); });
    if (!options.fixed_norm_tasks) sources[5].bias = bias_from(q, z0, norms);
    if (!options.balanced_assignment) sources[6].bias = bias_from(q, z0, counts);
  }

  // The Jacobian of the unperturbed residual at the root, by central differences.
  const Source none;
  Mat J;
  bool ok = true;
  for (int i = 0; i < kN && ok; ++i) {
    const double step = 1e-6 * std::max(1.0, std::abs(x0[i]));
    Vec xp = x0, xm = x0, Fp, Fm;
    xp[i] += step;
    xm[i] -= step;
    ok = map.residual(xp, none, 0, Fp) && map.residual(xm, none, 0, Fm);
    if (ok) J.col(i) = (Fp - Fm) / (2 * step);
  }
  Vec F0;
  ok = ok && map.residual(x0, none, 0, F0);
  const Eigen::FullPivLU<Mat> lu(J);
  if (!ok || !J.allFinite() || !lu.isInvertible()) {
    r.status = Status::NumericalFailure;
    r.message = "the saddle point's Jacobian is not invertible at the D -> infinity root";
    return failed(r);
  }
  // |F0|: the root of the Exact-moment map (the limit was solved with options.solve's moments).
  r.residual_norm = std::max(r.residual_norm, F0.norm());

  constexpr double h0 = 1e-4;
  r.error = r.limit.error;
  r.order = r.limit.order;
  const double D = options.dim;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    Vec Fp, Fm;
    if (!map.residual(x0, sources[k], h0, Fp) || !map.residual(x0, sources[k], -h0, Fm)) {
      ok = false;
      break;
    }
    const Vec dx = -lu.solve((Fp - Fm) / (2 * h0));
    Errors ep, em;
    OrderParams op, om;
    if (!map.observables(x0 + h0 * dx, sources[k], h0, ep, op) ||
        !map.observables(x0 - h0 * dx, sources[k], -h0, em, om)) {
      ok = false;
      break;
    }
    auto d = [](double a, double b) { return (a - b) / (2 * h0); };
    FiniteDimSource& s = r.sources[k];
    s.slope = {d(ep.tm, em.tm), d(ep.idg, em.idg), d(ep.odg, em.odg)};
    s.correction = {s.slope.tm / D, s.slope.idg / D, s.slope.odg / D};
    s.order_slope = OrderParams{};
    s.order_slope.q = d(op.q, om.q);
    s.order_slope.m = d(op.m, om.m);
    s.order_slope.qbar = d(op.qbar, om.qbar);
    s.order_slope.mbar = d(op.mbar, om.mbar);
    s.order_slope.m0 = d(op.m0, om.m0);
    s.order_slope.q0 = d(op.q0, om.q0);
    r.slope.tm += s.slope.tm;
    r.slope.idg += s.slope.idg;
    r.slope.odg += s.slope.odg;
    r.error.tm += s.correction.tm;
    r.error.idg += s.correction.idg;
    r.error.odg += s.correction.odg;
    r.order.q += s.order_slope.q / D;
    r.order.m += s.order_slope.m / D;
    r.order.qbar += s.order_slope.qbar / D;
    r.order.mbar += s.order_slope.mbar / D;
    r.order.m0 += s.order_slope.m0 / D;
    r.order.q0 += s.order_slope.q0 / D;
  }
  if (!ok || !std::isfinite(r.error.tm + r.error.idg + r.error.odg)) {
    r.status = Status::NumericalFailure;
    r.message = "a perturbed map left the domain of the saddle point (z above the spectrum of S)";
    return failed(r);
  }
  r.status = Status::Converged;
  r.message = "D -> infinity root at the sizes of D, plus the O(1/D) term of each derived source";
  return r;
}

}  // namespace icl::theory
