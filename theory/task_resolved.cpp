// The task-resolved deterministic equivalent (docs/finite_dim.md §21.6; a general task spectrum
// §21.15).
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
  // The task's energy on each population level of Sigma relative to its mean (a task
  // w = sqrt(t) w~ of typical direction has chi_l = t on every level), its relative count and
  // its probability.
  std::vector<double> chi;
  double omega, p;
};

struct System {
  Params p;
  std::vector<TaskClass> classes;
  // The population levels of Sigma (t_l on a fraction w_l; the paper's tasks are
  // {(1/rho, rho), (0, 1 - rho)}).
  std::vector<numerics::Atom> levels;
  int n() const { return static_cast<int>(classes.size()); }
  int nl() const { return static_cast<int>(levels.size()); }

  // A task's quadratic form (1/M0) w^T A w for A = a(Sigma) given level by level.
  double form(const TaskClass& tc, const Eigen::VectorXd& a) const {
    double f = 0;
    for (int l = 0; l < nl(); ++l) f += levels[l].mass * levels[l].position * tc.chi[l] * a[l];
    return f / p.kappa;
  }
  double norm(const TaskClass& tc) const { return p.kappa * form(tc, Eigen::VectorXd::Ones(nl())); }

  // The deterministic equivalent H^{-1} ~ (c + Phi(Sigma))^{-1}, level by level
  // g_l = 1/(c + Phi_l t_l), Phi_l = E[omega h chi_l / a], and its derivatives with the tasks'
  // weights held (Phi moves through each task's leverage y; docs/finite_dim.md §21.15).
  struct Globals {
    Eigen::VectorXd g, e2, eS, eM;  // H^{-1}, E H^{-2}, H^{-1} Sigma H^{-1}, H^{-1} M H^{-1}
    Eigen::VectorXd eC;             // H^{-1} C H^{-1} for the weight `extra` (when given)
    double trH1 = 0, trH2 = 0;
  };
  Globals globals(double c, double d, const Eigen::VectorXd& Phi, const Eigen::VectorXd& h,
                  const Eigen::VectorXd& k, const Eigen::VectorXd* extra = nullptr) const {
    const int L = nl();
    Globals G;
    G.g.resize(L);
    for (int l = 0; l < L; ++l) G.g[l] = 1 / (c + Phi[l] * levels[l].position);
    // C_lk = (1/kappa) E[(omega h/a)^2 chi_l chi_k] w_k t_k g_k^2; the tasks' M part per level.
    Eigen::MatrixXd C = Eigen::MatrixXd::Zero(L, L);
    Eigen::VectorXd PM = Eigen::VectorXd::Zero(L);
    for (int j = 0; j < n(); ++j) {
      const auto& tc = classes[j];
      const double a = 1 + tc.omega * h[j] * form(tc, G.g), b = tc.omega * h[j] / a;
      for (int l = 0; l < L; ++l) {
        PM[l] += tc.p * tc.omega * k[j] * tc.chi[l] / (a * a) * levels[l].position;
        for (int m = 0; m < L; ++m)
          C(l, m) += tc.p * b * b * tc.chi[l] * tc.chi[m] * levels[m].mass * levels[m].position *
                     G.g[m] * G.g[m] / p.kappa;
      }
    }
    Eigen::VectorXd t(L);
    for (int l = 0; l < L; ++l) t[l] = levels[l].position;
    const Eigen::MatrixXd A = Eigen::MatrixXd::Identity(L, L) - C * t.asDiagonal();
    const auto lu = A.fullPivLu();
    // -d g/d(eps P) for a level perturbation P of H: g^2 (P + t dPhi), (1 - C t) dPhi = C P.
    auto response = [&](const Eigen::VectorXd& P) {
      const Eigen::VectorXd dPhi = lu.solve(C * P);
      return Eigen::VectorXd(G.g.array().square() * (P.array() + t.array() * dPhi.array()));
    };
    G.e2 = response(Eigen::VectorXd::Ones(L));
    G.eS = response(t);
    G.eM = d * G.e2 + response(PM);
    if (extra) G.eC = response(*extra);
    for (int l = 0; l < L; ++l) {
      G.trH1 += levels[l].mass * G.g[l];
      G.trH2 += levels[l].mass * G.e2[l];
    }
    return G;
  }

  struct PerTask {
    double t, y, a, chi, Delta, m, q, E, Y2;
  };
  PerTask task(int j, double c, double chibar, double qbar, const Globals& G, double h,
               double k) const {
    const auto& tc = classes[j];
    const double ka = p.kappa, s2 = p.sigma * p.sigma;
    PerTask r;
    r.t = norm(tc);
    const double nu_t = (r.t + s2) / p.alpha;
    r.y = form(tc, G.g);
    r.Y2 = form(tc, G.e2);
    const double YM = form(tc, G.eM);
    r.a = 1 + tc.omega * h * r.y;
    r.chi = r.y / r.a;
    r.Delta = 1 + r.chi + nu_t * chibar;
    r.m = r.t - c * ka * r.y / r.a;
    r.q = r.t - 2 * c * ka * r.y / r.a + c * c * ka * r.Y2 / (r.a * r.a) +
          (YM + tc.omega * k * r.y * r.y) / (r.a * r.a);
    r.E = s2 + r.t - 2 * r.m + r.q + nu_t * qbar;
    return r;
  }

  // x = (c, d, chibar, qbar, Phi_1..Phi_L, h_1..h_n, k_1..k_n).
  int size() const { return 4 + nl() + 2 * n(); }
  bool residual(const Eigen::VectorXd& x, Eigen::VectorXd& F) const {
    const int L = nl();
    const double c = x[0], d = x[1], chibar = x[2], qbar = x[3];
    const Eigen::VectorXd Phi = x.segment(4, L), h = x.segment(4 + L, n()),
                          k = x.segment(4 + L + n(), n());
    if (!(c > 0) || !(Phi.minCoeff() > 0)) return false;
    const Globals G = globals(c, d, Phi, h, k);
    const double K = p.tau / p.kappa, s2 = p.sigma * p.sigma;
    Eigen::VectorXd Phi_sum = Eigen::VectorXd::Zero(L);
    double cbar = 0, dbar = 0, qnoise = 0;
    F.resize(size());
    for (int j = 0; j < n(); ++j) {
      const auto& tc = classes[j];
      const PerTask r = task(j, c, chibar, qbar, G, h[j], k[j]);
      const double nu_t = (r.t + s2) / p.alpha;
      for (int l = 0; l < L; ++l) Phi_sum[l] += tc.p * tc.omega * h[j] * tc.chi[l] / r.a;
      cbar += tc.p * tc.omega * nu_t / r.Delta;
      dbar += tc.p * tc.omega * nu_t * r.E / (r.Delta * r.Delta);
      qnoise += tc.p * tc.omega * k[j] * r.Y2 / (r.a * r.a);
      F[4 + L + j] = h[j] - K / r.Delta;
      F[4 + L + n() + j] = k[j] - K * r.E / (r.Delta * r.Delta);
    }
    F[0] = c - (p.lambda + K * cbar);
    F[1] = d - K * dbar;
    F[2] = chibar - G.trH1 / p.kappa;
    F[3] = qbar - (1 - 2 * c * G.trH1 + c * c * G.trH2 + (d / p.kappa) * G.trH2 + qnoise);
    F.segment(4, L) = Phi - Phi_sum;
    return F.allFinite();
  }
};

void check_law(const std::vector<double>& weights, std::size_t values, const char* name) {
  double sum = 0;
  if (weights.empty() || weights.size() != values)
    throw InvalidParams(name, "a discrete law needs as many weights as values (at least one)");
  for (double w : weights) {
    if (!(w > 0)) throw InvalidParams(name, "weights must be positive");
    sum += w;
  }
  if (std::abs(sum - 1) > 1e-12) throw InvalidParams(name, "weights must sum to 1");
}

// The classes: every energy vector with every count (independent).
std::vector<TaskClass> classes_of(const LevelLaw& energies, const DiscreteLaw& counts) {
  check_law(energies.weights, energies.chi.size(), "energies");
  check_law(counts.weights, counts.values.size(), "counts");
  for (double v : counts.values)
    if (!(v > 0)) throw InvalidParams("counts", "values must be positive");
  std::vector<TaskClass> out;
  for (std::size_t i = 0; i < energies.chi.size(); ++i)
    for (std::size_t j = 0; j < counts.values.size(); ++j)
      out.push_back({energies.chi[i], counts.values[j], energies.weights[i] * counts.weights[j]});
  return out;
}

}  // namespace

TaskResolvedResult solve_task_resolved(const Params& p, const Solution& start,
                                       const DiscreteLaw& norms, const DiscreteLaw& counts) {
  check_law(norms.weights, norms.values.size(), "norms");
  LevelLaw energies;
  for (double t : norms.values) {
    if (!(t > 0)) throw InvalidParams("norms", "values must be positive");
    energies.chi.push_back(std::vector<double>(p.population_spectrum().size(), t));
  }
  energies.weights = norms.weights;
  return solve_task_resolved_levels(p, start, energies, counts);
}

TaskResolvedResult solve_task_resolved_levels(const Params& p, const Solution& start,
                                              const LevelLaw& energies,
                                              const DiscreteLaw& counts) {
  p.validate_for_saddle_point();
  System sys{p, classes_of(energies, counts), p.population_spectrum()};
  for (const auto& tc : sys.classes)
    if (tc.chi.size() != sys.levels.size())
      throw InvalidParams("energies", "one energy per population level of the task spectrum");
  const int n = sys.n(), L = sys.nl();
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
  Eigen::VectorXd x(sys.size());
  x << p.lambda + o.qbarhat, o.chibarhat, o.chibar, o.qbar, Eigen::VectorXd::Constant(L, o.qhat * beta),
      Eigen::VectorXd::Constant(n, o.qhat), Eigen::VectorXd::Constant(n, o.chihat);
  // Newton with a numerical Jacobian and step halving (the start is within O(1/sqrt(D)) of the
  // root for the finite-D laws, so a few steps suffice).
  // Residuals relative to the start's scale (qhat ~ tau/kappa can be large), as in docs/model.md
  // §4.3.
  const Eigen::VectorXd scale = x.cwiseAbs().cwiseMax(1e-300);
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
      const double step = 1e-7 * std::abs(scale[i]);
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
  const double c = x[0], d = x[1], chibar = x[2], qbar = x[3];
  const Eigen::VectorXd h = x.segment(4 + L, n), k = x.segment(4 + L + n, n);
  // A shifted protocol's test covariance per level (docs/finite_dim.md §21.11): its response
  // H^{-1} C H^{-1} comes with the globals.
  const std::vector<double> test = p.test_eigenvalues();
  const bool shifted = static_cast<int>(test.size()) == L;
  const Eigen::VectorXd test_weight =
      shifted ? Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(test.data(), L))
              : Eigen::VectorXd();
  const auto G = sys.globals(c, d, x.segment(4, L), h, k, shifted ? &test_weight : nullptr);
  double m = 0, q = 0;
  Eigen::VectorXd a(n);  // each task class's 1 + omega h y
  for (int j = 0; j < n; ++j) {
    const auto& tc = sys.classes[j];
    const auto t = sys.task(j, c, chibar, qbar, G, h[j], k[j]);
    m += tc.p * t.m;  // TM: the M0 tasks with equal weights
    q += tc.p * t.q;
    a[j] = t.a;
  }
  // A weight C = c(Sigma) given level by level with tr C/D = 1 (Sigma for IDG, C_test for a
  // shifted protocol, docs/finite_dim.md §21.11): tr(C Gbar)/D and tr(C Gamma^T Gamma)/D, with
  // Gbar = I - c H^{-1} and the tasks' noise part traced through the response of H^{-1} to C.
  auto weighted = [&](const Eigen::VectorXd& weight, const Eigen::VectorXd& eC, double& mw,
                      double& qw) {
    double sg = 0, se2 = 0;  // tr(C H^{-1})/D, tr(C E H^{-2})/D
    for (int l = 0; l < L; ++l) {
      sg += sys.levels[l].mass * weight[l] * G.g[l];
      se2 += sys.levels[l].mass * weight[l] * G.e2[l];
    }
    double qnoise = 0;
    for (int j = 0; j < n; ++j) {
      const auto& tc = sys.classes[j];
      qnoise += tc.p * tc.omega * k[j] * sys.form(tc, eC) / (a[j] * a[j]);
    }
    mw = 1 - c * sg;
    qw = 1 - 2 * c * sg + (c * c + d / p.kappa) * se2 + qnoise;
  };
  Eigen::VectorXd sigma(L);
  for (int l = 0; l < L; ++l) sigma[l] = sys.levels[l].position;
  OrderParams out{};
  out.m = m;
  out.q = q;
  out.qbar = qbar;
  out.chibar = chibar;
  weighted(sigma, G.eS, out.m0, out.q0);
  out.mbar = 1 - c * G.trH1;  // tr(Gbar)/D
  r.error = errors_from(p, out);
  r.order = out;
  if (shifted) {
    OrderParams at_test = out;
    weighted(test_weight, G.eC, at_test.m0, at_test.q0);
    r.shift = errors_from(p, at_test).idg;
  }
  r.status = numerics::Status::Converged;
  r.message = "task-resolved deterministic equivalent";
  return r;
}

LevelLaw gaussian_task_energies(const Params& p, double deff, bool fixed_norm) {
  const auto levels = p.population_spectrum();
  std::vector<std::size_t> on;
  for (std::size_t l = 0; l < levels.size(); ++l)
    if (levels[l].position > 0) on.push_back(l);
  LevelLaw out;
  for (std::size_t i : on)
    for (double sign : {-1.0, 1.0}) {
      std::vector<double> chi(levels.size(), 1.0);
      chi[i] += sign * std::sqrt(on.size() * 2 / levels[i].mass / deff);
      double t = 0;
      for (std::size_t l = 0; l < levels.size(); ++l)
        t += levels[l].mass * levels[l].position * chi[l];
      if (fixed_norm)
        for (double& x : chi) x /= t;
      out.chi.push_back(chi);
      out.weights.push_back(0.5 / on.size());
    }
  return out;
}

}  // namespace icl::theory
