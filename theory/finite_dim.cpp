// The finite-D theory of docs/finite_dim.md §21: the D -> infinity saddle point at the integer
// sizes of dimension D, plus the O(1/D) term of each derived source by linear response of the
// saddle point.
//
// The perturbed map is x = Phi_h(x), h = 1/D: its order-parameter half is that of docs/model.md
// §4.2 with the spectral values R, T shifted by h * (their 1/D bias) (docs/finite_dim.md §21.5),
// its conjugate half is the square-loss channel averaged over the per-sample scalars (query norm,
// context scale and noise level) to first order in their O(1/D) covariance (§21.4). At h = 0 it is
// the map of docs/model.md §4.2 (a test checks this). The slope of a source is dx/dh = -J^{-1}
// dF/dh at the D -> infinity root, pushed through the observables of docs/errors_phases.md §7 (plus
// the exact test-context term of docs/finite_dim.md §21.3).
#include "theory/finite_dim.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include <Eigen/Dense>

#include "numerics/error.hpp"
#include "numerics/spectral_integral.hpp"
#include "theory/finite_dim_channel.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/saddle_map.hpp"
#include "theory/sensitivity.hpp"
#include "theory/spectral_model.hpp"
#include "theory/task_resolved.hpp"

namespace icl::theory {

using numerics::MomentMethod;
using numerics::Status;

namespace {

using namespace saddle_map;  // kN and the unknowns' indices Q, M, ..., CHIBARH
using detail::A_NORM;
using detail::B_NOISE;
using detail::ChannelLaw;
using detail::channel_mean;
using detail::ETA;
using Vec = detail::SaddleVec;
using Mat = Eigen::Matrix<double, kN, kN>;

double z_at(const Params& p, const Vec& x) { return -(p.lambda + x[QBARH]) / x[QH]; }

// A matrix commuting with S, for low-rank tasks (docs/finite_dim.md §21.4): on span(A) a function
// of the eigenvalue s of S, on the complement (where S = 0) one number.
struct MatFun {
  std::function<double(double)> on_A = [](double) { return 0.0; };
  double off_A = 0;
};

// Corrections, per unit h = 1/D, to the three matrices of the Gamma equation (docs/finite_dim.md
// §21.4): the Hessian H = qh (S - z) (+ lambda), the linear term L = mh S, the noise covariance
// M = chih S + chibarh; their D -> infinity forms are multiples of S and I, the corrections are
// not (they carry Sigma and the resolvent of S).
struct MatrixCorrection {
  MatFun H, L, M;
  bool active = false;
  // General task spectrum (docs/finite_dim.md §21.14): the corrections' first-order Sigma-weighted
  // traces per unit h at the root, d tr(Sigma Gbar)/D and d tr(Sigma (Gbar^2 + N))/D.
  double sigma_m0 = 0, sigma_q0 = 0;
};

// One source: its spectral bias, its channel law, whether it adds the test-context term, its
// matrix corrections, and its task laws.
struct Source {
  SpectralBias bias;
  ChannelLaw law;
  bool test_context = false;
  MatrixCorrection matrix;
  // Task sources (docs/finite_dim.md §21.6, §21.15): the task-resolved theory with Gaussian
  // against fixed-norm tasks, or with relative sequence counts of this variance (per unit 1/D);
  // computed apart from the map.
  bool gaussian_norms = false;
  double count_variance = 0;
};

class PerturbedMap {
 public:
  PerturbedMap(const Params& p, const SpectralModel& model) : p_(p), model_(model) {}

  // Spectral values at z with the bias h * bias added.
  SpectralValues values(double z, const SpectralBias& bias, double h) const {
    return with_bias(model_.at(z, MomentMethod::Exact), bias, h);
  }

  // The order parameters of the Gamma equation with matrix corrections h * c (low-rank tasks;
  // docs/finite_dim.md §21.4): Gbar = L H^{-1}, the noise's second moment M H^{-2} / kappa, and
  //   m = tr(Gbar S)/D, q = tr((Gbar^2 + N) S)/D, qbar = tr(Gbar^2 + N)/D,
  //   chi = tr(S H^{-1})/(kappa D), chibar = tr(H^{-1})/(kappa D),
  //   mbar = tr(Gbar)/D, m0 = tr(Sigma Gbar)/D, q0 = tr(Sigma (Gbar^2 + N))/D,
  // each trace rho * (integral over the spectrum of S on span(A)) + (1 - rho) * (value at S = 0).
  // With c = 0 these are the formulas of docs/model.md §4.2 and §4.2's observables (a test checks
  // it).
  OrderParams matrix_order(const Vec& x, const MatrixCorrection& c, double h) const {
    if (!model_.low_rank()) return matrix_order_general(x, c, h);
    const double z = z_at(p_, x), k = p_.kappa, rho = p_.rho;
    const double qh = x[QH], mh = x[MH], chih = x[CHIH], chibarh = x[CHIBARH];
    auto H = [&](double s) { return qh * (s - z) + h * c.H.on_A(s); };
    auto Gbar = [&](double s) { return (mh * s + h * c.L.on_A(s)) / H(s); };
    auto N = [&](double s) { return (chih * s + chibarh + h * c.M.on_A(s)) / (k * H(s) * H(s)); };
    const double Hoff = -qh * z + h * c.H.off_A;
    const double Goff = h * c.L.off_A / Hoff;
    const double Noff = (chibarh + h * c.M.off_A) / (k * Hoff * Hoff);
    const auto& mu = model_.spectrum_on_task_subspace();
    auto I = [&](const std::function<double(double)>& f) { return numerics::integrate(mu, f).value; };
    const double IG = I(Gbar);
    const double IGs = I([&](double s) { return Gbar(s) * s; });
    const double I2 = I([&](double s) { return Gbar(s) * Gbar(s) + N(s); });
    const double I2s = I([&](double s) { return (Gbar(s) * Gbar(s) + N(s)) * s; });
    const double IsH = I([&](double s) { return s / H(s); });
    const double IH = I([&](double s) { return 1 / H(s); });
    OrderParams o = order_from_vector(x);
    o.m = rho * IGs;
    o.q = rho * I2s;
    o.qbar = rho * I2 + (1 - rho) * (Goff * Goff + Noff);
    o.chi = rho * IsH / k;
    o.chibar = (rho * IH + (1 - rho) / Hoff) / k;
    o.mbar = rho * IG + (1 - rho) * Goff;
    o.m0 = IG;
    o.q0 = I2;
    return o;
  }

  // The same for a general task spectrum (docs/finite_dim.md §21.14): every corrected function of
  // S commutes with S, so the traces are integrals over the whole spectrum of S (its atom at 0
  // included); m0 and q0 are those of docs/errors_phases.md §7 at x plus h times the corrections'
  // Sigma-weighted traces at the root (first order: enough for the slope).
  OrderParams matrix_order_general(const Vec& x, const MatrixCorrection& c, double h) const {
    const double z = z_at(p_, x), k = p_.kappa;
    const double qh = x[QH], mh = x[MH], chih = x[CHIH], chibarh = x[CHIBARH];
    auto H = [&](double s) { return qh * (s - z) + h * c.H.on_A(s); };
    auto Gbar = [&](double s) { return (mh * s + h * c.L.on_A(s)) / H(s); };
    auto N = [&](double s) { return (chih * s + chibarh + h * c.M.on_A(s)) / (k * H(s) * H(s)); };
    const auto& mu = model_.spectrum_of_S();
    auto I = [&](const std::function<double(double)>& f) { return numerics::integrate(mu, f).value; };
    OrderParams o = order_from_vector(x);
    o.m = I([&](double s) { return Gbar(s) * s; });
    o.q = I([&](double s) { return (Gbar(s) * Gbar(s) + N(s)) * s; });
    o.qbar = I([&](double s) { return Gbar(s) * Gbar(s) + N(s); });
    o.chi = I([&](double s) { return s / H(s); }) / k;
    o.chibar = I([&](double s) { return 1 / H(s); }) / k;
    o.mbar = I(Gbar);
    const Solution sol = observables_at(p_, model_, model_.at(z, MomentMethod::Exact), o);
    o.m0 = sol.order.m0 + h * c.sigma_m0;
    o.q0 = sol.order.q0 + h * c.sigma_q0;
    return o;
  }

  // F(x) = x - Phi_h(x); false outside the domain (z at or above the spectrum of S).
  bool residual(const Vec& x, const Source& s, double h, Vec& F) const {
    const double z = z_at(p_, x);
    if (!(x[QH] > 0) || !std::isfinite(z) || z >= model_.lower_edge()) return false;
    double phi[kN];
    if (s.matrix.active) {
      const OrderParams o = matrix_order(x, s.matrix, h);
      phi[Q] = o.q;
      phi[M] = o.m;
      phi[CHI] = o.chi;
      phi[QBAR] = o.qbar;
      phi[CHIBAR] = o.chibar;
    } else {
      const SpectralValues v = values(z, s.bias, h);
      const double spec[7] = {v.R(3, 2), v.R(2, 2), v.R(1, 2), v.R(0, 2),
                              v.R(2, 1), v.R(1, 1), v.R(0, 1)};
      order_half(p_, x.data(), spec, phi);
    }
    channel_mean(p_, x, s.law, h, phi + QH);
    for (int i = 0; i < kN; ++i) F[i] = x[i] - phi[i];
    return F.allFinite();
  }

  // The observables at x with the bias h * bias or the matrix corrections h * matrix (and
  // h * q_P / alpha_t for the test context).
  bool observables(const Vec& x, const Source& s, double h, Errors& err, OrderParams& o) const {
    const double z = z_at(p_, x);
    if (!(x[QH] > 0) || !std::isfinite(z) || z >= model_.lower_edge()) return false;
    if (s.matrix.active) {
      // docs/errors_phases.md §7 with the order parameters of matrix_order.
      o = matrix_order(x, s.matrix, h);
      err = errors_from(p_, o);
    } else {
      const Solution sol = observables_at(p_, model_, values(z, s.bias, h), order_from_vector(x));
      err = sol.error;
      o = sol.order;
    }
    if (s.test_context) {
      // docs/finite_dim.md §21.3: (1/L_t) tr(Gamma C Gamma^T)/D = q_P / (alpha_t D).
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

// into += scale * a for the errors and the order parameters a source moves (m, q, qbar, mbar,
// m0, q0): the slopes' sums and the corrections of every accumulation below.
void add_scaled(Errors& into, const Errors& a, double scale) {
  into.tm += scale * a.tm;
  into.idg += scale * a.idg;
  into.odg += scale * a.odg;
}
void add_scaled(OrderParams& into, const OrderParams& a, double scale) {
  for (double OrderParams::*f : detail::kSourceOrderFields) into.*f += scale * a.*f;
}

}  // namespace

namespace detail {

void sum_sources(FiniteDimResult& r) {
  const double D = r.options.dim;
  r.error = r.limit.error;
  r.order = r.limit.order;
  r.slope = {0, 0, 0};
  for (FiniteDimSource& s : r.sources) {
    s.correction = {s.slope.tm / D, s.slope.idg / D, s.slope.odg / D};
    add_scaled(r.slope, s.slope, 1);
    add_scaled(r.error, s.correction, 1);
    add_scaled(r.order, s.order_slope, 1 / D);
  }
}

FiniteDimResult failed(FiniteDimResult r) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  r.validity = {false, "no finite-D prediction (" + r.message + ")", {nan, nan, nan},
                {nan, nan, nan}};
  r.error = {nan, nan, nan};
  r.slope = {nan, nan, nan};
  r.order = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan};
  for (auto& s : r.sources) {
    s.slope = s.correction = {nan, nan, nan};
    s.order_slope = r.order;
  }
  return r;
}

}  // namespace detail

namespace {

using detail::failed;
using detail::sum_sources;

// The per-unit-h terms of every source (docs/finite_dim.md §21.3-§21.5) at the D -> infinity root
// x0 (z0 its spectral argument), in the order of finite_dim_source_names(); a source switched
// off (sw) stays zero.
class SourceTerms {
 public:
  SourceTerms(const Params& q, const SpectralModel& model, const Vec& x0, double z0)
      : q_(q), model_(model), x0_(x0), z0_(z0), sources_(finite_dim_source_names().size()) {}

  std::vector<Source> build(const FiniteDSwitches& sw) {
    source("test_context").test_context = true;
    if (!sw.gaussian_context) context_terms();
    if (!sw.sphere_queries) source("query_norms").law.cov(A_NORM, A_NORM) = 2.0;  // Var |x|^2
    quadratic_forms();
    // The finite-M0 bias of the spectrum of S for tasks of fixed norm (§21.5; a general task
    // spectrum: §21.13).
    source("task_sampling").bias = task_set_bias(q_, model_, z0_, TaskLaw::FixedNorm);
    // The norms and the counts through the task-resolved theory (spectrum and channel, §21.6,
    // §21.15): Gaussian against fixed-norm tasks by their energies on the levels of Sigma; Var
    // of the relative count = M0/N (uniform, with replacement).
    source("task_norms").gaussian_norms = !sw.fixed_norm_tasks;
    if (sw.assignment == Assignment::Random)
      source("task_counts").count_variance = q_.kappa / q_.tau;
    return sources_;
  }

 private:
  Source& source(const std::string& name) {
    const auto& names = finite_dim_source_names();
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k] == name) return sources_[k];
    throw std::logic_error("finite_dim: no source " + name);
  }

  // context_mean and context_scalars (docs/finite_dim.md §21.4).
  void context_terms() {
    const double alpha = q_.alpha;
    source("context_mean").law.weight_shift = 1 / alpha;  // E[s s^T] = (1 + 1/L) w w^T + nu I
    // context_scalars: eta and b of variance 2/L; the along-w noise deficit (-1/L) with the mean
    // of eta^2 (+2/L) is context_mean's +1/L, removed here. The scale along w is (1 + eta) |w| +
    // u with the along-w noise u (variance sigma^2/alpha), which correlates with b as eta does:
    // Cov(eta + u/|w|, b) = 2/L (docs/finite_dim.md §21.4).
    Source& cs = source("context_scalars");
    cs.law.cov(ETA, ETA) = cs.law.cov(B_NOISE, B_NOISE) = 2 / alpha;
    cs.law.cov(ETA, B_NOISE) = cs.law.cov(B_NOISE, ETA) = 2 / alpha;
    cs.law.weight_shift = -2 / alpha;
    along_task_noise(cs.matrix);
  }

  // The training sample's leverage Delta = 1 + chi + nu chibar and residual variance E_tr at the
  // D -> infinity root (docs/finite_dim.md §21.4).
  std::pair<double, double> channel_at_root() const {
    const Vec& x0 = x0_;
    const double nu = q_.nu();
    return {1 + x0[CHI] + nu * x0[CHIBAR],
            q_.sigma * q_.sigma + 1 - 2 * x0[M] + x0[Q] + nu * x0[QBAR]};
  }

  // The context noise's covariance is nu I - w w^T / L, not nu I: along its own task it has
  // variance sigma^2/alpha (docs/finite_dim.md §21.4). The rank-one deficit changes, at O(1/D),
  // the Stein terms of context_quadratic_forms where the noise meets the task (w^T G n,
  // w^T (Gbar - P) n), with the task's forms w^T G w/D = chi, w^T Gbar w/D = m, w^T P w/D = q:
  //   D Var(Delta) += -4 chi^2/alpha,   D Cov(E, Delta) += 4 (m - q) chi/alpha,
  //   dH += 4 chi S/(alpha Delta^2),   dL += 2 chi S/(alpha Delta^2),
  //   dM += S (4 (m - q)/Delta^2 + 8 E_tr chi/Delta^3)/alpha,
  // with the scalar parts as in quadratic_forms. Part of the context law: --gaussian-context
  // (isotropic noise) removes it with context_scalars.
  void along_task_noise(MatrixCorrection& c) const {
    const Vec& x0 = x0_;
    const double a = 1 / q_.alpha, chi = x0[CHI], m_q = x0[M] - x0[Q];
    const auto [Dl, Etr] = channel_at_root();
    const double D2 = Dl * Dl, D3 = D2 * Dl;
    MatrixCorrection stein;
    stein.H.on_A = [=](double s) { return 4 * a * chi * s / D2; };
    stein.L.on_A = [=](double s) { return 2 * a * chi * s / D2; };
    stein.M.on_A = [=](double s) { return a * s * (4 * m_q / D2 + 8 * Etr * chi / D3); };
    c = channel_corrections(-4 * a * chi * chi, 4 * a * m_q * chi, stein);
  }

  // A source's corrections to the Gamma equation from the law of the sample's Delta and E
  // (docs/finite_dim.md §21.4), per unit h: the scalar parts of D Var(Delta) = VQ and
  // D Cov(E, Delta) = CQ (the second-order expansion of the channel in Delta and E, with
  // E[s s^T] = S + nu), plus the Stein matrix terms `stein` (H, L, M without the factor K); for
  // a general task spectrum also their Sigma-weighted traces.
  MatrixCorrection channel_corrections(double VQ, double CQ, const MatrixCorrection& stein) const {
    const double nu = q_.nu(), K = q_.tau / q_.kappa;
    const auto [Dl, Etr] = channel_at_root();
    const double D3 = Dl * Dl * Dl, D4 = D3 * Dl;
    const double scal = -2 * CQ / D3 + 3 * Etr * VQ / D4;
    const MatFun H = stein.H, L = stein.L, M = stein.M;
    MatrixCorrection c;
    c.active = true;
    c.H.on_A = [=](double s) { return K * ((s + nu) * VQ / D3 + H.on_A(s)); };
    c.H.off_A = K * (nu * VQ / D3 + H.off_A);
    c.L.on_A = [=](double s) { return K * (s * VQ / D3 + L.on_A(s)); };
    c.L.off_A = K * L.off_A;
    c.M.on_A = [=](double s) { return K * ((s + nu) * scal + M.on_A(s)); };
    c.M.off_A = K * (nu * scal + M.off_A);
    if (!model_.low_rank()) sigma_weighted_terms(c);
    return c;
  }

  // context_quadratic_forms (docs/finite_dim.md §21.4): the context noise n ~ N(0, nu I) enters
  // Delta = 1 + s^T G s/D and the residual through quadratic forms; Stein's lemma gives the
  // matrix terms, the variance and covariance of the forms the scalar ones:
  //   D Var(Delta) = 4 nu tr(S G^2)/D + 2 nu^2 tr(G^2)/D,
  //   D Cov(E, Delta) = -4 nu tr(S (Gbar - P) G)/D + 2 nu^2 tr(P G)/D.
  void quadratic_forms() {
    const Vec& x0 = x0_;
    const double z0 = z0_, rho = q_.rho, kappa = q_.kappa, nu = q_.nu();
    // Commuting functions of S at the root (docs/errors_phases.md §8.1, docs/finite_dim.md §21.4):
    // the response G = H^{-1}/kappa, Gbar = (mh/qh) S (S - z)^{-1}, P = E[Gamma^T Gamma].
    const double qh2 = x0[QH] * x0[QH], kq = kappa * x0[QH], ratio = x0[MH] / x0[QH];
    const double cA = x0[MH] * x0[MH] / qh2, cB = x0[CHIH] / (kappa * qh2),
                 cC = x0[CHIBARH] / (kappa * qh2);
    auto G = [=](double s) { return 1 / (kq * (s - z0)); };
    auto Gb = [=](double s) { return ratio * s / (s - z0); };
    auto P = [=](double s) { return (cA * s * s + cB * s + cC) / ((s - z0) * (s - z0)); };
    auto tr = [&](const std::function<double(double)>& f) {  // (1/D) tr f(S)
      if (!model_.low_rank()) return numerics::integrate(model_.spectrum_of_S(), f).value;
      return rho * numerics::integrate(model_.spectrum_on_task_subspace(), f).value +
             (1 - rho) * f(0.0);
    };
    const auto [Dl, Etr] = channel_at_root();
    const double VQ = 4 * nu * tr([&](double s) { return s * G(s) * G(s); }) +
                      2 * nu * nu * tr([&](double s) { return G(s) * G(s); });
    const double CQ = -4 * nu * tr([&](double s) { return s * (Gb(s) - P(s)) * G(s); }) +
                      2 * nu * nu * tr([&](double s) { return P(s) * G(s); });
    const double D2 = Dl * Dl, D3 = D2 * Dl;
    MatrixCorrection stein;
    stein.H.on_A = [=](double s) { return -(2 / D2) * (2 * nu * s + nu * nu) * G(s); };
    stein.H.off_A = -(2 / D2) * nu * nu * G(0);
    stein.L.on_A = [=](double s) { return -(2 * nu / D2) * s * G(s); };
    stein.M.on_A = [=](double s) {
      return -4 * nu * s * (Gb(s) - P(s)) / D2 - 8 * nu * Etr * s * G(s) / D3 +
             2 * nu * nu * P(s) / D2 - 4 * nu * nu * Etr * G(s) / D3;
    };
    stein.M.off_A = 2 * nu * nu * P(0) / D2 - 4 * nu * nu * Etr * G(0) / D3;
    source("context_quadratic_forms").matrix = channel_corrections(VQ, CQ, stein);
  }

  // General task spectrum (docs/finite_dim.md §21.14): the first-order change of Gbar and of
  // Gbar^2 + N at the root, f(s) = sum_{j=0..4} a_j (s - z0)^{-j} (the corrections are rational in
  // S with their only pole at z0, bounded at infinity), traced against Sigma:
  // sum_j a_j T_{0,j}(z0) (T_{0,0} = tr Sigma/D = 1). The a_j from f at five points.
  void sigma_weighted_terms(MatrixCorrection& qf) const {
    const Vec& x0 = x0_;
    const double z0 = z0_, k = q_.kappa, qh = x0[QH], mh = x0[MH];
    auto H0 = [=](double s) { return qh * (s - z0); };
    auto G0 = [=](double s) { return mh * s / H0(s); };
    auto N0 = [=](double s) { return (x0[CHIH] * s + x0[CHIBARH]) / (k * H0(s) * H0(s)); };
    auto dG = [&](double s) { return (qf.L.on_A(s) - G0(s) * qf.H.on_A(s)) / H0(s); };
    auto dN = [&](double s) {
      return qf.M.on_A(s) / (k * H0(s) * H0(s)) - 2 * N0(s) * qf.H.on_A(s) / H0(s);
    };
    const SpectralValues v = model_.at(z0, MomentMethod::Exact);
    auto traced = [&](const std::function<double(double)>& f) { return sigma_traced(f, z0, v); };
    qf.sigma_m0 = traced(dG);
    qf.sigma_q0 = traced([&](double s) { return 2 * G0(s) * dG(s) + dN(s); });
  }

  const Params& q_;
  const SpectralModel& model_;
  const Vec& x0_;
  double z0_;
  std::vector<Source> sources_;
};

// The linear response of the saddle point to one source (docs/finite_dim.md §21.2), per unit
// h = 1/D: dx/dh = -J^{-1} dF/dh pushed through the observables, or the task-resolved theory
// for the task laws (§21.6).
class Response {
 public:
  Response(const Params& q, const PerturbedMap& map, const SpectralModel& model,
           const Solution& limit, const Vec& x0)
      : q_(q), map_(map), model_(model), limit_(limit), x0_(x0) {}

  // The exact Jacobian of the unperturbed residual at the root (theory/sensitivity.hpp, the one
  // place where the saddle map's Jacobians are formed and solved); false when it cannot be
  // formed. `f0_norm`: |F(x0)| of this (Exact-moment) map.
  bool linearize(double& f0_norm) {
    const Source none;
    Vec F0;
    if (!saddle_jacobian(q_, model_, x0_, J_) || !map_.residual(x0_, none, 0, F0)) return false;
    // The perturbed map writes the channel's qbarh = K nu / Delta and chibarh = K nu E / Delta^2
    // (docs/finite_dim.md §21.4) where the map of docs/model.md §4.2 writes nu qh and nu chih; at
    // h = 0 the two residuals differ by adding nu times the qh (chih) row to the qbarh
    // (chibarh) row, a constant row operation, so this map's Jacobian is that of §4.2 so
    // transformed.
    const double nu = q_.nu();
    J_.row(QBARH) += nu * J_.row(QH);
    J_.row(CHIBARH) += nu * J_.row(CHIH);
    f0_norm = F0.norm();
    return true;
  }

  // The slope of one source into `slope` and `os` (accumulated); false when a perturbed map
  // leaves the domain. Linear response is additive: the matrix corrections and the task laws
  // go through their own evaluations.
  bool slope_of(const Source& src, Errors& slope, OrderParams& os) {
    Source scalar = src;
    scalar.matrix = MatrixCorrection{};
    scalar.gaussian_norms = false;
    scalar.count_variance = 0;
    bool ok = respond(scalar, slope, os);
    if (ok && src.count_variance > 0) ok = resolved_counts(src.count_variance, slope, os);
    if (ok && src.gaussian_norms) ok = resolved_norms(slope, os);
    if (ok && src.matrix.active) {
      Source matrix;
      matrix.matrix = src.matrix;
      ok = respond(matrix, slope, os);
    }
    return ok;
  }

 private:
  // dx/dh = -J^{-1} dF/dh, then d(observables)/dh, both by central differences in h (the
  // perturbed map is linear in h up to the context's weight shift).
  bool respond(const Source& src, Errors& slope, OrderParams& os) {
    constexpr double h0 = 1e-4;
    Vec Fp, Fm;
    if (!map_.residual(x0_, src, h0, Fp) || !map_.residual(x0_, src, -h0, Fm)) return false;
    const LinearResponse lr =
        linear_response(J_, (Fp - Fm) / (2 * h0), x0_.cwiseAbs().cwiseMax(1e-300));
    if (!lr.ok) return false;
    const Vec dx = lr.dx;
    Errors ep, em;
    OrderParams op, om;
    if (!map_.observables(x0_ + h0 * dx, src, h0, ep, op) ||
        !map_.observables(x0_ - h0 * dx, src, -h0, em, om))
      return false;
    add_scaled(ep, em, -1);  // the differences first, then the scale
    add_scaled(op, om, -1);
    add_scaled(slope, ep, 1 / (2 * h0));
    add_scaled(os, op, 1 / (2 * h0));
    return true;
  }

  // The task-resolved theory (docs/finite_dim.md §21.6, §21.15) with two laws of the tasks,
  // laws of mean 1 whose variances are of order 1/Deff: the slope is Deff times the difference
  // of the errors (second order in the spread, exact for these discrete laws).
  static constexpr double kDeff = 1e4;
  bool difference(const TaskResolvedResult& a, const TaskResolvedResult& b, Errors& slope,
                  OrderParams& os) {
    if (!a.converged() || !b.converged()) return false;
    Errors de = a.error;
    OrderParams dor = a.order;
    add_scaled(de, b.error, -1);  // the differences first, then the scale
    add_scaled(dor, b.order, -1);
    add_scaled(slope, de, kDeff);
    add_scaled(os, dor, kDeff);
    return true;
  }

  // Every task alike: the saddle point written task by task (solved once).
  const TaskResolvedResult& alike() {
    if (!alike_) alike_ = solve_task_resolved(q_, limit_);
    return *alike_;
  }

  // task_counts: relative counts of variance v/Deff (two points) against every task alike.
  bool resolved_counts(double v, Errors& slope, OrderParams& os) {
    const double s = std::sqrt(v / kDeff);
    return difference(solve_task_resolved(q_, limit_, {}, DiscreteLaw{{1 - s, 1 + s}, {0.5, 0.5}}),
                      alike(), slope, os);
  }

  // task_norms: Gaussian minus fixed-norm tasks by their energies on the levels of Sigma
  // (§21.15). Gaussian energies chi_l are independent, mean 1, variance 2/(w_l D) on each level
  // of t_l > 0 (sigma points 1 +- sqrt(L v_l/Deff) on one level at a time, L such levels); a
  // fixed-norm task divides them by its norm sum_l w_l t_l chi_l.
  bool resolved_norms(Errors& slope, OrderParams& os) {
    const auto levels = q_.population_spectrum();
    std::vector<std::size_t> on;
    for (std::size_t l = 0; l < levels.size(); ++l)
      if (levels[l].position > 0) on.push_back(l);
    auto law = [&](bool fixed) { return gaussian_task_energies(q_, kDeff, fixed); };
    // With one level (low-rank tasks) the fixed-norm tasks are all alike.
    const TaskResolvedResult g = solve_task_resolved_levels(q_, limit_, law(false));
    if (on.size() == 1) return difference(g, alike(), slope, os);
    return difference(g, solve_task_resolved_levels(q_, limit_, law(true)), slope, os);
  }

  std::optional<TaskResolvedResult> alike_;
  const Params& q_;
  const PerturbedMap& map_;
  const SpectralModel& model_;
  const Solution& limit_;
  const Vec& x0_;
  Eigen::MatrixXd J_;
};

// Validation, the sizes of D, the D -> infinity solve and the list of sources and omitted
// effects: the result before any linear response.
FiniteDimResult limit_at_sizes(const Params& p, const FiniteDimOptions& options) {
  options.validate();
  p.validate();
  FiniteDimResult r;
  r.options = options;
  r.sized = at_dimension(p, options.dim);
  r.sized.validate_for_saddle_point();
  SolveOptions so = options.solve;
  so.method = Method::Saddle;
  r.limit = solve(r.sized, so);
  r.residual_norm = r.limit.residual_norm;
  for (const auto& name : finite_dim_source_names()) r.sources.push_back({name, {}, {}, {}});
  r.omitted = {"task_directions_channel", "higher_order"};
  return r;
}

}  // namespace

FiniteDimResult solve_finite_dim(const Params& p, const FiniteDimOptions& options) {
  options.validate();
  p.validate();
  FiniteDimResult r = at_dimension(p, options.dim).on_ridgeless_branch()
                          ? detail::solve_finite_dim_ridgeless(p, options)
                          : detail::solve_finite_dim_saddle(p, options);
  detail::add_test_shift(r);
  detail::add_decomposition(r);
  r.bayes_optimal = bayes_optimal_at_dimension(r.sized, options.dim);
  return r;
}

namespace detail {

FiniteDimResult solve_finite_dim_saddle(const Params& p, const FiniteDimOptions& options) {
  FiniteDimResult r = limit_at_sizes(p, options);
  if (!r.limit.converged()) {
    r.status = r.limit.status;
    r.message = "the D -> infinity solve did not converge: " + r.limit.message;
    return failed(r);
  }
  const Params& q = r.sized;
  const SpectralModel model(q);
  const Vec x0 = to_vector(r.limit.order);
  const double z0 = z_at(q, x0);
  const PerturbedMap map(q, model);
  const std::vector<Source> sources = SourceTerms(q, model, x0, z0).build(options.switches);

  Response response(q, map, model, r.limit, x0);
  double f0_norm = 0;
  if (!response.linearize(f0_norm)) {
    r.status = Status::NumericalFailure;
    r.message = "the saddle point's Jacobian is not invertible at the D -> infinity root";
    return failed(r);
  }
  // |F0|: the root of the Exact-moment map (the limit was solved with options.solve's moments).
  r.residual_norm = std::max(r.residual_norm, f0_norm);
  bool ok = true;
  for (std::size_t k = 0; k < sources.size() && ok; ++k) {
    FiniteDimSource& s = r.sources[k];
    s.slope = {0, 0, 0};
    s.order_slope = OrderParams{};
    ok = response.slope_of(sources[k], s.slope, s.order_slope);
  }
  if (ok) sum_sources(r);
  if (!ok || !std::isfinite(r.error.tm + r.error.idg + r.error.odg)) {
    r.status = Status::NumericalFailure;
    r.message = "a source's linear response failed: a perturbed map left the saddle point's "
                "domain (z above the spectrum of S), its linear solve was ill-conditioned, or the "
                "task-resolved theory did not converge";
    return failed(r);
  }
  r.status = Status::Converged;
  r.message = "D -> infinity root at the sizes of D, plus the O(1/D) term of each derived source";
  r.validity = finite_dim_validity(r);
  return r;
}

double matrix_path_gap(const Params& p) {
  const Solution sol = solve(p, {});
  if (!sol.converged()) return std::numeric_limits<double>::infinity();
  const SpectralModel model(p);
  const PerturbedMap map(p, model);
  const Vec x = to_vector(sol.order);
  const OrderParams a = map.matrix_order(x, MatrixCorrection{}, 0);
  const Solution b = observables_at(p, model, model.at(z_at(p, x), MomentMethod::Exact), sol.order);
  double gap = 0;
  for (double d : {a.q - sol.order.q, a.m - sol.order.m, a.chi - sol.order.chi,
                   a.qbar - sol.order.qbar, a.chibar - sol.order.chibar, a.mbar - b.order.mbar,
                   a.m0 - b.order.m0, a.q0 - b.order.q0})
    gap = std::max(gap, std::abs(d));
  return gap;
}

}  // namespace detail

}  // namespace icl::theory
