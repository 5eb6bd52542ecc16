// The spectral values of the saddle point, R_{k,j} and T_{k,j} for j <= 2, as a scalar type T
// carrying derivatives in the parameters and in z (docs/sensitivity.md §22.2): the Stieltjes
// transform of the law of S is lifted from its double value by numerics/stieltjes_lift.hpp, and
// everything else is algebra in T:
//   R_{0,1} = m, R_{0,2} = dm/dz, R_{k,0} = (1/D) tr S^k (closed forms in the parameters),
//   R_{k,j} = R_{k-1,j-1} + z R_{k-1,j}     (S^k = S^{k-1} (S - z) + z S^{k-1}).
// Low-rank tasks: S = rho MP(rho/kappa, 1/rho) + (1 - rho) delta_0 and T the moments of that MP
// law; a task spectrum: S the generalized MP law of ratio 1/kappa and T its deterministic
// equivalent (theory/spectral_model.hpp). The double values equal SpectralModel::at to rounding
// (a test). Internal to theory/.
#pragma once
#include <cmath>
#include <vector>

#include "numerics/stieltjes_lift.hpp"
#include "theory/scalar_params.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

template <class T>
struct LiftedSpectrum {
  numerics::BasicResolventMoments<T> R, T_;  // j <= 2 filled; T_ is T_{k,j} (Sigma-weighted)
};

namespace detail {

// R_{k,j}, k <= 3, j <= 2 from m, dm/dz and the raw moments raw[k] = R_{k,0}, k <= 2.
template <class T>
void fill_from_stieltjes(numerics::BasicResolventMoments<T>& R, const T& z,
                         const numerics::StieltjesPair<T>& st, const T raw[3]) {
  R.z = z;
  for (int k = 0; k <= 2; ++k) R.r[k][0] = raw[k];
  R.r[3][0] = T(std::nan(""));
  R.r[0][1] = st.m;
  R.r[0][2] = st.dm;
  for (int k = 1; k <= 3; ++k)
    for (int j = 1; j <= 2; ++j) R.r[k][j] = R.r[k - 1][j - 1] + z * R.r[k - 1][j];
  for (int k = 0; k <= 3; ++k) R.r[k][3] = R.r[k][4] = T(std::nan(""));
}

}  // namespace detail

// The spectral values at z (z below the spectrum of S) for the parameters p (their values must
// be those `model` was built for: the double Stieltjes transform comes from it).
template <class T>
LiftedSpectrum<T> lift_spectrum(const SpectralModel& model, const ScalarParams<T>& p, const T& z) {
  using numerics::StieltjesPair;
  LiftedSpectrum<T> out;
  const double z0 = scalar_value(z);
  if (model.low_rank()) {
    // In span(A): MP of ratio c = rho/kappa and scale s = 1/rho (mean s, E x^2 = s^2 (1 + c)).
    const T c = p.rho / p.kappa, s = 1.0 / p.rho;
    const StieltjesPair<T> mp = numerics::mp_stieltjes_lift(
        model.spectrum_on_task_subspace().stieltjes(z0), z, c, s);
    const T raw_mp[3] = {T(1.0), s, s * s * (1.0 + c)};
    detail::fill_from_stieltjes(out.T_, z, mp, raw_mp);
    // S = rho MP + (1 - rho) delta_0: the atom adds (-z)^{-j} to R_{0,j}.
    const StieltjesPair<T> st{p.rho * mp.m - (1.0 - p.rho) / z,
                              p.rho * mp.dm + (1.0 - p.rho) / (z * z)};
    const T raw[3] = {T(1.0), p.rho * s, p.rho * s * s * (1.0 + c)};
    detail::fill_from_stieltjes(out.R, z, st, raw);
    return out;
  }
  // A task spectrum: S ~ GMP(c = 1/kappa, Sigma); E S = Sigma, E S^2 = Sigma^2 + c (tr Sigma/D)
  // Sigma.
  const std::vector<numerics::Atom>& pop = p.base->task_spectrum;
  std::vector<double> t, w;
  double t1 = 0, t2 = 0;
  for (const auto& a : pop) {
    t.push_back(a.position);
    w.push_back(a.mass);
    t1 += a.mass * a.position;
    t2 += a.mass * a.position * a.position;
  }
  const T c = 1.0 / p.kappa;
  const StieltjesPair<T> st =
      numerics::gmp_stieltjes_lift(model.spectrum_of_S().stieltjes(z0), z, c, t, w);
  const T raw[3] = {T(1.0), T(t1), t2 + c * t1 * t1};
  detail::fill_from_stieltjes(out.R, z, st, raw);
  out.T_ = deterministic_equivalent(z, out.R, c, pop, t, 2);
  return out;
}

}  // namespace icl::theory
