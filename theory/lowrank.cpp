// Solvers of the low-rank replica theory (docs/model.md §4-§5, docs/spectral.md §6,
// docs/errors_phases.md §7-§11).
//
// Notation: x = (q, m, chi, qbar, chibar, qh, mh, chih, qbarh, chibarh) are the ten unknowns of
// the replica-symmetric saddle point; R_{k,j} = (1/D) tr S^k (S - z)^{-j} and
// T_{k,j} = (1/D) tr Sigma S^k (S - z)^{-j} come from theory/spectral_model.hpp.
#include "theory/lowrank.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <ceres/jet.h>

#include "numerics/enum_names.hpp"
#include "numerics/error.hpp"
#include "theory/letey_formulas.hpp"
#include "theory/observables.hpp"
#include "theory/param_path.hpp"
#include "theory/saddle_map.hpp"
#include "theory/sensitivity.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

using numerics::MomentMethod;
using numerics::Status;

namespace {
constexpr std::pair<Method, const char*> kMethodNames[] = {
    {Method::Saddle, "saddle"}, {Method::Reduced, "reduced"}, {Method::Letey, "letey"}};
constexpr std::pair<Regime, const char*> kRegimeNames[] = {
    {Regime::TaskRich, "task-rich"},
    {Regime::TaskPoor, "task-poor"},
    {Regime::Boundary, "boundary"}};
}  // namespace

const char* to_string(Method m) { return numerics::name_of(m, kMethodNames); }
Method method_from_string(const std::string& s) {
  return numerics::value_of(s, kMethodNames, "method");
}
const char* to_string(Regime r) { return numerics::name_of(r, kRegimeNames); }

namespace {

// The regime of valid parameters (the solvers validate once, before any of this file's steps).
Regime regime_of(const Params& p) {
  // rank S inside span(A) is min(r, M0): full when rho < kappa (docs/errors_phases.md §10.1).
  const double rank = p.structural_rank();  // rho for the paper's low-rank tasks
  const double tol = 1e-12 * std::max(rank, p.kappa);
  if (std::abs(rank - p.kappa) <= tol) return Regime::Boundary;
  return rank < p.kappa ? Regime::TaskRich : Regime::TaskPoor;
}

}  // namespace

Regime regime(const Params& p) {
  p.validate();
  return regime_of(p);
}

double critical_rho(const Params& p) {
  p.validate();
  return p.kappa;
}

bool has_transition(const Params& p) {
  p.validate();
  return p.kappa < 1.0;
}

double interpolation_tau() { return 1.0; }

double atom_mass(const Params& p) {
  p.validate();
  return std::max(0.0, 1.0 - p.kappa / p.structural_rank());
}

namespace {

using saddle_map::kN;
using namespace saddle_map;  // the unknowns' indices Q, M, ..., CHIBARH

// The spectral values the residual uses, and their z-derivatives (dR_{k,j}/dz = j R_{k,j+1}).
struct SpectralInputs {
  double R32, R22, R12, R02, R21, R11, R01;
  double dR32, dR22, dR12, dR02, dR21, dR11, dR01;
};

SpectralInputs inputs_from(const SpectralValues& v) {
  const auto& R = v.R;
  return {R(3, 2), R(2, 2), R(1, 2), R(0, 2), R(2, 1), R(1, 1), R(0, 1),
          2 * R(3, 3), 2 * R(2, 3), 2 * R(1, 3), 2 * R(0, 3), R(2, 2), R(1, 2), R(0, 2)};
}


double z_of(const Params& p, double qh, double qbarh) { return -(p.lambda + qbarh) / qh; }

// Observables (errors, decomposition, m0, q0, mbar) from the order parameters and the spectral
// values at z (docs/errors_phases.md §7, §8; the formulas are theory/observables.hpp's, written
// once for doubles and Jets). o.q, o.m, o.qbar must be set.
using Coefficients = CoefficientsT<double>;

Coefficients coefficients_of(const Params& p, const OrderParams& o) {
  const double qh2 = o.qhat * o.qhat;
  return {o.mhat * o.mhat / qh2, o.chihat / (p.kappa * qh2), o.chibarhat / (p.kappa * qh2),
          o.mhat / o.qhat};
}

Components components(const ComponentsT<double>& c) { return {c.algo, c.mem, c.structural}; }

void fill_observables(const Params& p, const SpectralModel& model, const SpectralValues& v,
                      const Coefficients& k, Solution& s,
                      const numerics::ResolventMoments* given_U = nullptr) {
  std::optional<numerics::ResolventMoments> U;
  std::vector<double> levels;
  if (p.has_test_shift()) {
    levels = p.test_eigenvalues();
    U = given_U ? *given_U : model.test_weighted(v, levels);
  }
  OrderParams& o = s.order;
  const ObservablesT<double> ob = observables(p, v.R, v.T, U ? &*U : nullptr, o.q, o.m, o.qbar, k);
  o.mbar = ob.mbar;
  o.m0 = ob.m0;
  o.q0 = ob.q0;
  s.decomposition = {components(ob.d_tm), components(ob.d_idg), components(ob.d_odg)};
  if (ob.shift) {
    TestShift t;
    t.overlap = p.test_overlap.value_or(std::numeric_limits<double>::quiet_NaN());
    t.levels = levels;
    t.decomposition = components(ob.d_shift);
    t.error = *ob.shift;
    t.m = ob.m_shift;
    t.q = ob.q_shift;
    s.test_shift = t;
  }
  s.error = {ob.tm, ob.idg, ob.odg};
  s.z = ob.z;
  s.nu = p.nu();
  s.e = ob.e;
  s.regime = regime_of(p);
}

// Newton's method on Phi below (lambda > 0), with g' from the measure's exact derivative: the
// same Phi as the bracketed search (g(z) = S.stieltjes(z)), in 3-4 evaluations of g and g' where
// the bracketed search needs about 15 of g. Phi is increasing and concave in xi > 0 (xi g(-xi -
// nu) = int xi / (s + nu + xi) dmu(s) and -kappa lambda / xi are), so Newton from below the root
// increases monotonically to it, and a step from above lands below it (or at 0 or less: then
// the step is shortened). The start: g(z) >= 1 / (m1 - z) (Jensen, m1 the mean of S), so the
// positive root xi0 of the one-atom Phi, tau xi^2 + ((tau - 1) c - kl) xi - kl c = 0 with
// c = nu + m1, kl = kappa lambda, has Phi(xi0) >= 0: xi0 lies at or above the root, and is the
// root for a one-atom S and asymptotically for small and large lambda. Both parts of Phi have
// |Phi''| <= 2 Phi' / xi, so the error after a Newton step s is at most s^2 / xi: it stops after
// a step of relative size <= 1e-8 (error <= 1e-16 relative, below the rounding of Phi itself).
// Returns 0 when it does not converge (the caller then uses the bracketed search).
double newton_xi(const Params& p, const numerics::SpectralMeasure& S, double nu) {
  const double kl = p.kappa * p.lambda;
  const double c = nu + S.raw_moment(1);
  const double b = (p.tau - 1.0) * c - kl;
  const double d = std::sqrt(b * b + 4.0 * p.tau * kl * c);
  // The positive root without cancellation.
  double xi = b >= 0 ? 2.0 * kl * c / (b + d) : (d - b) / (2.0 * p.tau);
  if (!(xi > 0) || !std::isfinite(xi)) return 0.0;
  for (int it = 0; it < 60; ++it) {
    const double z = -xi - nu;
    double gs[2];  // g and g', gs[0] the same number as S.stieltjes(z)
    S.stieltjes_derivatives(z, 1, gs);
    const double g = gs[0], g1 = gs[1];
    const double f = p.tau - 1.0 + xi * g - kl / xi;
    if (f == 0.0) return xi;
    const double df = g - xi * g1 + kl / (xi * xi);
    if (!(df > 0) || !std::isfinite(f)) return 0.0;
    const double step = f / df;
    double next = xi - step;
    if (!(next > 0)) {
      next = xi * 1e-3;  // overshot from above: the root lies in (0, xi)
    } else if (std::abs(step) <= 1e-8 * next) {
      return next;
    }
    xi = next;
  }
  return 0.0;
}

// The scalar reduction (docs/model.md §5.1). xi = lambda / qh solves
//   Phi(xi) = tau - 1 + xi g(-xi - nu) - kappa lambda / xi = 0,
// increasing in xi (from -inf to tau), so the root is unique; lambda = 0, tau > 1 gives xi = 0.
double solve_xi(const Params& p, const SpectralModel& model, MomentMethod method) {
  const double nu = p.nu();
  auto g = [&](double z) {
    return method == MomentMethod::Exact
               ? model.spectrum_of_S().stieltjes(z)
               : numerics::resolvent_moment_quadrature(model.spectrum_of_S(), z, 0, 1);
  };
  // Callers validate_for_saddle_point(): lambda = 0 comes with tau > 1, where xi = 0. (The
  // ridgeless tau < 1 root of the same equation is solved by the Letey/Lu method itself.)
  if (p.lambda == 0) return 0.0;
  auto phi = [&](double xi) { return p.tau - 1.0 + xi * g(-xi - nu) - p.kappa * p.lambda / xi; };
  if (method == MomentMethod::Exact) {
    const double xi = newton_xi(p, model.spectrum_of_S(), nu);
    if (xi > 0) return xi;
  }
  numerics::ScalarRootOptions opt;
  opt.hard_lo = 1e-300;
  opt.hard_hi = 1e300;
  const double guess = std::max(1e-8, p.lambda);
  return numerics::bracketed_root(phi, guess / 2, guess * 2, opt).x;
}

// The reduced solution at xi = lambda/qh (docs/model.md §5.1): with mh = qh the spectral
// argument is z = -xi - nu (v = model.at(z)) and Gamma's coefficients are A = 1, B = e, C = e nu
// with
//   e = (s2 - 2m + a + nu b) / (tau - B),  B = b + 2 nu c_ + nu^2 g'.
// Everything here is finite also in the ridgeless limit lambda -> 0+ at fixed xi (tau < 1),
// where qh = lambda/xi -> 0; the conjugates are filled by the caller when qh > 0.
Solution reduced_observables(const Params& p, const SpectralModel& model, const SpectralValues& v) {
  const ReducedCore<double> r = reduced_core(p, v.R);
  Solution s;
  s.params = p;
  OrderParams& o = s.order;
  o.m = r.m;
  o.q = r.q;
  o.qbar = r.qbar;
  fill_observables(p, model, v, r.coefficients(), s);
  return s;
}

// ... plus the conjugates and responses (qh > 0): mh = qh, qbarh = nu qh, chih = e kappa qh^2,
// chibarh = nu chih, chi = (1/D) tr S (S-z)^{-1} / (kappa qh), chibar = g / (kappa qh).
// v = model.at(-xi - nu) as for reduced_observables.
Solution reduced_solution(const Params& p, const SpectralModel& model, const SpectralValues& v,
                          double xi) {
  Solution s = reduced_observables(p, model, v);
  const double nu = p.nu();
  const double qh = p.lambda > 0 ? p.lambda / xi : (p.tau - 1.0) / p.kappa;
  OrderParams& o = s.order;
  o.qhat = o.mhat = qh;
  o.qbarhat = nu * qh;
  o.chihat = s.e * p.kappa * qh * qh;
  o.chibarhat = nu * o.chihat;
  o.chi = v.R(1, 1) / (p.kappa * qh);
  o.chibar = v.R(0, 1) / (p.kappa * qh);
  return s;
}

// Every value of a LastIterate NaN: "not available".
LastIterate unavailable() {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  const Components c{nan, nan, nan};
  LastIterate v;
  v.order = {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan};
  v.error = {nan, nan, nan};
  v.decomposition = {c, c, c};
  v.z = v.e = nan;
  return v;
}

// The values of v in s; the shifted protocol's values are NaN unless v carries them (its
// overlap and levels stay: they are parameters).
void set_values(Solution& s, const LastIterate& v) {
  s.order = v.order;
  s.error = v.error;
  s.decomposition = v.decomposition;
  s.z = v.z;
  s.e = v.e;
  if (v.test_shift) {
    s.test_shift = v.test_shift;
  } else if (s.params.has_test_shift()) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    TestShift t;
    t.overlap = s.params.test_overlap.value_or(nan);
    t.levels = s.params.test_eigenvalues();
    t.error = nan;
    t.decomposition = {nan, nan, nan};
    s.test_shift = t;
  }
}

// The saddle point as a residual system for Ceres with the exact Jacobian (docs/model.md
// §4.3-§4.4). Residual i is (x_i - Phi_i(x)) / scale_i: with scale_i = max(1, |x_i|) at the
// start, the tolerance on |F| is relative for order parameters that are large (chi ~ 1/qh
// diverges as lambda -> 0+ below tau = 1) and absolute for the others.
Eigen::VectorXd residual_scale(const Eigen::VectorXd& x) {
  return x.cwiseAbs().cwiseMax(1.0);
}

// z must stay below the spectrum of S (strictly: the resolvent is singular there).
bool z_allowed(const SpectralModel& model, double qh, double z) {
  return qh > 0 && std::isfinite(z) && z < model.lower_edge();
}

// F = (x - Phi(x)) / scale from the spectral values v at z = z_of(x); false unless finite.
bool scaled_residual(const Params& p, const SpectralValues& v, const double* x,
                     const double* scale, double* F) {
  const SpectralInputs in = inputs_from(v);
  const double spec[7] = {in.R32, in.R22, in.R12, in.R02, in.R21, in.R11, in.R01};
  saddle_map::residual(p, x, spec, F);
  bool finite = true;
  for (int i = 0; i < kN; ++i) {
    F[i] /= scale[i];
    finite = finite && std::isfinite(F[i]);
  }
  return finite;
}

// model.at(z, method) remembering the last z: within one saddle solve the observables are
// evaluated where the solver's last Jacobian was (often the start itself), and the quadrature is
// most of a solve's time. The same numbers as model.at (a function of z alone).
class SpectralMemo {
 public:
  SpectralMemo(const SpectralModel& model, MomentMethod method) : model_(model), method_(method) {}
  const SpectralModel& model() const { return model_; }
  const SpectralValues& at(double z) {
    if (!last_ || std::bit_cast<std::uint64_t>(last_->z) != std::bit_cast<std::uint64_t>(z))
      last_ = model_.at(z, method_);
    return *last_;
  }

 private:
  const SpectralModel& model_;
  MomentMethod method_;
  std::optional<SpectralValues> last_;
};

numerics::ResidualSystem saddle_system(const Params& p, SpectralMemo& spectral,
                                       const Eigen::VectorXd& scale) {
  SpectralMemo* memo = &spectral;  // outlives the system (both local to one solve)
  const SpectralModel& model = spectral.model();
  numerics::ResidualSystem sys;
  sys.size = kN;
  sys.names = {"q", "m", "chi", "qbar", "chibar", "qhat", "mhat", "chihat", "qbarhat", "chibarhat"};
  auto z_ok = [&model](double qh, double z) { return z_allowed(model, qh, z); };
  sys.jacobian = [p, memo, z_ok, scale](const Eigen::VectorXd& x, Eigen::VectorXd& F,
                                         Eigen::MatrixXd& J) {
    using Jet = ceres::Jet<double, kN>;
    const double z = z_of(p, x[QH], x[QBARH]);
    if (!z_ok(x[QH], z)) return false;
    const SpectralInputs in = inputs_from(memo->at(z));
    Jet xj[kN];
    for (int i = 0; i < kN; ++i) xj[i] = Jet(x[i], i);
    const Jet zj = -(p.lambda + xj[QBARH]) / xj[QH];
    const double vals[7] = {in.R32, in.R22, in.R12, in.R02, in.R21, in.R11, in.R01};
    const double ders[7] = {in.dR32, in.dR22, in.dR12, in.dR02, in.dR21, in.dR11, in.dR01};
    Jet spec[7];
    for (int k = 0; k < 7; ++k) spec[k] = Jet(vals[k]) + ders[k] * (zj - Jet(z));
    Jet Fj[kN];
    saddle_map::residual(p, xj, spec, Fj);  // exact: spec carries dR/dz * dz/dx
    F.resize(kN);
    J.resize(kN, kN);
    for (int i = 0; i < kN; ++i) {
      F[i] = Fj[i].a / scale[i];
      J.row(i) = Fj[i].v.transpose() / scale[i];
    }
    return F.allFinite() && J.allFinite();
  };
  sys.residual = [p, memo, z_ok, scale](const Eigen::VectorXd& x, Eigen::VectorXd& F) {
    const double z = z_of(p, x[QH], x[QBARH]);
    if (!z_ok(x[QH], z)) return false;
    F.resize(kN);
    return scaled_residual(p, memo->at(z), x.data(), scale.data(), F.data());
  };
  return sys;
}

// The authors' damped iteration of the map Phi (docs/model.md §4.4): the fallback start when
// Ceres fails from the reduced solution, and an independent route to the same fixed point.
numerics::SolveResult damped_iteration(const Params& p, SpectralMemo& spectral,
                                       const Eigen::VectorXd& x0) {
  // Unscaled: the map x -> Phi(x) = x - F(x).
  const auto sys = saddle_system(p, spectral, Eigen::VectorXd::Ones(kN));
  numerics::FixedPointOptions fo;
  fo.damping = 0.5;
  fo.tolerance = 1e-12;
  fo.max_iterations = 20000;
  return numerics::damped_fixed_point(
      [&sys](const Eigen::VectorXd& x, Eigen::VectorXd& Gx) {
        Eigen::VectorXd F;
        if (!sys.residual(x, F)) return false;
        Gx = x - F;  // F = x - Phi(x)
        return true;
      },
      x0, fo);
}

// The reduced solution (docs/model.md §5.1) with the spectral functions of `method`.
Solution reduced_solution(const Params& p, const SpectralModel& model, MomentMethod method) {
  const double xi = solve_xi(p, model, method);
  return reduced_solution(p, model, model.at(-xi - p.nu(), method), xi);
}

// The methods take validated parameters (solve(): validate_for).
Solution solve_saddle(const Params& p, const SolveOptions& opt) {
  const auto shared_model = SpectralModel::shared(p);
  const SpectralModel& model = *shared_model;
  const MomentMethod method = opt.moments;
  Eigen::VectorXd x0;
  if (opt.start) {
    x0 = to_vector(*opt.start);
  } else {
    // Robust start: the reduced solution with closed-form spectral functions.
    x0 = to_vector(reduced_solution(p, model, MomentMethod::Exact).order);
  }
  SpectralMemo spectral(model, method);
  const auto sys = saddle_system(p, spectral, residual_scale(x0));
  numerics::SolveResult r = numerics::solve_residual_system(sys, x0, opt.solver);
  if (!r.converged()) {
    // Fall back on the damped iteration from all-ones (the authors' start), then polish.
    numerics::SolveResult it = damped_iteration(p, spectral, Eigen::VectorXd::Ones(kN));
    if (it.x.size() == kN && it.x.allFinite()) {
      numerics::SolveResult polished = numerics::solve_residual_system(sys, it.x, opt.solver);
      polished.iterations += it.iterations + r.iterations;
      if (polished.converged() || polished.residual_norm < r.residual_norm) r = polished;
    }
  }
  Solution s;
  s.params = p;
  s.method = Method::Saddle;
  s.status = r.status;
  s.residual_norm = r.residual_norm;
  s.iterations = r.iterations;
  s.message = r.message;
  // The observables at the solver's result (for a failed solve, its last iterate); NaN where
  // they cannot be evaluated there.
  set_values(s, unavailable());
  if (r.x.size() == kN) {
    s.order = order_from_vector(r.x);
    const double z = z_of(p, s.order.qhat, s.order.qbarhat);
    if (s.order.qhat > 0 && z < model.lower_edge())
      fill_observables(p, model, spectral.at(z), coefficients_of(p, s.order), s);
  }
  return s;
}

Solution solve_reduced(const Params& p, const SolveOptions& opt) {
  const auto shared_model = SpectralModel::shared(p);
  const SpectralModel& model = *shared_model;
  // The fast path: closed-form spectral functions.
  const MomentMethod method = MomentMethod::Exact;
  const double xi = solve_xi(p, model, method);
  const SpectralValues v = model.at(-xi - p.nu(), method);
  Solution s = reduced_solution(p, model, v, xi);
  s.method = Method::Reduced;
  // Honest check: the reduced solution must be a root of the full saddle-point map (the residual
  // of saddle_system, scaled by max(1, |x_i|)). The map's z, -(lambda + qbarh)/qh, is -xi - nu
  // up to rounding (a third of the points of a grid differ in the last few bits); within 8 ulps
  // the spectral values are v's: they move by a relative 1e-15 there, 1e-5 of the residual
  // tolerance, and a new evaluation would cost as much as the rest of the solve.
  const OrderParams& o = s.order;
  const double x[kN] = {o.q, o.m, o.chi, o.qbar, o.chibar, o.qhat, o.mhat, o.chihat, o.qbarhat,
                        o.chibarhat};
  double scale[kN];
  for (int i = 0; i < kN; ++i) scale[i] = std::max(std::abs(x[i]), 1.0);
  const double z = z_of(p, x[QH], x[QBARH]);
  const bool at_v = std::abs(z - v.z) <= 8 * std::numeric_limits<double>::epsilon() * std::abs(v.z);
  alignas(16) double F[kN];
  if (z_allowed(model, x[QH], z) &&
      scaled_residual(p, at_v ? v : model.at(z, method), x, scale, F)) {
    s.residual_norm = Eigen::Map<const Eigen::VectorXd>(F, kN).norm();
    s.status = s.residual_norm <= opt.solver.residual_tolerance ? Status::Converged
                                                               : Status::NotConverged;
    s.message = "reduced closed form; residual of the full saddle-point map";
  } else {
    s.status = Status::NumericalFailure;
    s.residual_norm = std::numeric_limits<double>::infinity();
    s.message = "reduced solution outside the domain of the saddle-point map";
  }
  return s;
}

// Letey/Lu deterministic equivalent, ridgeless (docs/errors_phases.md §11.1). Written from its
// formulas with the population spectrum of the train covariance C_tr = (1/rho) P_A, independently
// of the replica code above (only g(-nu) and g'(-nu) of S are shared).
Solution solve_letey(const Params& p) {
  if (p.tau == 1)
    throw InvalidParams("tau", "the ridgeless error diverges at the interpolation threshold "
                               "tau = 1 (use lambda > 0 with --method saddle)");
  if (p.lambda != 0)
    throw InvalidParams("lambda", "the Letey/Lu deterministic equivalent is ridgeless: it needs "
                                  "lambda = 0 (use --method saddle for lambda > 0)");
  const auto shared_model = SpectralModel::shared(p);
  const SpectralModel& model = *shared_model;
  const auto& S = model.spectrum_of_S();
  const double nu0 = (1.0 + p.sigma * p.sigma) / p.alpha;  // tr C_tr / D = 1
  double xi = 0;
  if (p.tau < 1) {
    auto f = [&](double x) { return x * S.stieltjes(-(x + nu0)) - (1.0 - p.tau); };
    numerics::ScalarRootOptions ro;
    ro.hard_lo = 0;
    ro.hard_hi = 1e300;
    xi = numerics::bracketed_root(f, 1e-3, 1.0, ro).x;
  }
  const double Mv = S.stieltjes(-(nu0 + xi));
  const double Mp = -S.stieltjes_derivative(-(nu0 + xi), 1);  // dM/dnu = -g'(-nu)
  const ScalarParams<double> sp = scalar_params<double>(p);
  const LeteyCore<double> c = letey_core(sp, xi, Mv, Mp);
  const double nu = c.nu, e = c.e;
  // Population spectrum of C_tr (for the paper: eigenvalue 1/rho on a fraction rho, 0 on
  // 1 - rho); C_te = C_tr (IDG) or I (ODG) share its eigenbasis.
  std::vector<double> t, w;
  letey_population(sp, t, w);
  const auto error = [&](const std::vector<double>& c_te) { return letey_error(sp, c, t, w, c_te); };
  Solution s;
  s.params = p;
  s.method = Method::Letey;
  std::vector<double> c_odg(t.size(), 1.0);
  s.error.idg = error(t);
  s.error.odg = error(c_odg);
  // TM (and the order parameters and decomposition) are not part of the Letey/Lu formula. They
  // come from the ridgeless limit of the reduced replica solution at the same xi
  // (docs/errors_phases.md §11.3: xi = lambda/qh fixed as lambda -> 0+; checked in the tests
  // against replica solutions at small lambda). Conjugates vanish in that limit (qh -> 0 when tau <
  // 1) and the responses chi, chibar diverge; they are left at 0 and not reported by the CLI for
  // Letey.
  Params ridgeless = p;
  ridgeless.lambda = 0;
  const Solution r = reduced_observables(ridgeless, model, model.at(-xi - ridgeless.nu(), MomentMethod::Exact));
  s.order = r.order;
  s.decomposition = r.decomposition;
  s.error.tm = r.error.tm;
  if (r.test_shift) {
    // The error from the Letey/Lu formula, its decomposition from the reduced solution (as IDG).
    s.test_shift = r.test_shift;
    s.test_shift->error = error(r.test_shift->levels);
  }
  s.z = -nu;
  s.nu = nu0;
  s.e = e;
  s.regime = regime_of(p);
  s.status = Status::Converged;
  s.residual_norm = 0;
  s.message = p.tau < 1 ? "ridgeless interpolation branch (xi > 0)" : "ridgeless, tau > 1";
  return s;
}

}  // namespace

Eigen::VectorXd to_vector(const OrderParams& o) {
  Eigen::VectorXd x(kN);
  x << o.q, o.m, o.chi, o.qbar, o.chibar, o.qhat, o.mhat, o.chihat, o.qbarhat, o.chibarhat;
  return x;
}

OrderParams order_from_vector(const Eigen::VectorXd& x) {
  OrderParams o;
  o.q = x[Q]; o.m = x[M]; o.chi = x[CHI]; o.qbar = x[QBAR]; o.chibar = x[CHIBAR];
  o.qhat = x[QH]; o.mhat = x[MH]; o.chihat = x[CHIH]; o.qbarhat = x[QBARH];
  o.chibarhat = x[CHIBARH];
  return o;
}

namespace {

Solution solve_method(const Params& p, const SolveOptions& options) {
  switch (options.method) {
    case Method::Saddle: return solve_saddle(p, options);
    case Method::Reduced: return solve_reduced(p, options);
    case Method::Letey: return solve_letey(p);
  }
  throw InvalidParams("method", "unknown method");
}

}  // namespace

Errors errors_from(const Params& p, const OrderParams& o) {
  Errors e;
  errors_of(p, o.m, o.q, o.qbar, o.m0, o.q0, o.mbar, e.tm, e.idg, e.odg);
  return e;
}

Solution observables_at(const Params& p, const SpectralModel& model, const SpectralValues& v,
                        const OrderParams& o, const numerics::ResolventMoments* U) {
  Solution s;
  s.params = p;
  s.order = o;
  fill_observables(p, model, v, coefficients_of(p, o), s, U);
  return s;
}

void SolveOptions::validate() const {
  if (!(solver.residual_tolerance > 0))
    throw InvalidParams("residual_tolerance", "must be > 0");
  // 0 is meaningful: the start is evaluated, not improved.
  if (solver.max_iterations < 0) throw InvalidParams("max_iterations", "must be >= 0");
}

Solution solve(const Params& p, const SolveOptions& options) {
  options.validate();
  validate_for(p, options.method);
  return detail::solve_validated(p, options);
}

Solution detail::solve_validated(const Params& p, const SolveOptions& options) {
  Solution s;
  try {
    s = solve_method(p, options);
    if (!s.converged()) {
      // Not a solution: its numbers move to last_iterate (diagnosis), the reported ones are NaN.
      s.last_iterate = LastIterate{s.order, s.error, s.decomposition, s.z, s.e, s.test_shift};
    }
  } catch (const NumericalError& e) {
    // No iterate to keep: a quadrature or bracketing failure inside the method.
    s = Solution{};
    s.params = p;
    s.method = options.method;
    s.status = Status::NumericalFailure;
    s.residual_norm = std::numeric_limits<double>::infinity();
    s.message = e.what();
  }
  if (!s.converged()) {
    s.params = p;
    set_values(s, unavailable());
  }
  s.nu = p.nu();
  s.regime = regime_of(p);
  s.bayes_optimal = detail::bayes_optimal_of_valid(p);
  if (options.gradient) s.gradient = gradient(s);
  return s;
}

}  // namespace icl::theory
