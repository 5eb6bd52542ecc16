// Spectral measures: probability measures on [0, inf) made of a continuous part with
// square-root edges on a union of intervals plus point masses (atoms) (docs/spectral.md §6,
// docs/general_covariance.md §12.2). One header for the base class and the three measures; one
// source file per measure: spectral_measure.cpp (base class defaults), marchenko_pastur.cpp,
// generalized_marchenko_pastur.cpp, point_mass_mixture.cpp.
//
// Conventions: the Stieltjes transform is m(z) = \int dmu(x) / (x - z)  (so m(z) > 0 for real z
// below the support, m ~ -1/z at infinity). Derivatives: d^n m / dz^n = n! \int dmu(x) (x - z)^{-(n+1)}.
#pragma once
#include <complex>
#include <limits>
#include <cstddef>
#include <memory>
#include <vector>

namespace icl::numerics {

namespace detail {
struct QuadratureNodeCache;   // numerics/detail/quadrature_node_cache.hpp (internal)
struct QuadratureCacheAccess;  // spectral_integral.cpp
}  // namespace detail

struct Atom {
  double position = 0.0;
  double mass = 0.0;
};

struct Interval {
  double lo = 0.0;
  double hi = 0.0;
};

// Abstract measure. Every implementation provides *exact* (closed-form or root-solved) values;
// the quadrature engine (spectral_integral.hpp) integrates density + atoms independently, and
// the two are the cross-check of each other.
class SpectralMeasure {
 public:
  SpectralMeasure();
  virtual ~SpectralMeasure() = default;
  // Intervals carrying the continuous part, sorted, disjoint, each with square-root edges.
  virtual std::vector<Interval> support() const = 0;
  // Density of the continuous part at x (0 outside support()).
  virtual double density(double x) const = 0;
  // Point masses (position, mass), masses > 0.
  virtual std::vector<Atom> atoms() const = 0;
  // Exact raw moment \int x^k dmu for k = 0..3 (k = 0 gives 1).
  virtual double raw_moment(int k) const = 0;
  // Exact n-th derivative (n = 0..4) of the Stieltjes transform at real z strictly below
  // the lowest point of the measure (support and atoms). Throws InvalidParams otherwise.
  virtual double stieltjes_derivative(double z, int n) const = 0;
  // Stieltjes transform off the real axis (Im z > 0), exact or root-solved.
  virtual std::complex<double> stieltjes(std::complex<double> z) const = 0;

  // Quadrature support: on support interval i = [lo, hi] the density is written as
  // (x - lo)^alpha (hi - x)^{1/2} g(x) with g smooth up to both edges. alpha = +1/2 for a
  // square-root edge, -1/2 for a hard edge at 0 (e.g. Marchenko-Pastur with ratio 1).
  virtual double lower_edge_exponent(std::size_t interval) const;
  // g(x) above, finite at the edges themselves. The default divides density() by the weight
  // (nudging x off the edges); implementations override it with a cancellation-free form.
  virtual double density_over_weight(double x, std::size_t interval) const;

  // n-th derivative of the Stieltjes transform of the continuous part alone (atoms
  // excluded), same domain as stieltjes_derivative. The default subtracts the atoms, which
  // cancels when z is close to an atom; implementations override it with exact forms.
  virtual double continuous_stieltjes_derivative(double z, int n) const;
  // out[n] = continuous_stieltjes_derivative(z, n) for n = 0..nmax (nmax <= 4), the same numbers
  // in one call: the exact resolvent moments need four at every z (docs/spectral.md §6.5). The
  // default calls the one-derivative form; Marchenko-Pastur (and mixtures of it) compute the
  // derivatives by one recurrence.
  virtual void continuous_stieltjes_derivatives(double z, int nmax, double* out) const;
  // out[n] = stieltjes_derivative(z, n) for n = 0..nmax (nmax <= 4), the same numbers in one
  // call (a Newton step needs g and g' at the same z). The default calls the one-derivative
  // form; Marchenko-Pastur and the point-mass mixture compute them by one recurrence.
  virtual void stieltjes_derivatives(double z, int nmax, double* out) const;

  // Pole of g at x = 0 on a square-root interval (alpha = +1/2) whose lower edge lo > 0
  // may be arbitrarily close to 0 (Marchenko-Pastur with ratio near 1: density ~ sqrt(x - lo) / x).
  // When density_pole_at_zero(i) is true, g(x) = q(x) / x on interval i with q analytic on a
  // neighbourhood of [0, hi], and density_over_weight_times_x(x, i) = q(x) for every x in [0, hi]
  // (including 0 <= x < lo, outside the support). The quadrature then treats the near-hard edge
  // analytically (see spectral_integral.cpp). Defaults: no pole; q = x g(x).
  virtual bool density_pole_at_zero(std::size_t interval) const;
  virtual double density_over_weight_times_x(double x, std::size_t interval) const;

  double stieltjes(double z) const { return stieltjes_derivative(z, 0); }
  // Lowest point of the measure (lowest atom or lowest support edge); kept by the measures'
  // constructors (cache_invariants), as every Stieltjes call checks its argument against it.
  double lower_edge() const;
  // atoms() as kept by the constructor (no copy, no merging per call): the per-z loops use it.
  const std::vector<Atom>& atom_list() const { return atoms_; }
  // Raw moment k (0..3) of the continuous part alone: raw_moment(k) minus the atoms' x^k, kept
  // by the constructor (the polynomial part of the exact resolvent moments, docs/spectral.md §6.5).
  double continuous_raw_moment(int k) const { return continuous_moments_[k]; }
  // 1 - total atom mass.
  double continuous_mass() const;

 protected:
  // The last step of a measure's constructor: lower_edge(), atom_list() and
  // continuous_raw_moment() computed once (the measure is immutable).
  void cache_invariants();

 private:
  double lower_edge_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<Atom> atoms_;
  double continuous_moments_[4] = {};
  // density_over_weight on the nested Chebyshev nodes of each support interval, filled
  // lazily by resolvent_moments(Quadrature) and reused for every z (the density does not depend on
  // z). Measures are immutable, so copies share it; filling is thread-safe.
  friend struct detail::QuadratureCacheAccess;
  std::shared_ptr<detail::QuadratureNodeCache> node_cache_;
};

// Marchenko-Pastur law of (scale/n) X X^T, X a p x n standard Gaussian matrix, ratio = p/n.
// Support scale (1 -+ sqrt(ratio))^2, density sqrt((b-x)(x-a)) / (2 pi scale ratio x),
// atom at 0 of mass 1 - 1/ratio when ratio > 1. Mean = scale.
class MarchenkoPastur final : public SpectralMeasure {
 public:
  MarchenkoPastur(double ratio, double scale = 1.0);  // throws InvalidParams unless both > 0, finite
  double ratio() const { return ratio_; }
  double scale() const { return scale_; }
  std::vector<Interval> support() const override;
  double density(double x) const override;
  std::vector<Atom> atoms() const override;
  double raw_moment(int k) const override;
  double stieltjes_derivative(double z, int n) const override;
  std::complex<double> stieltjes(std::complex<double> z) const override;
  using SpectralMeasure::stieltjes;
  double lower_edge_exponent(std::size_t interval) const override;
  double density_over_weight(double x, std::size_t interval) const override;
  double continuous_stieltjes_derivative(double z, int n) const override;
  void continuous_stieltjes_derivatives(double z, int nmax, double* out) const override;
  void stieltjes_derivatives(double z, int nmax, double* out) const override;
  bool density_pole_at_zero(std::size_t interval) const override;           // ratio != 1
  double density_over_weight_times_x(double x, std::size_t interval) const override;  // 1/(2 pi c s)

 private:
  double ratio_, scale_;
  // std::pow(s, n + 1), n = 0..4, for s = scale and for the dual law's s = scale * ratio (the
  // Stieltjes derivatives divide by them at every z).
  double scale_pow_[5], dual_scale_pow_[5];
};

// The O(1) mean correction of the resolvent trace of a real Gaussian sample covariance
// T = G G^T / n (p x n, iid N(0, 1) entries, ratio y = p/n), below its spectrum (zeta < 0):
//   E tr(T - zeta)^{-1} - p m(zeta) -> y mu^3 (1 + mu)^{-3} / (1 - y mu^2 (1 + mu)^{-2})^2,
//   mu = -(1 - y)/zeta + y m(zeta),
// with m = MarchenkoPastur(y).stieltjes(zeta) passed in (Bai and Silverstein's real case; complex
// data have none). The finite-D theory's task spectrum and Bayes baselines use it
// (docs/finite_dim.md §21.5, §21.16).
double real_wishart_trace_bias(double ratio, double zeta, double m);

// Generalized Marchenko-Pastur law: the limiting spectrum of S = (1/n) Sigma^{1/2} X X^T Sigma^{1/2}
// (p x p, ratio = p/n) whose population covariance Sigma has the discrete spectrum `population`
// (eigenvalue t_k >= 0 with weight w_k, weights summing to 1). m(z) solves the Silverstein equation
//     m = sum_k w_k / ( t_k (1 - ratio - ratio z m) - z ),
// solved on the real axis below the support (scalar bracketed root) and just above it (complex
// Newton with continuation in Im z); density = Im m(x + i0) / pi; support edges from the extrema of
// the inverse map of the companion transform.
class GeneralizedMarchenkoPastur final : public SpectralMeasure {
 public:
  GeneralizedMarchenkoPastur(double ratio, std::vector<Atom> population);
  double ratio() const { return ratio_; }
  const std::vector<Atom>& population() const { return population_; }
  std::vector<Interval> support() const override;
  double density(double x) const override;
  std::vector<Atom> atoms() const override;
  double raw_moment(int k) const override;
  double stieltjes_derivative(double z, int n) const override;
  std::complex<double> stieltjes(std::complex<double> z) const override;
  using SpectralMeasure::stieltjes;
  double lower_edge_exponent(std::size_t interval) const override;
  double density_over_weight(double x, std::size_t interval) const override;
  double continuous_stieltjes_derivative(double z, int n) const override;

 private:
  // Internal representation (v = -1/underline m): z = x(v) = v (1 + ratio sum_k w_k t_k / (v - t_k))
  // over the nonzero population eigenvalues; support edges are x at the critical points of x(v).
  struct Edge {
    double v = 0.0;  // critical point of x(v)
    double x = 0.0;  // edge position x(v)
  };
  double ratio_;
  std::vector<Atom> population_;
  std::vector<Interval> support_;
  std::vector<Atom> atoms_;
  std::vector<double> t_, w_;     // nonzero population eigenvalues (sorted) and their weights
  double w0_ = 0.0;               // population weight at eigenvalue 0
  std::vector<Edge> edges_;       // 2 per support interval (lower, upper)
  bool hard_edge_ = false;        // ratio * (1 - w0) == 1: lower edge at 0 with x^{-1/2} density
  double xv(double v) const;      // x(v)
  double real_derivative(double z, int n, bool continuous_only) const;
  // v = v_e + w solving x(v) - x(v_e) = xe_offset, by the cancellation-free form w^2 K(w).
  std::complex<double> edge_local_root(const Edge& e, double offset) const;
};

// weight * base + extra point masses (total mass 1). E.g. the null directions of a low-rank
// covariance: (1 - rho) delta_0 + rho * MP(rho/kappa, 1/rho).
class PointMassMixture final : public SpectralMeasure {
 public:
  PointMassMixture(std::shared_ptr<const SpectralMeasure> base, double base_weight,
                   std::vector<Atom> extra_atoms);
  std::vector<Interval> support() const override;
  double density(double x) const override;
  std::vector<Atom> atoms() const override;  // merged: base atoms scaled by weight + extra atoms
  double raw_moment(int k) const override;
  double stieltjes_derivative(double z, int n) const override;
  std::complex<double> stieltjes(std::complex<double> z) const override;
  using SpectralMeasure::stieltjes;
  double lower_edge_exponent(std::size_t interval) const override;
  double density_over_weight(double x, std::size_t interval) const override;
  double continuous_stieltjes_derivative(double z, int n) const override;
  void continuous_stieltjes_derivatives(double z, int nmax, double* out) const override;
  void stieltjes_derivatives(double z, int nmax, double* out) const override;
  bool density_pole_at_zero(std::size_t interval) const override;
  double density_over_weight_times_x(double x, std::size_t interval) const override;

 private:
  std::shared_ptr<const SpectralMeasure> base_;
  double weight_;
  std::vector<Atom> extra_;
};

}  // namespace icl::numerics
