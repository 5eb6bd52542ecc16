// Exact derivatives through the fixed point (docs/sensitivity.md §22).
//
// The scalar parameters are seeded as the nine directions of a ceres::Jet (alpha, alpha_test,
// tau, kappa, rho, sigma, sigma_test, lambda, test_overlap). At a converged root x* the residual
// evaluated with x* held and the parameters as Jets gives F_theta; its exact Jacobian F_x comes
// from the same templated residual with x as Jets. dx = -F_x^{-1} F_theta makes x* a Jet, and
// the observables evaluated in Jets are the outputs' derivatives. Each derivative direction is
// then read as a "tangent" Solution, so that the quantity table of theory/quantity.hpp names the
// rows, the same way it names every output elsewhere.
#include "theory/sensitivity.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include <Eigen/LU>
#include <ceres/jet.h>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/bayes_formulas.hpp"
#include "theory/letey_formulas.hpp"
#include "theory/observables.hpp"
#include "theory/quantity.hpp"
#include "theory/saddle_map.hpp"
#include "theory/spectral_lift.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::kNaN;

using namespace saddle_map;  // kN and the unknowns' indices Q, M, ..., CHIBARH
using numerics::Status;

constexpr int kP = 9;
using Jet = ceres::Jet<double, kP>;
enum Direction { D_ALPHA, D_ALPHA_TEST, D_TAU, D_KAPPA, D_RHO, D_SIGMA, D_SIGMA_TEST, D_LAMBDA,
                 D_OVERLAP };

// The scalar parameters of p, each seeded in its direction. An alpha_test that follows alpha
// moves with alpha as well.
ScalarParams<Jet> seeded(const Params& p) {
  ScalarParams<Jet> s = scalar_params<Jet>(p);
  s.alpha.v[D_ALPHA] = 1;
  s.alpha_test.v[D_ALPHA_TEST] = 1;
  if (p.alpha_test < 0) s.alpha_test.v[D_ALPHA] = 1;
  s.tau.v[D_TAU] = 1;
  s.kappa.v[D_KAPPA] = 1;
  s.rho.v[D_RHO] = 1;
  s.sigma.v[D_SIGMA] = 1;
  s.sigma_test.v[D_SIGMA_TEST] = 1;
  s.lambda.v[D_LAMBDA] = 1;
  s.test_overlap.v[D_OVERLAP] = 1;
  return s;
}

// The residual of the saddle map at x (any scalar type): false outside its domain.
template <class T>
bool residual_at(const ScalarParams<T>& p, const SpectralModel& model, const T* x, T* F) {
  const T z = -(p.lambda + x[QBARH]) / x[QH];
  if (!(scalar_value(x[QH]) > 0) || !(scalar_value(z) < model.lower_edge())) return false;
  const LiftedSpectrum<T> L = lift_spectrum(model, p, z);
  const T spec[7] = {L.R(3, 2), L.R(2, 2), L.R(1, 2), L.R(0, 2), L.R(2, 1), L.R(1, 1), L.R(0, 1)};
  residual(p, x, spec, F);
  return true;
}

// Every output at the (Jet) saddle-point unknowns x.
struct Outputs {
  Jet x[kN];
  ObservablesT<Jet> ob;
  Jet bayes_idg, bayes_odg, bayes_shift;
};

// The outputs from the unknowns x, the spectral values L at z and Gamma's coefficients k.
Outputs observe(const ScalarParams<Jet>& p, const SpectralModel& model,
                const LiftedSpectrum<Jet>& L, const Jet* x, const CoefficientsT<Jet>& k) {
  Outputs out;
  for (int i = 0; i < kN; ++i) out.x[i] = x[i];
  const Params& base = *p.base;
  std::optional<numerics::BasicResolventMoments<Jet>> U;
  if (base.has_test_shift()) {
    const std::vector<Jet> levels = p.test_eigenvalues();
    U = model.low_rank() ? low_rank_test_weighted(L.R, L.T_, p.rho, levels, 2)
                         : deterministic_equivalent(L.R.z, L.R, Jet(1.0) / p.kappa,
                                                    base.task_spectrum, levels, 2);
  }
  out.ob = observables(p, L.R, L.T_, U ? &*U : nullptr, x[Q], x[M], x[QBAR], k);
  bayes_optimal_t(p, out.bayes_idg, out.bayes_odg,
                  base.has_test_shift() ? &out.bayes_shift : nullptr);
  return out;
}

// Gamma's coefficients from the conjugates x.
CoefficientsT<Jet> coefficients_at(const ScalarParams<Jet>& p, const Jet* x) {
  const Jet qh2 = x[QH] * x[QH];
  return {x[MH] * x[MH] / qh2, x[CHIH] / (p.kappa * qh2), x[CHIBARH] / (p.kappa * qh2),
          x[MH] / x[QH]};
}

// The outputs at the saddle-point unknowns x (z and the coefficients from the conjugates).
Outputs outputs_at(const ScalarParams<Jet>& p, const SpectralModel& model, const Jet* x) {
  const Jet z = -(p.lambda + x[QBARH]) / x[QH];
  return observe(p, model, lift_spectrum(model, p, z), x, coefficients_at(p, x));
}

// Derivative direction j of the outputs written into `t` (a copy of the solution: its method,
// parameters and whether it has a shifted protocol): the tangent, whose fields the quantity
// table reads as it reads a solution's.
void set_tangent(Solution& t, const Outputs& o, int j) {
  const auto d = [j](const Jet& v) { return v.v[j]; };
  const auto c = [&](const ComponentsT<Jet>& v) {
    return Components{d(v.algo), d(v.mem), d(v.structural)};
  };
  OrderParams& r = t.order;
  r.q = d(o.x[Q]), r.m = d(o.x[M]), r.chi = d(o.x[CHI]), r.qbar = d(o.x[QBAR]);
  r.chibar = d(o.x[CHIBAR]), r.qhat = d(o.x[QH]), r.mhat = d(o.x[MH]), r.chihat = d(o.x[CHIH]);
  r.qbarhat = d(o.x[QBARH]), r.chibarhat = d(o.x[CHIBARH]);
  r.mbar = d(o.ob.mbar), r.m0 = d(o.ob.m0), r.q0 = d(o.ob.q0);
  t.error = {d(o.ob.tm), d(o.ob.idg), d(o.ob.odg)};
  t.decomposition = {c(o.ob.d_tm), c(o.ob.d_idg), c(o.ob.d_odg)};
  t.z = d(o.ob.z);
  t.e = d(o.ob.e);
  t.bayes_optimal = {d(o.bayes_idg), d(o.bayes_odg), d(o.bayes_shift)};
  if (o.ob.shift) {
    t.test_shift->error = d(*o.ob.shift);
    t.test_shift->decomposition = c(o.ob.d_shift);
  }
}

// The gradient's rows (the quantities the solution defines, in the table's order) and columns,
// values NaN.
Gradient empty_gradient(const Solution& s) {
  Gradient g;
  g.parameters = gradient_parameters(s.params, s.method);
  for (const Quantity& q : solution_quantities())
    if (q.defined(s)) g.outputs.push_back(q.name);
  g.values = Eigen::MatrixXd::Constant(Eigen::Index(g.outputs.size()),
                                       Eigen::Index(g.parameters.size()), kNaN);
  return g;
}

// The direction of each parameter column (gamma: kappa times tau's).
std::pair<int, double> column_direction(const std::string& name, const Params& p) {
  if (name == "alpha") return {D_ALPHA, 1};
  if (name == "alpha_test") return {D_ALPHA_TEST, 1};
  if (name == "tau") return {D_TAU, 1};
  if (name == "gamma") return {D_TAU, p.kappa};
  if (name == "kappa") return {D_KAPPA, 1};
  if (name == "rho") return {D_RHO, 1};
  if (name == "sigma") return {D_SIGMA, 1};
  if (name == "sigma_test") return {D_SIGMA_TEST, 1};
  if (name == "lambda") return {D_LAMBDA, 1};
  return {D_OVERLAP, 1};  // test_overlap
}

void fill(Gradient& g, const Solution& s, const Outputs& o) {
  std::vector<const Quantity*> rows;  // g.outputs' quantities, in order
  for (const Quantity& q : solution_quantities())
    if (q.defined(s)) rows.push_back(&q);
  Solution t = s;  // the tangent: the solution's structure, the derivatives' numbers
  t.status = Status::Converged;
  t.gradient.reset();
  t.last_iterate.reset();
  for (std::size_t c = 0; c < g.parameters.size(); ++c) {
    const auto [j, factor] = column_direction(g.parameters[c], s.params);
    set_tangent(t, o, j);
    for (std::size_t r = 0; r < rows.size(); ++r)
      g.values(Eigen::Index(r), Eigen::Index(c)) = factor * rows[r]->of(t);
  }
}

Gradient reduced_gradient(const Solution& s, Gradient g);

// The saddle point: x* of the 10-unknown map.
Gradient saddle_gradient(const Solution& s, Gradient g) {
  const Params& p = s.params;
  const SpectralModel model(p);
  const Eigen::VectorXd x = to_vector(s.order);
  Eigen::MatrixXd J;
  const ScalarParams<Jet> pj = seeded(p);
  Jet xj[kN], F[kN];
  for (int i = 0; i < kN; ++i) xj[i] = Jet(x[i]);
  if (!saddle_jacobian(p, model, x, J) || !residual_at(pj, model, xj, F)) {
    g.status = Status::NumericalFailure;
    g.message = "the root is outside the saddle map's domain";
    return g;
  }
  Eigen::MatrixXd B(kN, kP);
  for (int i = 0; i < kN; ++i) B.row(i) = F[i].v.transpose();
  // Relative scaling (docs/sensitivity.md §22.3): unknowns and residuals relative to |x_i|.
  const LinearResponse lr = linear_response(J, B, x.cwiseAbs().cwiseMax(1e-300));
  g.condition_number = lr.condition_number;
  if (!lr.ok) {
    // The 10 x 10 solve is ill-conditioned (it is at very large alpha, where nu and qbarh,
    // chibarh are tiny); the scalar reduction has the same root and a 1 x 1 solve.
    const double condition = lr.condition_number;
    g = reduced_gradient(s, std::move(g));
    g.condition_number = condition;
    if (g.converged())
      g.message = "the saddle point's 10 x 10 solve is ill-conditioned (condition number " +
                  numerics::format_significant(condition, 3) +
                  "): derivatives of the scalar reduction's equation, the same root";
    else
      g.message = lr.message + "; " + g.message;
    return g;
  }
  for (int i = 0; i < kN; ++i) {
    xj[i] = Jet(x[i]);
    xj[i].v = lr.dx.row(i).transpose();
  }
  fill(g, s, outputs_at(pj, model, xj));
  g.status = Status::Converged;
  g.message = "implicit differentiation of the saddle point";
  return g;
}

// The scalar reduction's equation in r = xi / lambda = 1/qh (docs/model.md §5.1, multiplied by
// r: regular at lambda = 0, where r = kappa / (tau - 1)): G(r) = r (tau - 1 + xi g(z)) - kappa,
// xi = lambda r, z = -xi - nu. Its parameter derivatives are G's Jet; G_r = tau - 1 + 2 lambda
// r g - lambda^2 r^2 g'(z) from the values of g and g' = R_{0,2} (dz/dr = -lambda).
Jet reduced_equation(const ScalarParams<Jet>& p, const SpectralModel& model, double r,
                     double& G_r) {
  const Jet xi = p.lambda * r;
  const LiftedSpectrum<Jet> L = lift_spectrum(model, p, -xi - p.nu());
  const double lambda = p.lambda.a, g = L.R(0, 1).a, g1 = L.R(0, 2).a;
  G_r = p.tau.a - 1 + 2 * lambda * r * g - lambda * lambda * r * r * g1;
  return r * (p.tau - 1.0 + xi * L.R(0, 1)) - p.kappa;
}

Gradient reduced_gradient(const Solution& s, Gradient g) {
  const Params& p = s.params;
  const SpectralModel model(p);
  const double r0 = 1.0 / s.order.qhat;
  const ScalarParams<Jet> pj = seeded(p);
  double G_r = 0;
  const Jet G = reduced_equation(pj, model, r0, G_r);
  g.condition_number = 1;
  if (!(std::abs(G_r) > 0) || !std::isfinite(G_r)) {
    g.status = Status::NumericalFailure;
    g.message = "the reduced equation's derivative vanishes at the root";
    return g;
  }
  Jet r(r0);
  r.v = -G.v / G_r;
  // The saddle-point unknowns of the reduced solution (docs/model.md §5.1), in Jets.
  const Jet qh = 1.0 / r, nu = pj.nu(), xi = pj.lambda * r;
  const LiftedSpectrum<Jet> L = lift_spectrum(model, pj, -xi - nu);
  const ReducedCore<Jet> rc = reduced_core(pj, L.R);
  Jet x[kN];
  x[Q] = rc.q, x[M] = rc.m, x[QBAR] = rc.qbar;
  x[QH] = x[MH] = qh;
  x[QBARH] = nu * qh;
  x[CHIH] = rc.e * pj.kappa * qh * qh;
  x[CHIBARH] = nu * x[CHIH];
  x[CHI] = L.R(1, 1) / (pj.kappa * qh);
  x[CHIBAR] = L.R(0, 1) / (pj.kappa * qh);
  // z = -(lambda + qbarh) / qh = -xi - nu: the spectral values L are those of the outputs.
  fill(g, s, observe(pj, model, L, x, coefficients_at(pj, x)));
  g.status = Status::Converged;
  g.message = "implicit differentiation of the scalar reduction";
  return g;
}

// The Letey/Lu root (docs/errors_phases.md §11.1): G = xi g(-(xi + nu0)) - (1 - tau) = 0 below
// tau = 1; its parameter derivatives are G's Jet, G_xi = g - xi g' from the values.
Jet letey_equation(const ScalarParams<Jet>& p, const SpectralModel& model, double xi,
                   double& G_xi) {
  const LiftedSpectrum<Jet> L = lift_spectrum(model, p, -(xi + p.nu()));
  G_xi = L.R(0, 1).a - xi * L.R(0, 2).a;
  return xi * L.R(0, 1) - (1.0 - p.tau);
}

Gradient letey_gradient(const Solution& s, Gradient g) {
  const Params& p = s.params;
  const SpectralModel model(p);
  const ScalarParams<Jet> pj = seeded(p);
  g.condition_number = 1;
  // xi = 0 identically above tau = 1; below, its derivative by the implicit function theorem.
  Jet xi(p.tau < 1 ? -s.z - p.nu() : 0.0);
  if (p.tau < 1) {
    double G_xi = 0;
    const Jet G = letey_equation(pj, model, xi.a, G_xi);
    if (!(std::abs(G_xi) > 0) || !std::isfinite(G_xi)) {
      g.status = Status::NumericalFailure;
      g.message = "the ridgeless equation's derivative vanishes at the root";
      return g;
    }
    xi.v = -G.v / G_xi;
  }
  const LiftedSpectrum<Jet> L = lift_spectrum(model, pj, -(xi + pj.nu()));
  const LeteyCore<Jet> c = letey_core(pj, xi, L.R(0, 1), -L.R(0, 2));
  // TM, the order parameters and the decomposition from the ridgeless reduced solution at xi
  // (docs/errors_phases.md §11.3); IDG, ODG and the shifted protocol's error from the formula.
  const ReducedCore<Jet> rc = reduced_core(pj, L.R);
  Jet x[kN];
  for (Jet& v : x) v = Jet(kNaN);  // no conjugates on the ridgeless branch (rows left out)
  x[Q] = rc.q, x[M] = rc.m, x[QBAR] = rc.qbar;
  Outputs o = observe(pj, model, L, x, rc.coefficients());
  std::vector<Jet> t, w;
  letey_population(pj, t, w);
  o.ob.idg = letey_error(pj, c, t, w, t);
  o.ob.odg = letey_error(pj, c, t, w, std::vector<Jet>(t.size(), Jet(1.0)));
  if (o.ob.shift) o.ob.shift = letey_error(pj, c, t, w, pj.test_eigenvalues());
  o.ob.z = -c.nu;
  o.ob.e = c.e;
  fill(g, s, o);
  g.status = Status::Converged;
  g.message = "implicit differentiation of the ridgeless Letey/Lu root";
  return g;
}

}  // namespace

std::vector<std::string> gradient_parameters(const Params& p, Method method) {
  std::vector<std::string> out;
  for (const std::string& name : Params::names()) {
    if (name == "rho" && !p.task_spectrum.empty()) continue;
    if (name == "test_overlap" && !p.test_overlap) continue;
    if (name == "lambda" && method == Method::Letey) continue;  // ridgeless: lambda = 0 only
    out.push_back(name);
  }
  return out;
}

LinearResponse linear_response(const Eigen::MatrixXd& J, const Eigen::MatrixXd& B,
                               const Eigen::VectorXd& scale) {
  LinearResponse r;
  // The scaled system Js y = -D^{-1} B with x = D y: one LU gives the solve and LAPACK-style
  // estimate of the 1-norm condition number (O(n^2) after the factorization; an SVD costs more
  // than the rest of the gradient).
  const Eigen::MatrixXd Js = scale.cwiseInverse().asDiagonal() * J * scale.asDiagonal();
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(Js);
  const double rcond = J.allFinite() ? lu.rcond() : 0.0;
  r.condition_number = rcond > 0 ? 1 / rcond : std::numeric_limits<double>::infinity();
  r.ok = J.allFinite() && B.allFinite() && r.condition_number <= kMaxGradientCondition;
  if (!r.ok) {
    r.dx = Eigen::MatrixXd::Constant(J.cols(), B.cols(), kNaN);
    r.message = "the Jacobian of the fixed point is singular or ill-conditioned (condition "
                "number " + numerics::format_significant(r.condition_number, 3) + " > " +
                numerics::format_significant(kMaxGradientCondition, 3) + ")";
    return r;
  }
  r.dx = -(scale.asDiagonal() * lu.solve(scale.cwiseInverse().asDiagonal() * B));
  return r;
}

bool saddle_jacobian(const Params& p, const SpectralModel& model, const Eigen::VectorXd& x,
                     Eigen::MatrixXd& J) {
  using J10 = ceres::Jet<double, kN>;
  J10 xj[kN], F[kN];
  for (int i = 0; i < kN; ++i) xj[i] = J10(x[i], i);
  if (!residual_at(scalar_params<J10>(p), model, xj, F)) return false;
  J.resize(kN, kN);
  for (int i = 0; i < kN; ++i) J.row(i) = F[i].v.transpose();
  return J.allFinite();
}

Gradient gradient(const Solution& s) {
  Gradient g = empty_gradient(s);
  if (!s.converged()) {
    g.status = Status::NotConverged;
    g.message = "no gradient: the solution did not converge (" + s.message + ")";
    return g;
  }
  try {
    switch (s.method) {
      case Method::Saddle: return saddle_gradient(s, std::move(g));
      case Method::Reduced: return reduced_gradient(s, std::move(g));
      case Method::Letey: return letey_gradient(s, std::move(g));
    }
  } catch (const NumericalError& e) {
    g.values.setConstant(kNaN);
    g.status = Status::NumericalFailure;
    g.message = std::string("a spectral value could not be differentiated: ") + e.what();
  }
  return g;
}

double Gradient::of(const std::string& output, const std::string& parameter) const {
  const auto index = [](const std::vector<std::string>& names, const std::string& name,
                        const char* field) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return Eigen::Index(i);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
    throw InvalidParams(field, "'" + name + "' is not one of " + list);
  };
  return values(index(outputs, output, "output"), index(parameters, parameter, "parameter"));
}

}  // namespace icl::theory
