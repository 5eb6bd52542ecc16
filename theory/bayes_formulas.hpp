// The Bayes-optimal errors of theory/bayes.hpp (docs/errors_phases.md §17) written once for a
// scalar type T: double (bayes.cpp) or ceres::Jet (their exact derivatives,
// theory/sensitivity.hpp). Roots are solved in double and lifted to T by one Newton step of
// their equation (numerics/stieltjes_lift.hpp explains why that is exact). Internal to theory/;
// the argument checks are bayes.cpp's.
#pragma once
#include <algorithm>
#include <type_traits>
#include <vector>

#include "numerics/residual_solver.hpp"
#include "numerics/spectral_measure.hpp"
#include "numerics/stieltjes_lift.hpp"
#include "theory/scalar_params.hpp"

namespace icl::theory {

// sigma_t^2 + ratio sigma_t^2 m(-ratio sigma_t^2), m of MP(ratio, 1); max(0, 1 - 1/ratio) at
// sigma_t = 0 (the null space of the r x L_t features).
template <class T>
T bayes_error_t(const T& ratio, const T& noise_std) {
  const T s2 = noise_std * noise_std;
  if (scalar_value(s2) == 0) return scalar_value(ratio) > 1 ? 1.0 - 1.0 / ratio : T(0.0);
  const T z = -ratio * s2;
  const double m0 = numerics::MarchenkoPastur(scalar_value(ratio), 1.0).stieltjes(scalar_value(z));
  const numerics::StieltjesPair<T> m = numerics::mp_stieltjes_lift(m0, z, ratio, T(1.0));
  return s2 + ratio * s2 * m.m;
}

// The prior N(0, Sigma), Sigma with eigenvalue position[k] on a fraction mass[k] of the
// directions: sigma_t^2 + k F(k), F(k) = sum w t / (t + k), the effective ridge k >= 0 solving
// k (alpha_test - F(k)) = sigma_t^2 (noiseless: F(k) = alpha_test, or k = 0 when alpha_test is
// at least the prior's rank).
template <class T>
T bayes_error_spectrum_t(const std::vector<T>& position, const std::vector<T>& mass,
                         const T& alpha_test, const T& noise_std) {
  const T s2 = noise_std * noise_std;
  // F(k) and F'(k) = -sum w t / (t + k)^2, over the levels with t > 0, for k double or T.
  const auto dof = [&](const auto& k, auto& slope) {
    using K = std::decay_t<decltype(k)>;
    K f(0.0);
    slope = K(0.0);
    for (std::size_t i = 0; i < position.size(); ++i) {
      if (!(scalar_value(position[i]) > 0)) continue;
      if constexpr (std::is_same_v<K, double>) {
        const double t = scalar_value(position[i]), w = scalar_value(mass[i]);
        f += w * t / (t + k);
        slope -= w * t / ((t + k) * (t + k));
      } else {
        f += mass[i] * position[i] / (position[i] + k);
        slope -= mass[i] * position[i] / ((position[i] + k) * (position[i] + k));
      }
    }
    return f;
  };
  double rank = 0, mean = 0;
  for (std::size_t i = 0; i < position.size(); ++i)
    if (scalar_value(position[i]) > 0) {
      rank += scalar_value(mass[i]);
      mean += scalar_value(mass[i]) * scalar_value(position[i]);
    }
  const double at = scalar_value(alpha_test), s20 = scalar_value(s2);
  if (s20 == 0 && at >= rank) return T(0.0);
  // The root in double (bracket: the residual is -s2 (or alpha_test - rank < 0) at 0 and >= 0
  // at `hi`, because k F(k) <= sum w t = mean), then one Newton step in T.
  double unused = 0;
  numerics::ScalarRootOptions opt;
  opt.hard_lo = 0;
  const double hi = (s20 + mean) / at + 1.0;
  const double k0 =
      s20 == 0
          ? numerics::bracketed_root([&](double k) { return at - dof(k, unused); }, 0.0, hi, opt).x
          : numerics::bracketed_root([&](double k) { return k * (at - dof(k, unused)) - s20; },
                                     0.0, hi, opt)
                .x;
  if constexpr (std::is_same_v<T, double>) {
    return s2 + k0 * dof(k0, unused);
  } else {
    // G(k) = k (alpha_test - F(k)) - s2 (noiseless: alpha_test - F(k)).
    const T k(k0);
    T dF;
    const T F = dof(k, dF);
    const T G = s20 == 0 ? alpha_test - F : k * (alpha_test - F) - s2;
    const T G_k = s20 == 0 ? -dF : alpha_test - F - k * dF;
    const T root = k - G / G_k;
    T unused_t;
    return s2 + root * dof(root, unused_t);
  }
}

// IDG's, ODG's and the shifted protocol's baselines at p (a ScalarParams): IDG with the prior
// of the training tasks (low rank: MP ratio rho / alpha_test), ODG the isotropic prior, the
// shift the test prior (the population levels' weights with the test eigenvalues as positions).
template <class T>
void bayes_optimal_t(const ScalarParams<T>& p, T& idg, T& odg, T* shift) {
  const Params& base = *p.base;
  const T at = p.effective_alpha_test();
  odg = bayes_error_t(1.0 / at, p.sigma_test);
  if (base.task_spectrum.empty() && shift == nullptr) {
    // Low-rank tasks without a shifted protocol: no spectrum to build (a solve per grid point
    // calls this; the vectors cost more than the formula).
    idg = bayes_error_t(p.rho / at, p.sigma_test);
    return;
  }
  std::vector<T> t, w;  // the population spectrum, its weights moving with rho
  if (base.task_spectrum.empty()) {
    t = {1.0 / p.rho};
    w = {p.rho};
    if (base.rho < 1) t.push_back(T(0.0)), w.push_back(1.0 - p.rho);
  } else {
    for (const auto& a : base.task_spectrum) t.push_back(T(a.position)), w.push_back(T(a.mass));
  }
  idg = base.task_spectrum.empty() ? bayes_error_t(p.rho / at, p.sigma_test)
                                   : bayes_error_spectrum_t(t, w, at, p.sigma_test);
  if (shift != nullptr) *shift = bayes_error_spectrum_t(p.test_eigenvalues(), w, at, p.sigma_test);
}

}  // namespace icl::theory
