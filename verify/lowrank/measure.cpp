#include "verify/lowrank/measure.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Cholesky>

#include "numerics/dense_decompositions.hpp"
#include "numerics/normal_sampler.hpp"

namespace icl::verify::lowrank {

using Normal = numerics::NormalSampler;

namespace {

double frob2(const MatrixXd& M) { return M.squaredNorm(); }

// Error that a pure fluctuation Delta adds to the protocol with task second moment C.
double quadratic_part(const MatrixXd& Dl, const MatrixXd& C, int Lt, double sigma_t) {
  const double D = double(Dl.rows());
  const double trDCD = (Dl * C).cwiseProduct(Dl).sum();
  return trDCD / D * (1.0 + 1.0 / Lt) + (C.trace() / D + sigma_t * sigma_t) * frob2(Dl) / Lt;
}

}  // namespace

double exact_error(const MatrixXd& G, const MatrixXd& C, int Lt, double sigma_t) {
  const double D = double(G.rows());
  const MatrixXd GC = G * C;
  const double trC = C.trace();
  const double trGC = GC.trace();
  const double trGCG = GC.cwiseProduct(G).sum();  // tr(G C G^T)
  const double s2 = sigma_t * sigma_t;
  const double bias = (trC - 2.0 * trGC + trGCG) / D;
  return s2 + bias + ((trC / D + s2) * frob2(G) + trGCG / D) / double(Lt);
}

double exact_error_task(const MatrixXd& G, const VectorXd& w, int Lt, double sigma_t) {
  const double D = double(G.rows());
  const double s2 = sigma_t * sigma_t;
  const VectorXd Gw = G * w;
  return s2 + (w - Gw).squaredNorm() / D +
         ((w.squaredNorm() / D + s2) * frob2(G) + Gw.squaredNorm() / D) / double(Lt);
}

std::pair<double, double> monte_carlo_error(const MatrixXd& G, const VectorXd& w, int Lt,
                                            double sigma_t, int prompts, Rng& rng,
                                            Sampler sampler) {
  const Eigen::Index D = w.size();
  const double sd = 1.0 / std::sqrt(double(D));
  double sum = 0, sum2 = 0;
  VectorXd xq(D);
  for (int k = 0; k < prompts; ++k) {
    const VectorXd s = draw_context_estimate(w, Lt, sigma_t, rng, sampler);
    Normal nd(rng);
    nd.fill(xq.data(), D, sd);
    const double y = w.dot(xq) + sigma_t * nd();
    const double e = y - xq.dot(G * s);
    sum += e * e;
    sum2 += e * e * e * e;
  }
  const double mean = sum / prompts;
  const double var = std::max(0.0, sum2 / prompts - mean * mean);
  return {mean, std::sqrt(var / std::max(1, prompts - 1))};
}

PerProtocol<MatrixXd> test_task_moments(const Dataset& d, OdgKind odg, Rng& rng) {
  const auto& n = d.n;
  PerProtocol<MatrixXd> C;
  C.tm = d.S();
  C.idg = d.task_covariance();
  if (odg == OdgKind::Isotropic) {
    C.odg = MatrixXd::Identity(n.D, n.D);
  } else {
    const MatrixXd B = haar_orthonormal(n.D, n.r, rng);
    C.odg = (double(n.D) / n.r) * B * B.transpose();
  }
  return C;
}

double dmmse_tm_error(const Dataset& d, int Lt, double sigma_t, int prompts, Rng& rng) {
  const int D = d.n.D, M0 = d.n.M0;
  const double sd = 1.0 / std::sqrt(double(D));
  Normal nd(rng);
  std::uniform_int_distribution<int> pick(0, M0 - 1);
  MatrixXd X(Lt, D);
  VectorXd y(Lt), logw(M0);
  double sum = 0;
  for (int k = 0; k < prompts; ++k) {
    const int mu = pick(rng);
    nd.fill(X.data(), X.size(), sd);
    y = X * d.W.col(mu);
    for (int l = 0; l < Lt; ++l) y(l) += sigma_t * nd();
    // Residual of every candidate task on the context: |y - X w_nu|^2.
    const MatrixXd R = (X * d.W).colwise() - y;
    const VectorXd res = R.colwise().squaredNorm().transpose();
    if (sigma_t > 0) {
      logw = -res / (2 * sigma_t * sigma_t);
    } else {
      // Noiseless: the likelihood is the indicator of an exact fit; rounding allows a tiny
      // relative residual. Tasks are distinct almost surely, so this is the true task alone.
      const double tol = 1e-20 * std::max(1e-300, y.squaredNorm()) + 1e-300;
      for (int nu = 0; nu < M0; ++nu) logw(nu) = res(nu) <= std::max(tol, res.minCoeff()) ? 0.0 : -INFINITY;
    }
    const double top = logw.maxCoeff();
    const VectorXd pi = (logw.array() - top).exp().matrix();
    const VectorXd w_hat = d.W * pi / pi.sum();
    sum += sigma_t * sigma_t + (d.W.col(mu) - w_hat).squaredNorm() / D;
  }
  return sum / prompts;
}

PerProtocol<double> test_errors(const MatrixXd& G, const PerProtocol<MatrixXd>& C, int Lt,
                                double sigma_t) {
  PerProtocol<double> e;
  for (int k = 0; k < 3; ++k) e[k] = exact_error(G, C[k], Lt, sigma_t);
  return e;
}

OrderParameters<double> order_parameters(const MatrixXd& G, const Dataset& d, const MatrixXd& S) {
  const double D = d.n.D;
  OrderParameters<double> o;
  o.m = (G * S).trace() / D;
  o.q = (G * S).cwiseProduct(G).sum() / D;
  o.mbar = G.trace() / D;
  o.qbar = frob2(G) / D;
  if (d.general) {
    // m0 = tr(Sigma G)/D, q0 = tr(G Sigma G^T)/D (= E w^T G w / D, E |G w|^2 / D for w ~ N(0, Sigma)).
    const MatrixXd GS = G * d.Sigma;
    o.m0 = GS.trace() / D;
    o.q0 = GS.cwiseProduct(G).sum() / D;
  } else {
    // The same with Sigma = (D/r) A A^T, in the original (bit-identical) form.
    const MatrixXd GA = G * d.A;
    o.m0 = (d.A.transpose() * GA).trace() / d.n.r;
    o.q0 = frob2(GA) / d.n.r;
  }
  return o;
}

DecompositionMeasurement measure_decomposition(const MatrixXd& G, const Dataset& d,
                                               const PerProtocol<MatrixXd>& C,
                                               const TheoryRef& theory, double st, OdgKind odg,
                                               Sampler sampler, int prompts, int histogram_bins,
                                               Rng& rng) {
  const auto& n = d.n;
  const double D = n.D;
  const double z = theory.z, e = theory.e, nu = theory.nu;
  DecompositionMeasurement out;
  auto& dec = out.decomposition;
  const numerics::SymmetricEigen es = numerics::symmetric_eigen(C.tm);
  const VectorXd lam = es.values.cwiseMax(0.0);
  const MatrixXd& U = es.vectors;
  const double cut = 1e-9 * std::max(1.0, lam.maxCoeff());
  VectorXd in_span(n.D);
  for (int i = 0; i < n.D; ++i) in_span(i) = lam(i) > cut ? 1.0 : 0.0;
  const MatrixXd PS = U * in_span.asDiagonal() * U.transpose();
  const MatrixXd P0 = MatrixXd::Identity(n.D, n.D) - PS;
  const VectorXd fbar = lam.array() / (lam.array() - z);
  const MatrixXd Gbar = U * fbar.asDiagonal() * U.transpose();
  const MatrixXd Dl = G - Gbar;
  for (int k = 0; k < 3; ++k) {
    auto& piece = dec.protocol[k];
    const double total = exact_error(G, C[k], n.Lt, st);
    piece.algo = exact_error(Gbar, C[k], n.Lt, st);
    piece.excess = total - piece.algo;
    piece.span = quadratic_part(Dl * PS, C[k], n.Lt, st);
    piece.null = quadratic_part(Dl * P0, C[k], n.Lt, st);
    piece.cross = total - piece.algo - piece.span - piece.null;
  }
  const MatrixXd DU = Dl * U;
  VectorXd dd(n.D);
  for (int i = 0; i < n.D; ++i) dd(i) = DU.col(i).squaredNorm() * (lam(i) - z) * (lam(i) - z);
  Eigen::MatrixXd J(n.D, 2);
  J.col(0).setOnes();
  J.col(1) = lam;
  const Eigen::Vector2d coef = (J.transpose() * J).ldlt().solve(J.transpose() * dd);
  dec.fit_e = coef(1);
  dec.fit_e_nu = coef(0);
  int nnull = 0;
  double snull = 0;
  for (int i = 0; i < n.D; ++i)
    if (in_span(i) == 0.0) {
      ++nnull;
      snull += dd(i);
    }
  if (nnull > 0) dec.fit_e_nu_null = snull / nnull;
  dec.rank_S = double(n.D - nnull);
  if (prompts <= 0) return out;

  const VectorXd sqrt_lam = lam.cwiseSqrt();
  const VectorXd inv = (lam.array() - z).inverse();
  const int nb = std::max(2, histogram_bins);
  Normal nd(rng);
  std::uniform_int_distribution<int> pick(0, n.M0 - 1);
  MatrixXd Bsub;
  if (odg == OdgKind::Subspace) Bsub = haar_orthonormal(n.D, n.r, rng);
  VectorXd xq(n.D), vr(d.general ? n.D : n.r), wq(n.D);
  auto& dist = out.distribution.emplace();
  for (int k = 0; k < 3; ++k) {
    std::vector<double> hist(nb, 0.0);
    double r2 = 0, var_pred = 0, t1 = 0, t2 = 0;
    for (int j = 0; j < prompts; ++j) {
      if (k == 0) {
        wq = d.W.col(pick(rng));
      } else if (k == 1 && d.general) {
        nd.fill(vr.data(), n.D, 1.0);
        wq = d.Sigma_half * vr;  // w ~ N(0, Sigma)
      } else if (k == 1 || odg == OdgKind::Subspace) {
        nd.fill(vr.data(), n.r, 1.0);
        wq = std::sqrt(D / n.r) * ((k == 1 ? d.A : Bsub) * vr);
      } else {
        nd.fill(wq.data(), n.D, 1.0);
      }
      const VectorXd s = draw_context_estimate(wq, n.Lt, st, rng, sampler);
      nd.fill(xq.data(), n.D, 1.0 / std::sqrt(D));
      const double res = xq.dot(Dl * s);
      const VectorXd su = U.transpose() * s;  // s in the eigenbasis of S
      const double a1 = (sqrt_lam.cwiseProduct(inv).cwiseProduct(su)).squaredNorm();
      const double a2 = (inv.cwiseProduct(su)).squaredNorm();
      const double vp = xq.squaredNorm() / D * (e * a1 + e * nu * a2);
      r2 += res * res;
      var_pred += vp;
      const double t = res / std::sqrt(vp);
      t1 += t;
      t2 += t * t;
      const int b = int(std::floor((t + 4.0) / 8.0 * nb));
      if (b >= 0 && b < nb) hist[b] += 1.0;
    }
    const double np = prompts;
    auto& pd = dist[k];
    pd.var_ratio = r2 / var_pred;
    pd.std_mean = t1 / np;
    pd.std_var = t2 / np - (t1 / np) * (t1 / np);
    for (int b = 0; b < nb; ++b) pd.histogram.push_back(hist[b] / np);
  }
  return out;
}

}  // namespace icl::verify::lowrank
