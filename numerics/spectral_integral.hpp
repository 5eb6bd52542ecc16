// Integrals against a SpectralMeasure by GSL adaptive quadrature (square-root edges handled by
// gsl_integration_qaws with weight (x-a)^{1/2} (b-x)^{1/2} on each support interval) plus the
// atoms, and the resolvent moments used by the replica saddle points.
//
// resolvent_moments(Quadrature) first tries one nested Gauss-Chebyshev / trapezoid rule for all 20
// entries per interval, with density_over_weight on its nodes cached in the measure (computed
// once per measure, reused for every z); otherwise GSL per entry. A lower edge a > 0 close to 0
// with a 1/x density factor (Marchenko-Pastur with ratio near 1) is integrated with that pole
// removed analytically (see spectral_integral.cpp), continuously through the hard edge a = 0.
#pragma once
#include <string>
#include <functional>

#include "numerics/spectral_measure.hpp"

namespace icl::numerics {

struct QuadratureOptions {
  double abs_tolerance = 0.0;
  double rel_tolerance = 1e-13;
  int max_subintervals = 2000;  // GSL workspace size
};

struct Integral {
  double value = 0.0;
  double abs_error = 0.0;  // GSL's error estimate for the continuous part
};

// \int f dmu = \int_support f(x) density(x) dx + sum_atoms mass f(position).
// Throws NumericalError (with GSL's message) when the quadrature fails.
Integral integrate(const SpectralMeasure& mu, const std::function<double(double)>& f,
                   const QuadratureOptions& options = {});

// R_{k,j}(z) = \int x^k (x - z)^{-j} dmu(x) for real z below the measure; k, j >= 0
// (docs/spectral.md §6.3-§6.4).
// With mu the spectrum of S: (1/D) tr S^k (S - z)^{-j}.
double resolvent_moment_quadrature(const SpectralMeasure& mu, double z, int k, int j,
                                   const QuadratureOptions& options = {});
// The same from the measure's exact Stieltjes derivatives and raw moments (x = (x - z) + z,
// binomial expansion; docs/spectral.md §6.5). Requires 0 <= k <= 3, 0 <= j <= 5.
double resolvent_moment_exact(const SpectralMeasure& mu, double z, int k, int j);

// All R_{k,j}(z), k = 0..3, j = 0..4, in one call (docs/spectral.md §6.3): the replica saddle
// point needs j = 0..3 and their z-derivatives d/dz R_{k,j} = j R_{k,j+1}, hence j = 4. The
// scalar may carry derivatives (ceres::Jet, theory/sensitivity.hpp), which fill j <= 2.
template <class T>
struct BasicResolventMoments {
  T z{};
  T r[4][5] = {};  // r[k][j] = R_{k,j}(z), j = 0..4
  const T& operator()(int k, int j) const { return r[k][j]; }
};
using ResolventMoments = BasicResolventMoments<double>;
enum class MomentMethod { Quadrature, Exact };
const char* to_string(MomentMethod m);                        // "quadrature" | "exact"
MomentMethod moment_method_from_string(const std::string& s);  // InvalidParams("moments")
ResolventMoments resolvent_moments(const SpectralMeasure& mu, double z,
                                   MomentMethod method = MomentMethod::Quadrature,
                                   const QuadratureOptions& options = {});

}  // namespace icl::numerics
