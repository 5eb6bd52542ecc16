// The task-resolved deterministic equivalent (docs/finite_dim.md §21.6; a general task spectrum
// §21.12).
//
// Unknowns: c = qbarhat + lambda (the isotropic part of the Hessian H), d = chibarhat (of the
// noise covariance M), chibar, qbar, Phi (the deterministic equivalent H^{-1} ~ (c + Phi Sigma)^{-1},
// level by level g_l = 1/(c + Phi t_l) on the population levels of Sigma), and per task class j
// the channel weights h_j (qhat_mu) and k_j (chihat_mu). Per task (w = sqrt(t) w~, omega its
// relative number of sequences; y = t (1/M0) tr Sigma H^{-1}, a = 1 + omega h y):
//   chi_mu = y / a,  Delta = 1 + chi_mu + nu_t chibar,  nu_t = (t + sigma^2)/alpha,
//   m_mu = t - c kappa y / a,
//   q_mu = t - 2 c kappa y / a + c^2 kappa t y2 / a^2 + (t yM + omega k y^2) / a^2,
//   E = sigma^2 + t - 2 m_mu + q_mu + nu_t qbar,  h = K / Delta,  k = K E / Delta^2,
// and globally (E over the task law; the samples weight tasks by omega):
//   Phi = E[omega h t / (1 + omega h y)],
//   c = lambda + K E[omega nu_t / Delta],  d = K E[omega nu_t E / Delta^2],
//   chibar = tr H^{-1} / (kappa D),
//   qbar = 1 - 2 c tr H^{-1}/D + c^2 tr H^{-2}/D + (d/kappa) tr H^{-2}/D + E[omega k t y2 / a^2],
// with y2 = (1/M0) tr Sigma H^{-2}, yS = (1/M0) tr Sigma H^{-1} Sigma H^{-1},
// yM = d y2 + E[omega k t / a^2] yS from derivatives of the deterministic equivalent in c and
// along Sigma (Phi moving through y, the tasks' weights held). For Sigma = P_A/rho this is the
// scalar G = 1/(c + Phi/rho) on span(A) of the low-rank theory.
#include "theory/task_resolved.hpp"

#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "numerics/error.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

namespace {

struct TaskClass {
  double t, omega, p;  // norm, relative count, probability
};

struct System {
  Params p;
  std::vector<TaskClass> classes;
  int n() const { return static_cast<int>(classes.size()); }

  // The population levels of Sigma (t_l on a fraction w_l; the paper's tasks are
  // {(1/rho, rho), (0, 1 - rho)}) and the deterministic-equivalent quantities at (c, d, Phi, h, k):
  // H^{-1} ~ (c + Phi Sigma)^{-1}, level by level g_l = 1/(c + Phi t_l).
  std::vector<numerics::Atom> levels;
  struct Globals {
    double y, y2, yS, yM, trH1, trH2;
  };
  Globals globals(double c, double d, double Phi, const Eigen::VectorXd& h,
                  const Eigen::VectorXd& k) const {
    const double ka = p.kappa;
    double S0 = 0, S1 = 0, S2 = 0, trH1 = 0, y = 0;
    for (const auto& l : levels) {
      const double g = 1 / (c + Phi * l.position), t = l.position;
      trH1 += l.mass * g;
      y += l.mass * t * g / ka;  // (1/M0) tr Sigma H^{-1}
      S0 += l.mass * g * g;
      S1 += l.mass * t * g * g;
      S2 += l.mass * t * t * g * g;
    }
    double a2 = 0, kw = 0;
    for (int j = 0; j < n(); ++j) {
      const auto& tc = classes[j];
      const double hw = tc.omega * h[j] * tc.t, den = 1 + hw * y;
      a2 += tc.p * (hw / den) * (hw / den);
      kw += tc.p * tc.omega * k[j] * tc.t / (den * den);
    }
    // d Phi/dc and d Phi/d(eps Sigma) with the task weights held (Phi depends on c through y).
    const double den = 1 - a2 * S2 / ka;
    const double dPhi_c = (a2 / ka) * S1 / den, dPhi_e = (a2 / ka) * S2 / den;
    Globals g;
    g.y = y;
    g.y2 = (S1 + dPhi_c * S2) / ka;  // (1/M0) tr Sigma E[H^{-2}]
    g.yS = (1 + dPhi_e) * S2 / ka;   // (1/M0) tr Sigma H^{-1} Sigma H^{-1}
    g.yM = d * g.y2 + kw * g.yS;
    g.trH1 = trH1;
    g.trH2 = S0 + dPhi_c * S1;
    return g;
  }

  struct PerTask {
    double a, chi, Delta, m, q, E;
  };
  PerTask task(int j, double c, double chibar, double qbar, const Globals& g, double h,
               double k) const {
    const auto& tc = classes[j];
    const double ka = p.kappa, s2 = p.sigma * p.sigma;
    const double nu_t = (tc.t + s2) / p.alpha;
    const double y = tc.t * g.y;
    PerTask r;
    r.a = 1 + tc.omega * h * y;
    r.chi = y / r.a;
    r.Delta = 1 + r.chi + nu_t * chibar;
    r.m = tc.t - c * ka * y / r.a;
    r.q = tc.t - 2 * c * ka * y / r.a + c * c * ka * tc.t * g.y2 / (r.a * r.a) +
          (tc.t * g.yM + tc.omega * k * y * y) / (r.a * r.a);
    r.E = s2 + tc.t - 2 * r.m + r.q + nu_t * qbar;
    return r;
  }

  // x = (c, d, chibar, qbar, Phi, h_1..h_n, k_1..k_n).
  bool residual(const Eigen::VectorXd& x, Eigen::VectorXd& F) const {
    const double c = x[0], d = x[1], chibar = x[2], qbar = x[3], Phi = x[4];
    if (!(c > 0) || !(Phi > 0)) return false;
    const Eigen::VectorXd h = x.segment(5, n()), k = x.segment(5 + n(), n());
    const Globals g = globals(c, d, Phi, h, k);
    const double K = p.tau / p.kappa, s2 = p.sigma * p.sigma;
    double Phi_sum = 0, cbar = 0, dbar = 0, qnoise = 0;
    F.resize(5 + 2 * n());
    for (int j = 0; j < n(); ++j) {
      const auto& tc = classes[j];
      const PerTask r = task(j, c, chibar, qbar, g, h[j], k[j]);
      const double nu_t = (tc.t + s2) / p.alpha;
      Phi_sum += tc.p * tc.omega * h[j] * tc.t / r.a;
      cbar += tc.p * tc.omega * nu_t / r.Delta;
      dbar += tc.p * tc.omega * nu_t * r.E / (r.Delta * r.Delta);
      qnoise += tc.p * tc.omega * k[j] * tc.t * g.y2 / (r.a * r.a);
      F[5 + j] = h[j] - K / r.Delta;
      F[5 + n() + j] = k[j] - K * r.E / (r.Delta * r.Delta);
    }
    F[0] = c - (p.lambda + K * cbar);
    F[1] = d - K * dbar;
    F[2] = chibar - g.trH1 / p.kappa;
    F[3] = qbar - (1 - 2 * c * g.trH1 + c * c * g.trH2 + (d / p.kappa) * g.trH2 + qnoise);
    F[4] = Phi - Phi_sum;
    return F.allFinite();
  }
};

std::vector<TaskClass> classes_of(const DiscreteLaw& norms, const DiscreteLaw& counts) {
  auto check = [](const DiscreteLaw& l, const char* name) {
    double sum = 0;
    if (l.values.empty() || l.values.size() != l.weights.size())
      throw InvalidParams(name, "a discrete law needs as many weights as values (at least one)");
    for (std::size_t i = 0; i < l.values.size(); ++i) {
      if (!(l.values[i] > 0) || !(l.weights[i] > 0))
        throw InvalidParams(name, "values and weights must be positive");
      sum += l.weights[i];
    }
    if (std::abs(sum - 1) > 1e-12) throw InvalidParams(name, "weights must sum to 1");
  };
  check(norms, "norms");
  check(counts, "counts");
  std::vector<TaskClass> out;
  for (std::size_t i = 0; i < norms.values.size(); ++i)
    for (std::size_t j = 0; j < counts.values.size(); ++j)
      out.push_back({norms.values[i], counts.values[j], norms.weights[i] * counts.weights[j]});
  return out;
}

}  // namespace

TaskResolvedResult solve_task_resolved(const Params& p, const Solution& start,
                                       const DiscreteLaw& norms, const DiscreteLaw& counts) {
  p.validate_for_saddle_point();
  System sys{p, classes_of(norms, counts), p.population_spectrum()};
  const int n = sys.n();
  TaskResolvedResult r;
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  r.error = {nan, nan, nan};
  r.order = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan};
  if (!start.converged()) {
    r.message = "no saddle-point solution to start from: " + start.message;
    return r;
  }
  // Start: every task at the saddle point, H = qhat (S - z) ~ qhat (beta Sigma - z) (the
  // deterministic equivalent of docs/general_covariance.md §12.3): Phi = qhat beta.
  const OrderParams& o = start.order;
  const SpectralModel model(p);
  const double ratio = 1 / p.kappa;
  const double beta =
      1 - ratio - ratio * start.z * model.at(start.z, numerics::MomentMethod::Exact).R(0, 1);
  Eigen::VectorXd x(5 + 2 * n);
  x << p.lambda + o.qbarhat, o.chibarhat, o.chibar, o.qbar, o.qhat * beta,
      Eigen::VectorXd::Constant(n, o.qhat), Eigen::VectorXd::Constant(n, o.chihat);
  // Newton with a numerical Jacobian and step halving (the start is within O(1/sqrt(D)) of the
  // root for the finite-D laws, so a few steps suffice).
  // Residuals relative to the start's scale (qhat ~ tau/kappa can be large), as in docs/model.md
  // §4.3.
  const Eigen::VectorXd scale = x.cwiseAbs().cwiseMax(1.0);
  auto residual = [&](const Eigen::VectorXd& v, Eigen::VectorXd& F) {
    if (!sys.residual(v, F)) return false;
    F = F.cwiseQuotient(scale);
    return true;
  };
  Eigen::VectorXd F;
  if (!residual(x, F)) {
    r.status = numerics::Status::NumericalFailure;
    r.message = "the saddle point is outside the task-resolved system's domain";
    return r;
  }
  constexpr double tol = 1e-13;  // relative to max(1, |x_i|) at the start
  for (r.iterations = 0; r.iterations < 50 && F.cwiseAbs().maxCoeff() > tol; ++r.iterations) {
    Eigen::MatrixXd J(x.size(), x.size());
    bool ok = true;
    for (int i = 0; i < x.size() && ok; ++i) {
      const double step = 1e-7 * std::max(1.0, std::abs(x[i]));
      Eigen::VectorXd xp = x, xm = x, Fp, Fm;
      xp[i] += step;
      xm[i] -= step;
      ok = residual(xp, Fp) && residual(xm, Fm);
      if (ok) J.col(i) = (Fp - Fm) / (2 * step);
    }
    if (!ok) break;
    const Eigen::VectorXd dx = J.fullPivLu().solve(-F);
    double lambda = 1;
    Eigen::VectorXd xn, Fn;
    for (; lambda > 1e-6; lambda /= 2) {
      xn = x + lambda * dx;
      if (residual(xn, Fn) && Fn.cwiseAbs().maxCoeff() < F.cwiseAbs().maxCoeff()) break;
    }
    if (lambda <= 1e-6) break;
    x = xn;
    F = Fn;
  }
  r.residual_norm = F.cwiseAbs().maxCoeff();
  if (!(r.residual_norm <= tol)) {
    r.status = numerics::Status::NotConverged;
    r.message = "the task-resolved system did not converge (max |F| " +
                std::to_string(r.residual_norm) + ")";
    return r;
  }
  // Observables (docs/errors_phases.md §7) from the root.
  const double c = x[0], d = x[1], chibar = x[2], qbar = x[3], Phi = x[4];
  const Eigen::VectorXd h = x.segment(5, n), k = x.segment(5 + n, n);
  const auto g = sys.globals(c, d, Phi, h, k);
  double m = 0, q = 0, qnoise_S = 0;
  for (int j = 0; j < n; ++j) {
    const auto& tc = sys.classes[j];
    const auto t = sys.task(j, c, chibar, qbar, g, h[j], k[j]);
    m += tc.p * t.m;  // TM: the M0 tasks with equal weights
    q += tc.p * t.q;
    qnoise_S += tc.p * tc.omega * k[j] * tc.t * g.yS / (t.a * t.a);
  }
  OrderParams out{};
  out.m = m;
  out.q = q;
  out.qbar = qbar;
  out.chibar = chibar;
  const double ka = p.kappa;
  out.m0 = 1 - c * ka * g.y;  // tr(Sigma Gbar)/D, Gbar = I - c H^{-1}
  out.q0 = 1 - 2 * c * ka * g.y + c * c * ka * g.y2 + d * g.y2 + qnoise_S;
  out.mbar = 1 - c * g.trH1;  // tr(Gbar)/D
  r.error = errors_from(p, out);
  r.order = out;
  r.status = numerics::Status::Converged;
  r.message = "task-resolved deterministic equivalent";
  return r;
}

}  // namespace icl::theory
