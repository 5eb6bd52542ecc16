// The replica saddle-point map Phi of docs/model.md §4.2, in two halves, written once for
// doubles and for ceres::Jet (exact Jacobians). Internal to theory/: lowrank.cpp solves
// x = Phi(x); finite_dim.cpp linearizes a perturbed Phi around that root (docs/finite_dim.md §21).
//
// x = (q, m, chi, qbar, chibar, qh, mh, chih, qbarh, chibarh); spec = (R32, R22, R12, R02,
// R21, R11, R01) at z = -(lambda + qbarh)/qh. The parameters P are a Params, or a
// ScalarParams<T> (theory/scalar_params.hpp) whose scalars carry derivative directions
// (theory/sensitivity.hpp).
#pragma once
#include "theory/params.hpp"
#include "theory/scalar_params.hpp"

namespace icl::theory::saddle_map {

constexpr int kN = 10;
enum Index { Q, M, CHI, QBAR, CHIBAR, QH, MH, CHIH, QBARH, CHIBARH };

// The order-parameter half: q, m, chi, qbar, chibar from the conjugates and the spectral
// values (Gamma's second moments against the spectrum of S). out[i] for i = Q..CHIBAR.
template <typename T, typename P>
void order_half(const P& p, const T* x, const T spec[7], T* out) {
  const T& R32 = spec[0]; const T& R22 = spec[1]; const T& R12 = spec[2]; const T& R02 = spec[3];
  const T& R21 = spec[4]; const T& R11 = spec[5]; const T& R01 = spec[6];
  const T qh2 = x[QH] * x[QH];
  const T A = x[MH] * x[MH] / qh2;           // mh^2 / qh^2
  const T B = x[CHIH] / (p.kappa * qh2);     // (chih / kappa) / qh^2
  const T C = x[CHIBARH] / (p.kappa * qh2);  // (chibarh / kappa) / qh^2
  out[Q] = A * R32 + B * R22 + C * R12;
  out[M] = (x[MH] / x[QH]) * R21;
  out[CHI] = R11 / (p.kappa * x[QH]);
  out[QBAR] = A * R22 + B * R12 + C * R02;
  out[CHIBAR] = R01 / (p.kappa * x[QH]);
}

// The conjugate half: the Gaussian channel of the square loss, one training sample with the
// D -> infinity moments: Delta = 1 + chi + nu chibar, E_tr = s2 - 2m + q + nu qbar.
// out[i] for i = QH..CHIBARH.
template <typename T, typename P>
void conjugate_half(const P& p, const T* x, T* out) {
  const auto K = p.tau / p.kappa;
  const auto nu = p.nu();
  const auto s2 = 1.0 + p.sigma * p.sigma;
  const T Delta = 1.0 + x[CHI] + nu * x[CHIBAR];
  const T Etr = s2 - 2.0 * x[M] + x[Q] + nu * x[QBAR];
  out[QH] = K / Delta;
  out[MH] = K / Delta;
  out[CHIH] = K * Etr / (Delta * Delta);
  out[QBARH] = nu * x[QH];
  out[CHIBARH] = nu * x[CHIH];
}

// The residual F(x) = x - Phi(x) of the map (docs/model.md §4.2-§4.3).
template <typename T, typename P>
void residual(const P& p, const T* x, const T spec[7], T* F) {
  T phi[kN];
  order_half(p, x, spec, phi);
  conjugate_half(p, x, phi);
  for (int i = 0; i < kN; ++i) F[i] = x[i] - phi[i];
}

}  // namespace icl::theory::saddle_map
