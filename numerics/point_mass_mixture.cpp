// Point-mass mixtures: weight * base + extra atoms (e.g. the null directions of a low-rank
// covariance, docs/spectral.md §6.1). Every method forwards to the base measure and adds the atoms.
#include "numerics/spectral_measure.hpp"

#include <algorithm>
#include <cmath>
#include <complex>

#include "numerics/detail/measure_checks.hpp"

namespace icl::numerics {

namespace {
using cd = std::complex<double>;
}  // namespace

PointMassMixture::PointMassMixture(std::shared_ptr<const SpectralMeasure> base, double base_weight,
                                   std::vector<Atom> extra_atoms)
    : base_(std::move(base)), weight_(base_weight), extra_(std::move(extra_atoms)) {
  if (!base_) throw InvalidParams("base", "must not be null");
  if (!std::isfinite(weight_) || weight_ < 0.0 || weight_ > 1.0)
    throw InvalidParams("base_weight", "must be in [0, 1]");
  double total = weight_;
  for (const Atom& a : extra_) {
    if (!std::isfinite(a.position) || a.position < 0.0)
      throw InvalidParams("extra_atoms", "positions must be finite and >= 0");
    if (!std::isfinite(a.mass) || a.mass <= 0.0) throw InvalidParams("extra_atoms", "masses must be > 0");
    total += a.mass;
  }
  if (std::abs(total - 1.0) > 1e-12) throw InvalidParams("extra_atoms", "total mass must be 1");
  cache_invariants();
}

std::vector<Interval> PointMassMixture::support() const {
  return weight_ > 0.0 ? base_->support() : std::vector<Interval>{};
}
double PointMassMixture::density(double x) const { return weight_ > 0.0 ? weight_ * base_->density(x) : 0.0; }
double PointMassMixture::lower_edge_exponent(std::size_t i) const { return base_->lower_edge_exponent(i); }
double PointMassMixture::density_over_weight(double x, std::size_t i) const {
  return weight_ * base_->density_over_weight(x, i);
}
bool PointMassMixture::density_pole_at_zero(std::size_t i) const {
  return weight_ > 0.0 && base_->density_pole_at_zero(i);
}
double PointMassMixture::density_over_weight_times_x(double x, std::size_t i) const {
  return weight_ * base_->density_over_weight_times_x(x, i);
}

std::vector<Atom> PointMassMixture::atoms() const {
  std::vector<Atom> all = extra_;
  if (weight_ > 0.0)
    for (const Atom& a : base_->atoms()) all.push_back(Atom{a.position, weight_ * a.mass});
  std::sort(all.begin(), all.end(), [](const Atom& x, const Atom& y) { return x.position < y.position; });
  std::vector<Atom> merged;
  for (const Atom& a : all) {
    if (!merged.empty() && merged.back().position == a.position)
      merged.back().mass += a.mass;
    else
      merged.push_back(a);
  }
  return merged;
}

double PointMassMixture::raw_moment(int k) const {
  detail::check_moment_order(k);
  double m = weight_ > 0.0 ? weight_ * base_->raw_moment(k) : 0.0;
  for (const Atom& a : extra_) m += a.mass * std::pow(a.position, k);
  return m;
}

double PointMassMixture::continuous_stieltjes_derivative(double z, int n) const {
  detail::check_derivative_order(n);
  const double lo = lower_edge();
  detail::check_below(z, lo);
  return weight_ > 0.0 ? weight_ * base_->continuous_stieltjes_derivative(z, n) : 0.0;
}

void PointMassMixture::continuous_stieltjes_derivatives(double z, int nmax, double* out) const {
  detail::check_derivative_order(nmax);
  detail::check_below(z, lower_edge());
  if (weight_ > 0.0) {
    base_->continuous_stieltjes_derivatives(z, nmax, out);
    for (int n = 0; n <= nmax; ++n) out[n] *= weight_;
  } else {
    for (int n = 0; n <= nmax; ++n) out[n] = 0.0;
  }
}

double PointMassMixture::stieltjes_derivative(double z, int n) const {
  detail::check_derivative_order(n);
  const double lo = lower_edge();
  detail::check_below(z, lo);
  // d^n/dz^n sum mass/(pos - z) = n! sum mass / (pos - z)^{n+1}.
  double m = weight_ > 0.0 ? weight_ * base_->stieltjes_derivative(z, n) : 0.0;
  // pow(x, 1) is x exactly: the Stieltjes transform itself (every root search) without a pow.
  for (const Atom& a : extra_)
    m += a.mass * detail::factorial(n) / (n == 0 ? a.position - z : std::pow(a.position - z, n + 1));
  return m;
}

void PointMassMixture::stieltjes_derivatives(double z, int nmax, double* out) const {
  detail::check_derivative_order(nmax);
  detail::check_below(z, lower_edge());
  // The operations of stieltjes_derivative(z, n) for every n, the base's in one call.
  if (weight_ > 0.0) {
    base_->stieltjes_derivatives(z, nmax, out);
    for (int n = 0; n <= nmax; ++n) out[n] *= weight_;
  } else {
    for (int n = 0; n <= nmax; ++n) out[n] = 0.0;
  }
  // (x - z)^2 as a product: the same number as pow(x - z, 2) (both correctly rounded), without
  // pow's cost in every Newton step of the reduced solve (theory/lowrank.cpp).
  for (const Atom& a : extra_)
    for (int n = 0; n <= nmax; ++n) {
      const double d = a.position - z;
      out[n] += a.mass * detail::factorial(n) / (n == 0 ? d : n == 1 ? d * d : std::pow(d, n + 1));
    }
}

std::complex<double> PointMassMixture::stieltjes(std::complex<double> z) const {
  cd m = weight_ > 0.0 ? weight_ * base_->stieltjes(z) : cd(0.0);
  for (const Atom& a : extra_) m += a.mass / (a.position - z);
  return m;
}

}  // namespace icl::numerics
