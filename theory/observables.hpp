// The observables of docs/errors_phases.md §7-§8 (and docs/general_covariance.md §20) written once
// for a scalar type T: double for every solve, ceres::Jet for the exact derivatives of
// theory/sensitivity.hpp. Internal to theory/ (lowrank.cpp fills a Solution from them).
#pragma once
#include <optional>

#include "numerics/spectral_integral.hpp"
#include "theory/scalar_params.hpp"

namespace icl::theory {

template <class T>
struct ComponentsT {
  T algo{}, mem{}, structural{};
  T total() const { return algo + mem + structural; }
};

// Gamma's second moments carry the coefficients A = mh^2/qh^2 (algorithmic part), B = chih /
// (kappa qh^2) (memorization), C = chibarh / (kappa qh^2) (structural); ratio = mh/qh.
template <class T>
struct CoefficientsT {
  T A, B, C, ratio;
};

template <class T>
struct ObservablesT {
  T mbar{}, m0{}, q0{};
  T tm{}, idg{}, odg{};  // the errors, from the order parameters (errors_from)
  ComponentsT<T> d_tm, d_idg, d_odg;
  T z{}, e{};
  std::optional<T> shift;  // the shifted protocol's error and decomposition, when it has one
  ComponentsT<T> d_shift;
  T m_shift{}, q_shift{};  // its order parameters m_C = tr(C Gbar)/D, q_C = tr(C Gamma^T Gamma)/D
};

// E_P = sigma_t^2 + 1 - 2 m_P + q_P + v qbar, v = (1 + sigma_t^2) / alpha_test (P: Params or
// ScalarParams).
template <class T, class P>
void errors_of(const P& p, const T& m, const T& q, const T& qbar, const T& m0, const T& q0,
               const T& mbar, T& tm, T& idg, T& odg) {
  const auto st2 = p.sigma_test * p.sigma_test;
  const auto vt = (1.0 + st2) / p.effective_alpha_test();
  tm = st2 + 1.0 - 2.0 * m + q + vt * qbar;
  idg = st2 + 1.0 - 2.0 * m0 + q0 + vt * qbar;
  odg = st2 + 1.0 - 2.0 * mbar + qbar + vt * qbar;
}

// The observables at order parameters (q, m, qbar) with coefficients k, from the spectral values
// R (of S), Tm (Sigma-weighted) and, with a shifted protocol, U (test-weighted, docs/
// general_covariance.md §20.2), all at z. The decomposition splits q (TM), q0 (IDG), qbar (ODG)
// and the test-context term v qbar into the three pieces of k.
template <class T, class P>
ObservablesT<T> observables(const P& p, const numerics::BasicResolventMoments<T>& R,
                            const numerics::BasicResolventMoments<T>& Tm,
                            const numerics::BasicResolventMoments<T>* U, const T& q, const T& m,
                            const T& qbar, const CoefficientsT<T>& k) {
  ObservablesT<T> o;
  o.mbar = k.ratio * R(1, 1);
  o.m0 = k.ratio * Tm(1, 1);
  o.q0 = k.A * Tm(2, 2) + k.B * Tm(1, 2) + k.C * Tm(0, 2);
  const auto st2 = p.sigma_test * p.sigma_test;
  const auto vt = (1.0 + st2) / p.effective_alpha_test();
  // Test-context term v qbar, split the same way.
  const ComponentsT<T> ctx{vt * k.A * R(2, 2), vt * k.B * R(1, 2), vt * k.C * R(0, 2)};
  const auto protocol = [&](const T& m_P, const T& a, const T& b, const T& c) {
    // a, b, c: the algorithmic, memorization and structural pieces of the protocol's q.
    return ComponentsT<T>{st2 + 1.0 - 2.0 * m_P + a + ctx.algo, b + ctx.mem, c + ctx.structural};
  };
  o.d_tm = protocol(m, k.A * R(3, 2), k.B * R(2, 2), k.C * R(1, 2));
  o.d_idg = protocol(o.m0, k.A * Tm(2, 2), k.B * Tm(1, 2), k.C * Tm(0, 2));
  o.d_odg = protocol(o.mbar, k.A * R(2, 2), k.B * R(1, 2), k.C * R(0, 2));
  if (U != nullptr) {
    // The IDG formulas with the test covariance C in place of Sigma: m_C = (mh/qh) U_{1,1},
    // q_C = A U_{2,2} + B U_{1,2} + C U_{0,2}; the error = sigma_t^2 + 1 - 2 m_C + q_C + v qbar
    // (docs/general_covariance.md §20.1), the sum of the pieces.
    const numerics::BasicResolventMoments<T>& u = *U;
    o.m_shift = k.ratio * u(1, 1);
    o.q_shift = k.A * u(2, 2) + k.B * u(1, 2) + k.C * u(0, 2);
    o.d_shift = protocol(o.m_shift, k.A * u(2, 2), k.B * u(1, 2), k.C * u(0, 2));
    o.shift = o.d_shift.total();
  }
  errors_of(p, m, q, qbar, o.m0, o.q0, o.mbar, o.tm, o.idg, o.odg);
  o.z = R.z;
  o.e = k.B;
  return o;
}

// The scalar reduction at xi = lambda/qh (docs/model.md §5.1): with mh = qh the spectral argument
// is z = -xi - nu, R the moments of S there, and Gamma's coefficients are A = 1, B = e,
// C = e nu with e = (s2 - 2m + a + nu b) / (tau - B), B = b + 2 nu c_ + nu^2 g'.
template <class T>
struct ReducedCore {
  T m, q, qbar, e;
  CoefficientsT<T> coefficients() const { return {T(1.0), e, e * nu, T(1.0)}; }
  T nu;
};

template <class T, class P>
ReducedCore<T> reduced_core(const P& p, const numerics::BasicResolventMoments<T>& R) {
  const auto nu = p.nu();
  const auto s2 = 1.0 + p.sigma * p.sigma;
  const T Bden = R(2, 2) + 2.0 * nu * R(1, 2) + nu * nu * R(0, 2);
  ReducedCore<T> r;
  r.e = (s2 - 2.0 * R(2, 1) + R(3, 2) + nu * R(2, 2)) / (p.tau - Bden);
  r.m = R(2, 1);
  r.q = R(3, 2) + r.e * (R(2, 2) + nu * R(1, 2));
  r.qbar = R(2, 2) + r.e * (R(1, 2) + nu * R(0, 2));
  r.nu = T(nu);
  return r;
}

// The test-weighted moments U_{k,j} = (1/D) tr C S^k (S - z)^{-j} for low-rank tasks, C = l_A
// P_A + l_perp P_perp: U = l_A rho T + l_perp (R - rho T), exactly (docs/general_covariance.md
// §20.2). levels = {l_A} or {l_A, l_perp}.
template <class T, class L>
numerics::BasicResolventMoments<T> low_rank_test_weighted(
    const numerics::BasicResolventMoments<T>& R, const numerics::BasicResolventMoments<T>& Tm,
    const T& rho, const std::vector<L>& levels, int jmax) {
  const T lA = T(levels.at(0)), lperp = levels.size() > 1 ? T(levels[1]) : T(0.0);
  numerics::BasicResolventMoments<T> U;
  U.z = R.z;
  for (int k = 0; k <= 3; ++k)
    for (int j = 0; j <= jmax; ++j)
      U.r[k][j] = lA * rho * Tm.r[k][j] + lperp * (R.r[k][j] - rho * Tm.r[k][j]);
  return U;
}

}  // namespace icl::theory
