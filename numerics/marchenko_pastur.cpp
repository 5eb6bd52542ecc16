// The Marchenko-Pastur law in closed form (docs/spectral.md §6.1-§6.2): support edges, density,
// atom, raw moments, and the Stieltjes transform with its derivatives by implicit
// differentiation of its quadratic equation.
#include "numerics/spectral_measure.hpp"

#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "numerics/detail/measure_checks.hpp"

namespace icl::numerics {

namespace {
using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

// Unit-scale edges. (1 - sqrt c)^2 is written as ((1 - c)/(1 + sqrt c))^2 so that it keeps full
// relative accuracy for c near 1.
double mp_lower(double c) {
  const double r = (1.0 - c) / (1.0 + std::sqrt(c));
  return r * r;
}
double mp_upper(double c) {
  const double r = 1.0 + std::sqrt(c);
  return r * r;
}

// Unit-scale MP Stieltjes transform and derivatives at real zeta below the measure.
// m solves P(zeta, m) = c zeta m^2 + (zeta - (1 - c)) m + 1 = 0 with m > 0; the positive root is
// m = 2 / (-B + R) = (-B - R) / (2 c zeta), B = zeta - 1 + c, R = sqrt((a - zeta)(b - zeta)),
// choosing the form without cancellation. Derivatives by implicit differentiation of P:
// dP/dzeta = N + m' Q with N = c m^2 + m, Q = 2 c zeta m + zeta - (1 - c) = -R, so differentiating
// k times: N^{(k)} + sum_{i<=k} C(k,i) m^{(i+1)} Q^{(k-i)} = 0, i.e.
//   m^{(k+1)} = [N^{(k)} + sum_{i<k} C(k,i) m^{(i+1)} Q^{(k-i)}] / R,
// with Q' = 1 + 2c (m + zeta m'), Q^{(l)} = 2c (zeta m^{(l)} + l m^{(l-1)}) (l >= 2). Every term
// is positive (m^{(i)} = i! int (x-zeta)^{-i-1} > 0, Q^{(l)} = 2c l! int x (x-zeta)^{-l-1} > 0),
// so the sums do not cancel; the cancellation inside Q^{(l)} only costs absolute error.
void mp_unit_derivatives(double c, double zeta, int n, double* m) {
  const double a = mp_lower(c), b = mp_upper(c);
  const double B = zeta - (1.0 - c);  // grouped: zeta - 1 + c cancels for c ~ 1, zeta ~ 0
  const double R = std::sqrt((a - zeta) * (b - zeta));
  m[0] = (-B >= 0.0) ? 2.0 / (-B + R) : (-B - R) / (2.0 * c * zeta);
  double Q[5] = {-R, 0, 0, 0, 0};
  for (int k = 0; k < n; ++k) {
    double Nk = m[k];
    for (int i = 0; i <= k; ++i) Nk += c * detail::binom(k, i) * m[i] * m[k - i];
    double s = Nk;
    for (int i = 0; i < k; ++i) s += detail::binom(k, i) * m[i + 1] * Q[k - i];
    m[k + 1] = s / R;
    const int l = k + 1;
    Q[l] = (l == 1) ? 1.0 + 2.0 * c * (m[0] + zeta * m[1]) : 2.0 * c * (zeta * m[l] + l * m[l - 1]);
  }
}

// The Stieltjes derivatives n = 0..nmax of MP(c, s) at real z below it: m_s(z) = m_1(z/s)/s, so
// m_s^{(n)}(z) = s^{-(n+1)} m_1^{(n)}(z/s), with s_pow[n] = std::pow(s, n + 1) (kept by the
// measure). (The recurrence gives m^{(n)} independently of nmax.)
void mp_derivatives(double c, double s, const double* s_pow, double z, int nmax, double* out) {
  double m[5] = {};
  mp_unit_derivatives(c, z / s, nmax, m);
  for (int n = 0; n <= nmax; ++n) out[n] = m[n] / s_pow[n];
}
}  // namespace

MarchenkoPastur::MarchenkoPastur(double ratio, double scale) : ratio_(ratio), scale_(scale) {
  if (!std::isfinite(ratio) || ratio <= 0.0) throw InvalidParams("ratio", "must be finite and > 0");
  if (!std::isfinite(scale) || scale <= 0.0) throw InvalidParams("scale", "must be finite and > 0");
  for (int n = 0; n < 5; ++n) {
    scale_pow_[n] = std::pow(scale_, n + 1);
    dual_scale_pow_[n] = std::pow(scale_ * ratio_, n + 1);
  }
  cache_invariants();
}

std::vector<Interval> MarchenkoPastur::support() const {
  return {Interval{scale_ * mp_lower(ratio_), scale_ * mp_upper(ratio_)}};
}

double MarchenkoPastur::density(double x) const {
  const double a = scale_ * mp_lower(ratio_), b = scale_ * mp_upper(ratio_);
  if (!(x > a && x < b)) return 0.0;
  return std::sqrt((b - x) * (x - a)) / (2.0 * kPi * ratio_ * scale_ * x);
}

std::vector<Atom> MarchenkoPastur::atoms() const {
  if (ratio_ > 1.0) return {Atom{0.0, 1.0 - 1.0 / ratio_}};
  return {};
}

double MarchenkoPastur::raw_moment(int k) const {
  detail::check_moment_order(k);
  // Narayana polynomials: E x^k = s^k sum_{i=1}^{k} N(k,i) c^{i-1}.
  const double c = ratio_, s = scale_;
  switch (k) {
    case 0: return 1.0;
    case 1: return s;
    case 2: return s * s * (1.0 + c);
    default: return s * s * s * (1.0 + c * (3.0 + c));
  }
}

double MarchenkoPastur::lower_edge_exponent(std::size_t) const {
  return ratio_ == 1.0 ? -0.5 : 0.5;
}

double MarchenkoPastur::density_over_weight(double x, std::size_t) const {
  // density = sqrt((b-x)(x-a)) / (2 pi c s x): over the square-root weight this is 1/(2 pi c s x);
  // at c = 1 (a = 0, weight x^{-1/2} (b-x)^{1/2}) it is the constant 1/(2 pi s).
  if (ratio_ == 1.0) return 1.0 / (2.0 * kPi * scale_);
  return 1.0 / (2.0 * kPi * ratio_ * scale_ * x);
}

bool MarchenkoPastur::density_pole_at_zero(std::size_t) const { return ratio_ != 1.0; }

double MarchenkoPastur::density_over_weight_times_x(double, std::size_t) const {
  // x g(x) = 1/(2 pi c s) for every x (at c = 1 too, where g itself is that constant: callers only
  // use this when density_pole_at_zero()).
  return 1.0 / (2.0 * kPi * ratio_ * scale_);
}

double MarchenkoPastur::stieltjes_derivative(double z, int n) const {
  detail::check_derivative_order(n);
  const double lo = lower_edge();
  detail::check_below(z, lo);
  double m[5];
  mp_derivatives(ratio_, scale_, scale_pow_, z, n, m);
  return m[n];
}

void MarchenkoPastur::stieltjes_derivatives(double z, int nmax, double* out) const {
  detail::check_derivative_order(nmax);
  detail::check_below(z, lower_edge());
  mp_derivatives(ratio_, scale_, scale_pow_, z, nmax, out);
}

double MarchenkoPastur::continuous_stieltjes_derivative(double z, int n) const {
  double m[5];
  continuous_stieltjes_derivatives(z, n, m);
  return m[n];
}

void MarchenkoPastur::continuous_stieltjes_derivatives(double z, int nmax, double* out) const {
  detail::check_derivative_order(nmax);
  if (ratio_ <= 1.0) {
    detail::check_below(z, lower_edge());
    mp_derivatives(ratio_, scale_, scale_pow_, z, nmax, out);
    return;
  }
  detail::check_below(z, 0.0);
  // For c > 1 the nonzero eigenvalues of (s/n) X X^T (p x p) are those of (s c / p) X^T X (n x n),
  // an MP law with ratio 1/c and scale s c; they carry mass 1/c: mu = (1 - 1/c) delta_0 + MP(1/c, s c)/c.
  mp_derivatives(1.0 / ratio_, scale_ * ratio_, dual_scale_pow_, z, nmax, out);
  for (int n = 0; n <= nmax; ++n) out[n] /= ratio_;
}

std::complex<double> MarchenkoPastur::stieltjes(std::complex<double> z) const {
  if (z.imag() < 0.0) return std::conj(stieltjes(std::conj(z)));
  if (z.imag() == 0.0) return stieltjes_derivative(z.real(), 0);
  const double c = ratio_;
  const cd zeta = z / scale_;
  // R = sqrt(zeta - a) sqrt(zeta - b) (principal roots) is analytic off [a, b] and ~ zeta at
  // infinity, which selects the branch with Im m > 0. The two algebraically equal forms
  // 2/(-B - R) and (-B + R)/(2 c zeta) are chosen to avoid cancellation.
  const cd B = zeta - (1.0 - c);
  const cd R = std::sqrt(zeta - mp_lower(c)) * std::sqrt(zeta - mp_upper(c));
  const cd d1 = -B - R, d2 = -B + R;
  const cd m = (std::abs(d1) >= std::abs(d2)) ? 2.0 / d1 : d2 / (2.0 * c * zeta);
  return m / scale_;
}

double real_wishart_trace_bias(double ratio, double zeta, double m) {
  const double mu = -(1 - ratio) / zeta + ratio * m;
  const double r = mu / (1 + mu);
  const double den = 1 - ratio * r * r;
  return ratio * r * r * r / (den * den);
}

}  // namespace icl::numerics
