// The Letey/Lu ridgeless test error (docs/errors_phases.md §11.1) written once for a scalar type
// T: double (lowrank.cpp's solve_letey) or ceres::Jet (its exact derivatives,
// theory/sensitivity.hpp). Written from its formulas with the population spectrum of the train
// covariance, independently of the replica code (only g(-nu) and g'(-nu) of S are shared).
// Internal to theory/.
#pragma once
#include <vector>

#include "theory/scalar_params.hpp"

namespace icl::theory {

// At the ridgeless root xi (xi g(-(xi + nu0)) = 1 - tau below tau = 1, else 0): nu = nu0 + xi,
// Mv = g(-nu), Mp = dM/dnu = -g'(-nu) of the spectrum of S, and the memorization weight e.
template <class T>
struct LeteyCore {
  T xi, nu, Mv, Mp, ak, e;
};

template <class T>
LeteyCore<T> letey_core(const ScalarParams<T>& p, const T& xi, const T& Mv, const T& Mp) {
  LeteyCore<T> c;
  const T nu0 = (1.0 + p.sigma * p.sigma) / p.alpha;  // tr C_tr / D = 1
  const T s2 = p.sigma * p.sigma;
  c.xi = xi;
  c.nu = nu0 + xi;
  c.Mv = Mv;
  c.Mp = Mp;
  c.ak = 1.0 - (1.0 - c.nu * Mv) / p.kappa;
  c.e = (s2 + c.nu - c.nu * c.nu * Mv - xi * (1.0 - 2.0 * c.nu * Mv - c.nu * c.nu * Mp)) /
        (p.tau - (1.0 - 2.0 * xi * Mv - xi * xi * Mp));
  return c;
}

// The test error for a test covariance sharing the eigenbasis of C_tr, given by its eigenvalue
// c_te[k] on each population level (t[k], w[k]): t (IDG), 1 (ODG) or the shifted protocol's test
// eigenvalues (docs/general_covariance.md §20).
template <class T, class A, class B>
T letey_error(const ScalarParams<T>& p, const LeteyCore<T>& c, const std::vector<A>& t,
              const std::vector<A>& w, const std::vector<B>& c_te) {
  const T st2 = p.sigma_test * p.sigma_test;
  const T at = p.effective_alpha_test();
  T trF(0.0), trF2(0.0), trC(0.0);
  for (std::size_t k = 0; k < t.size(); ++k) {
    const T f = 1.0 / (c.ak * t[k] + c.nu);
    trF += w[k] * c_te[k] * f;
    trF2 += w[k] * c_te[k] * f * f * ((c.Mv + c.nu * c.Mp) / p.kappa * t[k] + 1.0);
    trC += w[k] * c_te[k];
  }
  const T r_te = trC + st2;
  return st2 + (r_te / at) * (1.0 + (c.e - 2.0 * c.nu) * c.Mv + (c.xi * c.e - c.nu * c.nu) * c.Mp) +
         c.e * trF - (c.e * c.xi - c.nu * c.nu) * trF2;
}

// The population spectrum of C_tr as T (low rank: {1/rho on rho, 0 on 1 - rho}, moving with
// rho), positions in t and weights in w.
template <class T>
void letey_population(const ScalarParams<T>& p, std::vector<T>& t, std::vector<T>& w) {
  t.clear();
  w.clear();
  if (!p.base->task_spectrum.empty()) {
    for (const auto& a : p.base->task_spectrum) t.push_back(T(a.position)), w.push_back(T(a.mass));
    return;
  }
  t.push_back(1.0 / p.rho);
  w.push_back(p.rho);
  if (p.base->rho < 1) t.push_back(T(0.0)), w.push_back(1.0 - p.rho);
}

}  // namespace icl::theory
