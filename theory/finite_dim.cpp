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
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "numerics/error.hpp"
#include "numerics/spectral_integral.hpp"
#include "theory/finite_dim_channel.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/finite_dim_terms.hpp"
#include "theory/saddle_map.hpp"
#include "theory/sensitivity.hpp"
#include "theory/spectral_model.hpp"
#include "theory/task_resolved.hpp"

namespace icl::theory {

using numerics::MomentMethod;
using numerics::Status;

namespace {

using namespace saddle_map;  // kN and the unknowns' indices Q, M, ..., CHIBARH
using detail::channel_mean;
using detail::MatrixCorrection;
using detail::Source;
using detail::source_terms;
using Vec = detail::SaddleVec;
using Mat = Eigen::Matrix<double, kN, kN>;

double z_at(const Params& p, const Vec& x) { return -(p.lambda + x[QBARH]) / x[QH]; }

// A shifted protocol's order parameters m_C = tr(C_test Gbar)/D, q_C = tr(C_test (Gbar^2 + N))/D
// (docs/finite_dim.md §21.11); NaN without one.
struct TestTraces {
  double m = std::numeric_limits<double>::quiet_NaN();
  double q = std::numeric_limits<double>::quiet_NaN();
};

class PerturbedMap {
 public:
  PerturbedMap(const Params& p, const SpectralModel& model)
      : p_(p), model_(model), test_(p.test_eigenvalues()) {}

  // Spectral values at z with the bias h * bias added.
  SpectralValues values(double z, const SpectralBias& bias, double h) const {
    return with_bias(model_.at(z, MomentMethod::Exact), bias, h);
  }

  // A shifted protocol's test-weighted values from the spectral values v0 at z, with the bias
  // h * bias (nullopt without a shifted protocol).
  std::optional<numerics::ResolventMoments> test_values(const SpectralValues& v0,
                                                        const SpectralBias& bias, double h) const {
    if (test_.empty()) return std::nullopt;
    return biased_test_values(model_, v0, test_, bias, h);
  }

  // The order parameters of the Gamma equation with matrix corrections h * c (low-rank tasks;
  // docs/finite_dim.md §21.4): Gbar = L H^{-1}, the noise's second moment M H^{-2} / kappa, and
  //   m = tr(Gbar S)/D, q = tr((Gbar^2 + N) S)/D, qbar = tr(Gbar^2 + N)/D,
  //   chi = tr(S H^{-1})/(kappa D), chibar = tr(H^{-1})/(kappa D),
  //   mbar = tr(Gbar)/D, m0 = tr(Sigma Gbar)/D, q0 = tr(Sigma (Gbar^2 + N))/D,
  // each trace rho * (integral over the spectrum of S on span(A)) + (1 - rho) * (value at S = 0).
  // With c = 0 these are the formulas of docs/model.md §4.2 and §4.2's observables (a test checks
  // it).
  // With a shifted protocol also its traces into *tt: tr(C_test X)/D = l_A (1/D) tr(P_A X) +
  // l_perp (1/D) tr(P_perp X) for C_test = l_A P_A + l_perp P_perp.
  OrderParams matrix_order(const Vec& x, const MatrixCorrection& c, double h,
                           TestTraces* tt = nullptr) const {
    if (!model_.low_rank()) return matrix_order_general(x, c, h, tt);
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
    if (tt && !test_.empty()) {
      const double lA = test_[0], lperp = test_.size() > 1 ? test_[1] : 0.0;
      tt->m = lA * rho * IG + lperp * (1 - rho) * Goff;
      tt->q = lA * rho * I2 + lperp * (1 - rho) * (Goff * Goff + Noff);
    }
    return o;
  }

  // The same for a general task spectrum (docs/finite_dim.md §21.14): every corrected function of
  // S commutes with S, so the traces are integrals over the whole spectrum of S (its atom at 0
  // included); m0 and q0 are those of docs/errors_phases.md §7 at x plus h times the corrections'
  // Sigma-weighted traces at the root (first order: enough for the slope).
  OrderParams matrix_order_general(const Vec& x, const MatrixCorrection& c, double h,
                                   TestTraces* tt) const {
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
    if (tt && sol.test_shift) {
      tt->m = sol.test_shift->m + h * c.test_m;
      tt->q = sol.test_shift->q + h * c.test_q;
    }
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
  // h * q_P / alpha_t for the test context); with a shifted protocol also its error (§21.11:
  // the IDG formula with C_test in place of Sigma), NaN without one.
  bool observables(const Vec& x, const Source& s, double h, Errors& err, OrderParams& o,
                   double& shift) const {
    const double z = z_at(p_, x);
    if (!(x[QH] > 0) || !std::isfinite(z) || z >= model_.lower_edge()) return false;
    TestTraces tt;
    if (s.matrix.active) {
      // docs/errors_phases.md §7 with the order parameters of matrix_order.
      o = matrix_order(x, s.matrix, h, &tt);
      err = errors_from(p_, o);
    } else {
      const SpectralValues v0 = model_.at(z, MomentMethod::Exact);
      const auto U = test_values(v0, s.bias, h);
      const Solution sol = observables_at(p_, model_, with_bias(v0, s.bias, h),
                                          order_from_vector(x), U ? &*U : nullptr);
      err = sol.error;
      o = sol.order;
      if (sol.test_shift) tt = {sol.test_shift->m, sol.test_shift->q};
    }
    OrderParams oc = o;
    oc.m0 = tt.m;
    oc.q0 = tt.q;
    shift = errors_from(p_, oc).idg;
    if (s.test_context) {
      // docs/finite_dim.md §21.3: (1/L_t) tr(Gamma C Gamma^T)/D = q_P / (alpha_t D).
      const double at = p_.effective_alpha_test();
      err.tm += h * o.q / at;
      err.idg += h * o.q0 / at;
      err.odg += h * o.qbar / at;
      shift += h * tt.q / at;
    }
    return true;
  }

 private:
  const Params& p_;
  const SpectralModel& model_;
  std::vector<double> test_;  // C_test's eigenvalue per population level; empty without a shift
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
  add_scaled(r.error, r.second_order, 1);  // docs/finite_dim.md §21.18
}

Errors channel_slope(const std::vector<FiniteDimSource>& sources) {
  Errors sum{0, 0, 0};
  for (const FiniteDimSource& s : sources)
    if (s.name.rfind("task_", 0) != 0) add_scaled(sum, s.slope, 1);
  return sum;
}

std::vector<FiniteDimSource> unset_sources() {
  std::vector<FiniteDimSource> out;
  for (const auto& name : finite_dim_source_names()) out.push_back({name, {}, {}, {}});
  return out;
}

std::vector<std::string> not_derived() { return {"task_directions_channel", "higher_order"}; }

FiniteDimResult failed(FiniteDimResult r) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  r.validity = {false, "no finite-D prediction (" + r.message + ")", {nan, nan, nan},
                {nan, nan, nan}};
  r.error = {nan, nan, nan};
  r.slope = {nan, nan, nan};
  r.second_order = {nan, nan, nan};
  r.order = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan};
  for (auto& s : r.sources) {
    s.slope = s.correction = {nan, nan, nan};
    s.order_slope = r.order;
    s.shift_slope = nan;
  }
  return r;
}

}  // namespace detail

namespace {

using detail::failed;
using detail::sum_sources;

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

  // The Jacobian of linearize() (the chord steps of the channel's second order use it too).
  const Eigen::MatrixXd& jacobian() const { return J_; }

  // The slope of one source into s.slope, s.order_slope and s.shift_slope (accumulated); false
  // when a perturbed map leaves the domain. Linear response is additive: the matrix corrections
  // and the task laws go through their own evaluations.
  bool slope_of(const Source& src, FiniteDimSource& s) {
    Source scalar = src;
    scalar.matrix = MatrixCorrection{};
    scalar.gaussian_norms = false;
    scalar.count_variance = 0;
    bool ok = respond(scalar, s);
    if (ok && src.count_variance > 0) ok = resolved_counts(src.count_variance, s);
    if (ok && src.gaussian_norms) ok = resolved_norms(s);
    if (ok && src.matrix.active) {
      Source matrix;
      matrix.matrix = src.matrix;
      ok = respond(matrix, s);
    }
    return ok;
  }

 private:
  // dx/dh = -J^{-1} dF/dh, then d(observables)/dh, both by central differences in h (the
  // perturbed map is linear in h up to the context's weight shift).
  bool respond(const Source& src, FiniteDimSource& s) {
    constexpr double h0 = 1e-4;
    Vec Fp, Fm;
    if (!map_.residual(x0_, src, h0, Fp) || !map_.residual(x0_, src, -h0, Fm)) return false;
    const LinearResponse lr =
        linear_response(J_, (Fp - Fm) / (2 * h0), x0_.cwiseAbs().cwiseMax(1e-300));
    if (!lr.ok) return false;
    const Vec dx = lr.dx;
    Errors ep, em;
    OrderParams op, om;
    double shp = 0, shm = 0;
    if (!map_.observables(x0_ + h0 * dx, src, h0, ep, op, shp) ||
        !map_.observables(x0_ - h0 * dx, src, -h0, em, om, shm))
      return false;
    add_scaled(ep, em, -1);  // the differences first, then the scale
    add_scaled(op, om, -1);
    add_scaled(s.slope, ep, 1 / (2 * h0));
    add_scaled(s.order_slope, op, 1 / (2 * h0));
    s.shift_slope += (shp - shm) / (2 * h0);
    return true;
  }

  // The task-resolved theory (docs/finite_dim.md §21.6, §21.15) with two laws of the tasks,
  // laws of mean 1 whose variances are of order 1/Deff: the slope is Deff times the difference
  // of the errors (second order in the spread, exact for these discrete laws).
  static constexpr double kDeff = 1e4;
  bool difference(const TaskResolvedResult& a, const TaskResolvedResult& b, FiniteDimSource& s) {
    if (!a.converged() || !b.converged()) return false;
    Errors de = a.error;
    OrderParams dor = a.order;
    add_scaled(de, b.error, -1);  // the differences first, then the scale
    add_scaled(dor, b.order, -1);
    add_scaled(s.slope, de, kDeff);
    add_scaled(s.order_slope, dor, kDeff);
    s.shift_slope += (a.shift - b.shift) * kDeff;
    return true;
  }

  // Every task alike: the saddle point written task by task (solved once).
  const TaskResolvedResult& alike() {
    if (!alike_) alike_ = solve_task_resolved(q_, limit_);
    return *alike_;
  }

  // task_counts: relative counts of variance v/Deff (two points) against every task alike.
  bool resolved_counts(double v, FiniteDimSource& s) {
    const double d = std::sqrt(v / kDeff);
    return difference(solve_task_resolved(q_, limit_, {}, DiscreteLaw{{1 - d, 1 + d}, {0.5, 0.5}}),
                      alike(), s);
  }

  // task_norms: Gaussian minus fixed-norm tasks by their energies on the levels of Sigma
  // (§21.15). Gaussian energies chi_l are independent, mean 1, variance 2/(w_l D) on each level
  // of t_l > 0 (sigma points 1 +- sqrt(L v_l/Deff) on one level at a time, L such levels); a
  // fixed-norm task divides them by its norm sum_l w_l t_l chi_l.
  bool resolved_norms(FiniteDimSource& s) {
    const auto levels = q_.population_spectrum();
    std::vector<std::size_t> on;
    for (std::size_t l = 0; l < levels.size(); ++l)
      if (levels[l].position > 0) on.push_back(l);
    auto law = [&](bool fixed) { return gaussian_task_energies(q_, kDeff, fixed); };
    // With one level (low-rank tasks) the fixed-norm tasks are all alike.
    const TaskResolvedResult g = solve_task_resolved_levels(q_, limit_, law(false));
    if (on.size() == 1) return difference(g, alike(), s);
    return difference(g, solve_task_resolved_levels(q_, limit_, law(true)), s);
  }

  std::optional<TaskResolvedResult> alike_;
  const Params& q_;
  const PerturbedMap& map_;
  const SpectralModel& model_;
  const Solution& limit_;
  const Vec& x0_;
  Eigen::MatrixXd J_;
};

// The per-sample channel beyond first order (docs/finite_dim.md §21.18): the perturbed map with
// the channel's sources only (query norms, the context's scale and noise level, the quadratic
// forms and along-task Stein terms, the test context) is solved at finite h = 1/D, not
// linearized; its errors minus the limit minus h times its first-order slope are the rest.
class ChannelRest {
 public:
  ChannelRest(const Params& q, const SpectralModel& model, const PerturbedMap& map, const Vec& x0,
              const FiniteDSwitches& sw)
      : q_(q), model_(model), map_(map), x0_(x0), sw_(sw) {
    // The law per unit h in the exact representation (§21.18): the query norm (Var a = 2/D), the
    // scale along w with the along-task noise (Var = (2 + sigma^2)/L), the noise level (2/L) and
    // their covariance (2/L); the S weight c1 = (1 + eta)^2 - nu b / D.
    if (!sw.sphere_queries) src_.law.cov(detail::A_NORM, detail::A_NORM) = 2;
    if (!sw.gaussian_context) {
      const double a = 1 / q.alpha;
      src_.law.cov(detail::ETA, detail::ETA) = (2 + q.sigma * q.sigma) * a;
      src_.law.cov(detail::ETA, detail::B_NOISE) = src_.law.cov(detail::B_NOISE, detail::ETA) =
          src_.law.cov(detail::B_NOISE, detail::B_NOISE) = 2 * a;
      src_.law.weight_shift = -q.nu();
    }
    src_.test_context = true;
  }

  // The rest at dimension D into `rest`, given the map's Jacobian J at the root and its
  // first-order slope (the sum of the channel sources' slopes, by linear response); false when a
  // solve fails.
  bool at(double D, const Eigen::MatrixXd& J, const Errors& slope, Errors& rest) {
    Errors e0, ex;
    OrderParams o;
    double shift = 0;
    if (!map_.observables(x0_, Source{}, 0, e0, o, shift)) return false;
    // The exact law of the scalars at D (8 points per variable; 8 and 14 agree to 1e-4).
    const std::vector<detail::ScalarNode> law =
        detail::exact_scalar_law(q_, D, !sw_.sphere_queries, !sw_.gaussian_context, 8);
    if (!errors_at(J, 1 / D, &law, ex)) return false;
    const double h = 1 / D;
    rest = {ex.tm - e0.tm - h * slope.tm, ex.idg - e0.idg - h * slope.idg,
            ex.odg - e0.odg - h * slope.odg};
    return std::isfinite(rest.tm + rest.idg + rest.odg);
  }

 private:
  // The errors at the root of the map at h: the channel's mean over `law` (else over the
  // covariance to first order), the matrix corrections at the current x (dressed by the law's
  // covariance to first order), by a chord iteration with the Jacobian J of the root x0.
  bool errors_at(const Eigen::MatrixXd& J, double h, const std::vector<detail::ScalarNode>* law,
                 Errors& err) {
    Source s = src_;
    s.law.exact = law;
    if (law) s.law.weight_shift = 0;  // the exact law carries each sample's shift
    auto refresh = [&](const Vec& x) {
      s.matrix = detail::sample_corrections(q_, model_, x, z_at(q_, x), src_.law.cov, h,
                                            !sw_.gaussian_context);
    };
    const Vec scale = x0_.cwiseAbs().cwiseMax(1e-300);
    Vec x = x0_, F;
    // Chord steps until the scaled step is below 1e-12, or below 1e-9 and no longer shrinking
    // (the map's own rounding and quadrature floor, a relative 1e-11 to 1e-10 near lambda -> 0
    // where chi ~ 1/lambda); a last step above 1e-8 did not converge.
    double step = 1, before = 2;
    int it = 0;
    for (; it < 200 && step > 1e-12 && (step > 1e-9 || step < 0.5 * before); ++it) {
      refresh(x);
      if (!map_.residual(x, s, h, F)) return false;
      const LinearResponse lr = linear_response(J, F, scale);
      if (!lr.ok) return false;
      x += Vec(lr.dx);
      before = step;
      step = Vec(lr.dx).cwiseQuotient(scale).cwiseAbs().maxCoeff();
    }
    if (!(step <= 1e-8)) return false;
    refresh(x);
    OrderParams o;
    double shift = 0;
    return map_.observables(x, s, h, err, o, shift);
  }

  const Params& q_;
  const SpectralModel& model_;
  const PerturbedMap& map_;
  const Vec& x0_;
  FiniteDSwitches sw_;
  Source src_;
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
  r.sources = detail::unset_sources();
  r.omitted = detail::not_derived();
  return r;
}

}  // namespace

FiniteDimResult solve_finite_dim(const Params& p, const FiniteDimOptions& options) {
  options.validate();
  p.validate();
  const bool ridgeless = at_dimension(p, options.dim).on_ridgeless_branch();
  FiniteDimResult r;
  try {
    r = ridgeless ? detail::solve_finite_dim_ridgeless(p, options)
                  : detail::solve_finite_dim_saddle(p, options);
  } catch (const NumericalError& e) {
    // A quadrature or solve inside a source's terms failed: a result with that status and NaN
    // values, as solve() reports its own (docs/finite_dim.md §21.8), not an exception.
    r = FiniteDimResult{};
    r.options = options;
    r.sized = at_dimension(p, options.dim);
    SolveOptions so = options.solve;
    so.method = ridgeless ? Method::Letey : Method::Saddle;
    r.limit = solve(r.sized, so);
    r.sources = detail::unset_sources();
    r.omitted = detail::not_derived();
    r.status = Status::NumericalFailure;
    r.residual_norm = std::numeric_limits<double>::infinity();
    r.message = std::string("a finite-D term could not be computed: ") + e.what();
    r = failed(r);
  }
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
  const std::vector<Source> sources = source_terms(q, model, x0, z0, options.switches);

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
    s.shift_slope = 0;
    ok = response.slope_of(sources[k], s);
  }
  // The per-sample channel beyond first order (docs/finite_dim.md §21.18; low-rank tasks: a
  // general spectrum keeps it 0). Where its solve at finite D fails (far outside the expansion's
  // range, e.g. D = 4) it stays 0 and is listed in `omitted`.
  r.second_order = {0, 0, 0};
  if (ok && model.low_rank()) {
    bool rest = false;
    try {
      rest = ChannelRest(q, model, map, x0, options.switches)
                 .at(options.dim, response.jacobian(), detail::channel_slope(r.sources),
                     r.second_order);
    } catch (const NumericalError&) {
      rest = false;  // a quadrature of the map at finite h
    }
    if (!rest) {
      r.second_order = {0, 0, 0};
      r.omitted.push_back(std::string(detail::kChannelSecondOrder));
    }
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
