// Stieltjes transforms with exact derivatives in their arguments (docs/spectral.md §6.5): the
// value m0 = m(z0) comes from the measure's own solver (double), and one Newton step of the
// algebraic equation that m satisfies, written for a scalar type T (double or ceres::Jet), lifts
// it to T. Because m0 is a root, the step changes the value by rounding only and gives the
// derivative part -G_theta / G_m exactly: the implicit function theorem for the equation
// G(m; z, theta) = 0 of the law. dm/dz is then the rational function -G_z / G_m of (m, z,
// theta), again in T, so that its own derivatives (d^2 m / dz^2, d/dtheta of dm/dz) are exact
// as well.
//
//   Marchenko-Pastur MP(c, s) (ratio c, scale s; atom at 0 for c > 1 included):
//     G(m) = c s z m^2 + (z - s (1 - c)) m + 1 = 0
//   generalized Marchenko-Pastur (ratio c, population (t_k, w_k), the Silverstein equation):
//     G(m) = m - sum_k w_k / (t_k (1 - c - c z m) - z) = 0
//
// The functions know nothing of where m0 comes from: they are checked against the measures'
// own derivatives (n = 1) and against central differences in the parameters (tests).
#pragma once
#include <type_traits>
#include <vector>

namespace icl::numerics {

template <class T>
struct StieltjesPair {
  T m;   // m(z) = int dmu(x) / (x - z)
  T dm;  // dm/dz = int dmu(x) / (x - z)^2
};

template <class T>
StieltjesPair<T> mp_stieltjes_lift(double m0, const T& z, const T& c, const T& s) {
  const auto G = [&](const T& m) { return c * s * z * m * m + (z - s * (1.0 - c)) * m + 1.0; };
  const auto G_m = [&](const T& m) { return 2.0 * c * s * z * m + z - s * (1.0 - c); };
  // (For T = double the step would only add rounding: m0 is kept.)
  T m(m0);
  if constexpr (!std::is_same_v<T, double>) m = T(m0) - G(T(m0)) / G_m(T(m0));
  const T G_z = c * s * m * m + m;
  return {m, -G_z / G_m(m)};
}

// The population of a generalized Marchenko-Pastur law with positions as T (a prior whose
// eigenvalues move with a parameter) or double.
template <class T, class Position>
StieltjesPair<T> gmp_stieltjes_lift(double m0, const T& z, const T& c,
                                    const std::vector<Position>& t, const std::vector<double>& w) {
  // G = m - sum w_k / u_k, u_k = t_k (1 - c - c z m) - z; G_m = 1 - sum w_k t_k c z / u_k^2,
  // G_z = - sum w_k (t_k c m + 1) / u_k^2.
  const auto parts = [&](const T& m, T& G, T& G_m, T& G_z) {
    G = m;
    G_m = T(1.0);
    G_z = T(0.0);
    for (std::size_t k = 0; k < t.size(); ++k) {
      const T u = t[k] * (1.0 - c - c * z * m) - z;
      const T u2 = u * u;
      G -= w[k] / u;
      G_m -= w[k] * t[k] * c * z / u2;
      G_z -= w[k] * (t[k] * c * m + 1.0) / u2;
    }
  };
  T G, G_m, G_z;
  parts(T(m0), G, G_m, G_z);
  T m(m0);
  if constexpr (!std::is_same_v<T, double>) {
    m = T(m0) - G / G_m;
    parts(m, G, G_m, G_z);
  }
  return {m, -G_z / G_m};
}

}  // namespace icl::numerics
