// The SpectralMeasure base class: defaults shared by every measure (lowest point, continuous
// mass, the generic density-over-weight and continuous-part fallbacks). The measures themselves
// are in marchenko_pastur.cpp, generalized_marchenko_pastur.cpp and point_mass_mixture.cpp;
// conventions in spectral_measure.hpp.
#include "numerics/spectral_measure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/detail/measure_checks.hpp"
#include "numerics/detail/quadrature_node_cache.hpp"

namespace icl::numerics {

SpectralMeasure::SpectralMeasure() : node_cache_(std::make_shared<detail::QuadratureNodeCache>()) {}

bool SpectralMeasure::density_pole_at_zero(std::size_t) const { return false; }

double SpectralMeasure::density_over_weight_times_x(double x, std::size_t interval) const {
  return x * density_over_weight(x, interval);
}

double SpectralMeasure::lower_edge() const {
  if (!std::isnan(lower_edge_)) return lower_edge_;
  double lo = std::numeric_limits<double>::infinity();
  for (const Atom& a : atoms()) lo = std::min(lo, a.position);
  const auto sup = support();
  if (!sup.empty()) lo = std::min(lo, sup.front().lo);
  return lo;
}

void SpectralMeasure::cache_invariants() {
  lower_edge_ = lower_edge();
  atoms_ = atoms();
  for (int k = 0; k < 4; ++k) {
    double m = raw_moment(k);
    for (const Atom& a : atoms_) {
      double xk = 1.0;  // a.position^k by repeated products (as the resolvent moments use it)
      for (int i = 0; i < k; ++i) xk *= a.position;
      m -= a.mass * xk;
    }
    continuous_moments_[k] = m;
  }
}

double SpectralMeasure::continuous_mass() const {
  double m = 1.0;
  for (const Atom& a : atoms()) m -= a.mass;
  return m;
}

double SpectralMeasure::lower_edge_exponent(std::size_t) const { return 0.5; }

double SpectralMeasure::continuous_stieltjes_derivative(double z, int n) const {
  // m_cont^{(n)} = m^{(n)} - sum_atoms mass n! / (pos - z)^{n+1}
  double m = stieltjes_derivative(z, n);
  for (const Atom& a : atoms()) m -= a.mass * detail::factorial(n) / std::pow(a.position - z, n + 1);
  return m;
}

void SpectralMeasure::continuous_stieltjes_derivatives(double z, int nmax, double* out) const {
  for (int n = 0; n <= nmax; ++n) out[n] = continuous_stieltjes_derivative(z, n);
}

void SpectralMeasure::stieltjes_derivatives(double z, int nmax, double* out) const {
  for (int n = 0; n <= nmax; ++n) out[n] = stieltjes_derivative(z, n);
}

double SpectralMeasure::density_over_weight(double x, std::size_t interval) const {
  // Generic fallback: density / ((x-lo)^alpha (hi-x)^{1/2}), evaluated slightly inside the
  // interval at the edges themselves (0/0 there). Subclasses override with exact forms.
  const auto sup = support();
  const Interval I = sup.at(interval);
  const double alpha = lower_edge_exponent(interval);
  const double h = 1e-9 * (I.hi - I.lo);
  x = std::clamp(x, I.lo + h, I.hi - h);
  return density(x) / (std::pow(x - I.lo, alpha) * std::sqrt(I.hi - x));
}

}  // namespace icl::numerics
