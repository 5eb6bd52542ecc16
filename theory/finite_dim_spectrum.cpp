// The finite-M0 bias of the spectrum of S: for the paper's low-rank tasks (docs/finite_dim.md
// §21.5) and for a general population task spectrum (§21.13).
//
// General spectra: Gaussian integration by parts on E[S Q], Q = (S - z)^{-1}, gives (to O(1/M0), c = D/M0)
//   (beta_bar Sigma - z) E Q = I + (1/D) Sigma [ -a1 Qb + b1 (I + z Qb) + W / kappa ],
//   beta_bar = 1 - c - c z E tr Q / D,   Qb = (beta Sigma - z)^{-1},   W = d(z Qb)/dz,
// with a1 = b1 = 0 for Gaussian tasks; for fixed-norm tasks (w = x sqrt(D)/|x|, x Gaussian)
//   a1 = 2 tau2 + (ct - vbar 2 tau2)/(1 + vbar)^2 - ubar 2 tau2,   b1 = 2 (1 - ubar),
//   tau2 = tr Sigma^2/D, vbar = tr(Sigma Qb)/M0, ubar = vbar/(1 + vbar), ct = 2 tr(Sigma^2 Qb)/M0.
// Linearized around the deterministic equivalent: dEQ = -dbeta Qb Sigma Qb + (1/D) Qb Sigma X,
// dbeta = -c z tr(dEQ)/D. Every matrix here is a function of Sigma: level by level.
#include "theory/finite_dim_spectrum.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include <Eigen/Dense>

namespace icl::theory {

using numerics::MomentMethod;

namespace {

// --- Low-rank tasks (docs/finite_dim.md §21.5) ----------------------------------------------
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
  return numerics::real_wishart_trace_bias(y, zeta, mT);
}

}  // namespace

SpectralValues with_bias(SpectralValues v, const SpectralBias& bias, double h) {
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j) {
      v.R.r[k][j] += h * bias.R[k][j];
      v.T.r[k][j] += h * bias.T[k][j];
    }
  return v;
}

numerics::ResolventMoments with_test_bias(numerics::ResolventMoments U, const SpectralBias& bias,
                                          double h) {
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j) U.r[k][j] += h * bias.U[k][j];
  return U;
}

numerics::ResolventMoments biased_test_values(const SpectralModel& model, const SpectralValues& v0,
                                              const std::vector<double>& levels,
                                              const SpectralBias& bias, double h) {
  if (model.low_rank()) return model.test_weighted(with_bias(v0, bias, h), levels);
  return with_test_bias(model.test_weighted(v0, levels), bias, h);
}

SpectralBias task_set_bias(const Params& p, const SpectralModel& model, double z, TaskLaw law) {
  if (!p.task_spectrum.empty()) return task_spectrum_bias(p, model, z, law);
  // In span(A): dR01 = rho dT01; tr S/D and tr Sigma S/D have no bias (E S = Sigma). Fixed-norm
  // tasks are the Gaussian columns without their norms' weight mixture (§21.5).
  return spectral_bias_from(z, [&](double x) {
    double d = wishart_dT01(p, model, x);
    if (law == TaskLaw::FixedNorm) d -= mixture_dT01(p, model, x, 2 / p.rho);
    return ResolventBias{p.rho * d, d, 0.0};
  });
}

// --- General task spectra (docs/finite_dim.md §21.13) ----------------------------------------

ResolventBias task_spectrum_resolvent_bias(const Params& p, const SpectralModel& model, double z,
                                           TaskLaw law) {
  const std::vector<numerics::Atom> levels = p.population_spectrum();
  const double kappa = p.kappa, c = 1 / kappa;
  const SpectralValues v = model.at(z, MomentMethod::Exact);
  const double m = v.R(0, 1), dm = v.R(0, 2);  // m and dm/dz
  const double beta = 1 - c - c * z * m, dbeta = -c * (m + z * dm);
  const std::size_t n = levels.size();
  std::vector<double> q(n), W(n);
  double tau2 = 0, tau3 = 0, vbar = 0, ct = 0, Y = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double t = levels[k].position, w = levels[k].mass;
    q[k] = 1 / (beta * t - z);
    W[k] = q[k] - z * (dbeta * t - 1) * q[k] * q[k];  // d(z q)/dz
    tau2 += w * t * t;
    tau3 += w * t * t * t;
    vbar += w * t * q[k] / kappa;
    ct += 2 * w * t * t * q[k] / kappa;
    Y += w * t * q[k] * q[k];
  }
  double a1 = 0, b1 = 0;
  if (law == TaskLaw::FixedNorm) {
    const double vt = 2 * tau2, ubar = vbar / (1 + vbar);
    a1 = vt + (ct - vbar * vt) / ((1 + vbar) * (1 + vbar)) - ubar * vt;
    b1 = 2 * (1 - ubar);
  }
  std::vector<double> X(n);
  double Xtr = 0;
  for (std::size_t k = 0; k < n; ++k) {
    X[k] = -a1 * q[k] + b1 * (1 + z * q[k]) + W[k] / kappa;
    Xtr += levels[k].mass * levels[k].position * q[k] * X[k];
  }
  const double db = -c * z * Xtr / (1 - c * z * Y);
  // The bias per level dq_k, traced against I, Sigma and a shifted protocol's C_test (its
  // eigenvalue t'_k per level: docs/finite_dim.md §21.11).
  const std::vector<double> test = p.test_eigenvalues();
  const bool shifted = test.size() == n;
  ResolventBias out;
  double tau2_test = 0, tau3_test = 0;  // tr(C Sigma)/D, tr(C Sigma^2)/D
  for (std::size_t k = 0; k < n; ++k) {
    const double t = levels[k].position, w = levels[k].mass;
    const double dq = -db * t * q[k] * q[k] + t * q[k] * X[k];
    out.R01 += w * dq;
    out.T01 += w * t * dq;
    if (shifted) {
      out.U01 += w * test[k] * dq;
      tau2_test += w * test[k] * t;
      tau3_test += w * test[k] * t * t;
    }
  }
  // E[w w^T] = Sigma + (2/D)(tau2 Sigma - Sigma^2) for fixed-norm tasks, traced against Sigma
  // and C.
  if (law == TaskLaw::FixedNorm) {
    out.T10 = 2 * (tau2 * tau2 - tau3);
    out.U10 = 2 * (tau2 * tau2_test - tau3_test);
  }
  return out;
}

SpectralBias task_spectrum_bias(const Params& p, const SpectralModel& model, double z, TaskLaw law) {
  return spectral_bias_from(z,
                            [&](double x) { return task_spectrum_resolvent_bias(p, model, x, law); });
}

SpectralBias spectral_bias_from(double z, const std::function<ResolventBias(double)>& bias) {
  const double step = 1e-4 * std::abs(z);
  const ResolventBias b0 = bias(z);
  const ResolventBias bp = bias(z + step);
  const ResolventBias bm = bias(z - step);
  SpectralBias out;
  // B[k][j] from B[0][1], B[0][2] and the raw-moment biases B[1][0] (tr S/D or tr Sigma S/D);
  // tr S^0/D = 1 and tr Sigma/D = 1 have none.
  auto fill = [z](double (&B)[4][3], double d01, double d02, double d10) {
    B[0][1] = d01;
    B[0][2] = d02;
    B[1][0] = d10;
    B[1][1] = z * B[0][1];
    B[1][2] = B[0][1] + z * B[0][2];
    B[2][1] = B[1][0] + z * B[1][1];
    B[2][2] = B[1][1] + z * B[1][2];
    B[3][2] = B[2][1] + z * B[2][2];
  };
  fill(out.R, b0.R01, (bp.R01 - bm.R01) / (2 * step), 0.0);  // tr S/D: no bias (E|w|^2 = D)
  fill(out.T, b0.T01, (bp.T01 - bm.T01) / (2 * step), b0.T10);
  fill(out.U, b0.U01, (bp.U01 - bm.U01) / (2 * step), b0.U10);
  return out;
}

double weight_traced(const std::function<double(double)>& f, double z0,
                     const numerics::ResolventMoments& W) {
  const double scale = std::max(1.0, std::abs(z0));
  Eigen::Matrix<double, 5, 5> V;
  Eigen::Matrix<double, 5, 1> g;
  for (int i = 0; i < 5; ++i) {
    const double u = scale * (i + 1);
    for (int j = 0; j <= 4; ++j) V(i, j) = std::pow(u, 4 - j);  // a_j u^{4-j}
    g[i] = f(z0 + u) * std::pow(u, 4);
  }
  const Eigen::Matrix<double, 5, 1> a = V.fullPivLu().solve(g);
  double check = 0;  // the form holds: f at a sixth point
  const double u6 = -0.5 * scale;
  for (int j = 0; j <= 4; ++j) check += a[j] * std::pow(u6, -j);
  if (!(std::abs(check - f(z0 + u6)) <= 1e-7 * std::max(1.0, std::abs(check))))
    throw std::logic_error("weight_traced: f is not of the form sum_j a_j (s - z0)^{-j}, j <= 4");
  double out = a[0];
  for (int j = 1; j <= 4; ++j) out += a[j] * W(0, j);
  return out;
}

}  // namespace icl::theory
