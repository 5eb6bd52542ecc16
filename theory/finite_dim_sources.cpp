// The per-unit-h terms of the finite-D sources (docs/finite_dim.md §21.3-§21.5, §21.13-§21.15;
// theory/finite_dim_terms.hpp).
#include "theory/finite_dim_terms.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "numerics/spectral_integral.hpp"
#include "theory/finite_dim.hpp"
#include "theory/saddle_map.hpp"

namespace icl::theory::detail {

namespace {

using namespace saddle_map;  // the unknowns' indices Q, M, ..., CHIBARH
using numerics::MomentMethod;
using Vec = SaddleVec;

// Commuting functions of S at order parameters x with spectral argument z (docs/errors_phases.md
// §8.1, docs/finite_dim.md §21.4), of the eigenvalue s: the response G = H^{-1}/kappa,
// Gbar = (mh/qh) S (S - z)^{-1} and P = E[Gamma^T Gamma] = (mh^2 S^2 + (chih S + chibarh)/kappa)
// (qh (S - z))^{-2}.
struct RootFunctions {
  RootFunctions(const Params& q, const SaddleVec& x, double z_)
      : z(z_), kq(q.kappa * x[QH]), ratio(x[MH] / x[QH]), cA(x[MH] * x[MH] / (x[QH] * x[QH])),
        cB(x[CHIH] / (q.kappa * (x[QH] * x[QH]))), cC(x[CHIBARH] / (q.kappa * (x[QH] * x[QH]))) {}
  double G(double s) const { return 1 / (kq * (s - z)); }
  double Gb(double s) const { return ratio * s / (s - z); }
  double P(double s) const { return (cA * s * s + cB * s + cC) / ((s - z) * (s - z)); }
  double z, kq, ratio, cA, cB, cC;
};

// (1/D) tr f(S): over the spectrum of S, for low-rank tasks rho times the integral over its part
// on span(A) plus (1 - rho) f(0).
double trace_of(const SpectralModel& model, double rho, const std::function<double(double)>& f) {
  if (!model.low_rank()) return numerics::integrate(model.spectrum_of_S(), f).value;
  return rho * numerics::integrate(model.spectrum_on_task_subspace(), f).value + (1 - rho) * f(0.0);
}

// The traces (1/D) tr f(S) that the quadratic forms' variance and covariance need
// (docs/finite_dim.md §21.4): S G^2, G^2, S Gbar G, S P G, P G. Gbar - P changes sign on the
// spectrum, so S Gbar G and S P G are traced apart, each of one sign (s - z > 0): the
// quadrature's relative tolerance is then reachable (the difference's integral can vanish, and
// GSL reports a roundoff error).
struct SampleTraces {
  double SG2, G2, SGbG, SPG, PG;
};

SampleTraces traces_of(const SpectralModel& model, double rho, const RootFunctions& f) {
  auto tr = [&](const std::function<double(double)>& g) { return trace_of(model, rho, g); };
  return {tr([&](double s) { return s * f.G(s) * f.G(s); }),
          tr([&](double s) { return f.G(s) * f.G(s); }),
          tr([&](double s) { return s * f.Gb(s) * f.G(s); }),
          tr([&](double s) { return s * f.P(s) * f.G(s); }),
          tr([&](double s) { return f.P(s) * f.G(s); })};
}

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
    const double nu = q_.nu();
    const RootFunctions f(q_, x0_, z0_);
    const SampleTraces t = traces_of(model_, q_.rho, f);
    const auto [Dl, Etr] = channel_at_root();
    const double VQ = 4 * nu * t.SG2 + 2 * nu * nu * t.G2;
    const double CQ = -4 * nu * (t.SGbG - t.SPG) + 2 * nu * nu * t.PG;
    const double D2 = Dl * Dl, D3 = D2 * Dl;
    MatrixCorrection stein;
    stein.H.on_A = [=](double s) { return -(2 / D2) * (2 * nu * s + nu * nu) * f.G(s); };
    stein.H.off_A = -(2 / D2) * nu * nu * f.G(0);
    stein.L.on_A = [=](double s) { return -(2 * nu / D2) * s * f.G(s); };
    stein.M.on_A = [=](double s) {
      return -4 * nu * s * (f.Gb(s) - f.P(s)) / D2 - 8 * nu * Etr * s * f.G(s) / D3 +
             2 * nu * nu * f.P(s) / D2 - 4 * nu * nu * Etr * f.G(s) / D3;
    };
    stein.M.off_A = 2 * nu * nu * f.P(0) / D2 - 4 * nu * nu * Etr * f.G(0) / D3;
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
    auto dG2 = [&](double s) { return 2 * G0(s) * dG(s) + dN(s); };
    qf.sigma_m0 = weight_traced(dG, z0, v.T);
    qf.sigma_q0 = weight_traced(dG2, z0, v.T);
    if (q_.has_test_shift()) {  // the same against C_test (docs/finite_dim.md §21.11)
      const numerics::ResolventMoments U = model_.test_weighted(v, q_.test_eigenvalues());
      qf.test_m = weight_traced(dG, z0, U);
      qf.test_q = weight_traced(dG2, z0, U);
    }
  }

  const Params& q_;
  const SpectralModel& model_;
  const Vec& x0_;
  double z0_;
  std::vector<Source> sources_;
};

// The matrix corrections, per unit h, of context_quadratic_forms and of the along-task Stein
// terms (with `along_task`) for one training sample of scalars xi = (a - 1, eta, b - 1) in the
// exact representation s = (1 + eta) w + n, n perpendicular to w with variance nu b per direction
// (docs/finite_dim.md §21.18): §21.4's formulas with the sample's own weights, the noise nu b
// and the deficit along w nu b (not 1/alpha): D Var(Delta) = a^2 V, D Cov(E, Delta) = a^2 C,
//   V = 4 e^2 nu b tr(S G^2)/D + 2 nu^2 b^2 tr(G^2)/D - 4 d e^2 chi^2,
//   C = -4 e nu b tr(S Gbar G)/D + 4 e^2 nu b tr(S P G)/D + 2 nu^2 b^2 tr(P G)/D + 4 d e (m - e q) chi,
//   dH = K [(e^2 s + nu b) a^3 V/Delta^3 - (2 a^2/Delta^2)(2 e^2 nu b s + nu^2 b^2) G
//          + 4 d a^2 e^2 chi s/Delta^2],
//   dL = K [e s a^3 V/Delta^3 - 2 a^2 e nu b s G/Delta^2 + 2 d a^2 e chi s/Delta^2],
//   dM = K [(e^2 s + nu b) a^3 (-2 C/Delta^3 + 3 E V/Delta^4) + a^2 (4 e nu b s (e P - Gbar)/Delta^2
//          - 8 e^2 nu b E s G/Delta^3 + nu^2 b^2 (2 P/Delta^2 - 4 E G/Delta^3))
//          + d a^2 s (4 e (m - e q)/Delta^2 + 8 e^2 E chi/Delta^3)],
// e = 1 + eta, d = nu b with the along-task terms (else 0), Delta = 1 + a (e^2 chi + nu b chibar),
// E = sigma^2 + a (1 - 2 e m + e^2 q + nu b qbar), at the eigenvalue s of S. At xi = 0 these
// are the first-order terms of §21.4 with the deficit nu in place of 1/alpha (the same slope: the
// along-task noise's variance sigma^2/alpha then sits in the scale, §21.18).
// The corrections are linear in seven functions of s with coefficients that depend on the
// scalars only: 1, s, G, s G, P, s P, s Gbar (G = 1/(kappa qh (s - z)), Gbar = (mh/qh) s/(s - z),
// P = (mh^2 s^2 + (chih s + chibarh)/kappa)/(qh^2 (s - z)^2)). So the mean over the scalars'
// law is taken once, on the coefficients, and every eigenvalue s of the integrals costs a
// combination of the seven (the mean of a function linear in the coefficients is the function of
// their mean).
enum Basis { kOne, kS, kG, kSG, kP, kSP, kSGbar, kBasis };
using BasisCoefficients = std::array<double, 3 * kBasis>;  // dH, dL, dM: [k * kBasis + basis]

class SampleCorrection {
 public:
  SampleCorrection(const Params& q, const SaddleVec& x, const RootFunctions& f,
                    const SampleTraces& t, bool along_task, const ScalarCov& cov, double h)
      : x_(x), f_(f) {
    // The mean over the scalars' law h * cov to first order (docs/finite_dim.md §21.18), the
    // second derivatives by central differences (step 1e-3; the coefficients are rational in xi).
    mean_to_first_order<3 * kBasis>(
        cov, h, 1e-3,
        [&](const ScalarVec& xi, double* v) {
          const BasisCoefficients c = of(q, t, along_task, xi);
          std::copy(c.begin(), c.end(), v);
        },
        c_.data());
  }

  // (dH, dL, dM) at the eigenvalue s.
  void at(double s, double out[3]) const {
    const double basis[kBasis] = {1, s, f_.G(s), s * f_.G(s), f_.P(s), s * f_.P(s), s * f_.Gb(s)};
    for (int k = 0; k < 3; ++k) {
      double v = 0;
      for (int i = 0; i < kBasis; ++i) v += c_[k * kBasis + i] * basis[i];
      out[k] = v;
    }
  }

 private:
  // The coefficients for one sample of scalars xi = (a - 1, eta, b - 1).
  BasisCoefficients of(const Params& q, const SampleTraces& t, bool along, const ScalarVec& xi) const {
    const double nu = q.nu(), K = q.tau / q.kappa;
    const double chi = x_[CHI], m = x_[M], qq = x_[Q];
    const double a = 1 + xi[A_NORM], e = 1 + xi[ETA], b = 1 + xi[B_NOISE];
    const double d = along ? nu * b : 0, nb = nu * b, e2 = e * e;
    const double Dl = 1 + a * (e2 * chi + nb * x_[CHIBAR]);
    const double E = q.sigma * q.sigma + a * (1 - 2 * e * m + e2 * qq + nb * x_[QBAR]);
    const double V = 4 * e2 * nb * t.SG2 + 2 * nb * nb * t.G2 - 4 * d * e2 * chi * chi;
    const double C = -4 * e * nb * t.SGbG + 4 * e2 * nb * t.SPG + 2 * nb * nb * t.PG +
                     4 * d * e * (m - e * qq) * chi;
    const double D2 = Dl * Dl, D3 = D2 * Dl, D4 = D3 * Dl, a2 = a * a, a3 = a2 * a;
    const double W = a3 * (-2 * C / D3 + 3 * E * V / D4);
    BasisCoefficients c{};
    // dH = K [(e^2 s + nu b) a^3 V/Delta^3 - (2 a^2/Delta^2)(2 e^2 nu b s + nu^2 b^2) G
    //         + 4 d a^2 e^2 chi s/Delta^2]
    c[0 * kBasis + kOne] = K * nb * a3 * V / D3;
    c[0 * kBasis + kS] = K * (e2 * a3 * V / D3 + 4 * d * a2 * e2 * chi / D2);
    c[0 * kBasis + kSG] = -K * 4 * a2 * e2 * nb / D2;
    c[0 * kBasis + kG] = -K * 2 * a2 * nb * nb / D2;
    // dL = K [e s a^3 V/Delta^3 - 2 a^2 e nu b s G/Delta^2 + 2 d a^2 e chi s/Delta^2]
    c[1 * kBasis + kS] = K * (e * a3 * V / D3 + 2 * d * a2 * e * chi / D2);
    c[1 * kBasis + kSG] = -K * 2 * a2 * e * nb / D2;
    // dM = K [(e^2 s + nu b) W + a^2 (4 e nu b s (e P - Gbar)/Delta^2 - 8 e^2 nu b E s G/Delta^3
    //         + nu^2 b^2 (2 P/Delta^2 - 4 E G/Delta^3)) + d a^2 s (4 e (m - e q)/Delta^2
    //         + 8 e^2 E chi/Delta^3)]
    c[2 * kBasis + kOne] = K * nb * W;
    c[2 * kBasis + kS] = K * (e2 * W + d * a2 * (4 * e * (m - e * qq) / D2 + 8 * e2 * E * chi / D3));
    c[2 * kBasis + kSP] = K * a2 * 4 * e2 * nb / D2;
    c[2 * kBasis + kSGbar] = -K * a2 * 4 * e * nb / D2;
    c[2 * kBasis + kSG] = -K * a2 * 8 * e2 * nb * E / D3;
    c[2 * kBasis + kP] = K * a2 * nb * nb * 2 / D2;
    c[2 * kBasis + kG] = -K * a2 * nb * nb * 4 * E / D3;
    return c;
  }

  SaddleVec x_;
  RootFunctions f_;
  BasisCoefficients c_{};
};

}  // namespace

MatrixCorrection sample_corrections(const Params& q, const SpectralModel& model, const SaddleVec& x,
                                    double z, const ScalarCov& cov, double h, bool along_task) {
  const RootFunctions f(q, x, z);
  const SampleTraces t = traces_of(model, q.rho, f);
  // The three corrections at one s come together; the integrands ask for them at the same s in
  // turn, so the last s is kept (one evaluation per s instead of three).
  struct Last {
    double s = std::numeric_limits<double>::quiet_NaN(), v[3] = {0, 0, 0};
  };
  auto last = std::make_shared<Last>();
  const auto one = std::make_shared<const SampleCorrection>(q, x, f, t, along_task, cov, h);
  auto get = [one, last](double s, int k) {
    if (!(s == last->s)) {
      one->at(s, last->v);
      last->s = s;
    }
    return last->v[k];
  };
  MatrixCorrection c;
  c.active = true;
  c.H.on_A = [get](double s) { return get(s, 0); };
  c.L.on_A = [get](double s) { return get(s, 1); };
  c.M.on_A = [get](double s) { return get(s, 2); };
  c.H.off_A = get(0, 0);  // S = 0 off span(A)
  c.L.off_A = get(0, 1);
  c.M.off_A = get(0, 2);
  return c;
}

std::vector<Source> source_terms(const Params& q, const SpectralModel& model, const SaddleVec& x0,
                                 double z0, const FiniteDSwitches& sw) {
  return SourceTerms(q, model, x0, z0).build(sw);
}

}  // namespace icl::theory::detail
