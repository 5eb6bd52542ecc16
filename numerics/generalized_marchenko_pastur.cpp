// The generalized Marchenko-Pastur law (docs/general_covariance.md §12.2): support edges from the
// critical points of the inverse map x(v), the density by a cancellation-free local root near each
// edge, the Stieltjes transform and its derivatives on the real axis below the support (bracketed
// root + Faa di Bruno) and off the axis (Newton with continuation in Im z).
#include "numerics/spectral_measure.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "numerics/detail/measure_checks.hpp"
#include "numerics/residual_solver.hpp"

namespace icl::numerics {

namespace {

using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

// Faa di Bruno for m(z) = psi(v(z)) up to order 4: d^n m/dz^n from psi^{(l)}(v), v^{(l)}(z).
double compose(int n, const double* p, const double* v) {
  switch (n) {
    case 0: return p[0];
    case 1: return p[1] * v[1];
    case 2: return p[2] * v[1] * v[1] + p[1] * v[2];
    case 3: return p[3] * v[1] * v[1] * v[1] + 3.0 * p[2] * v[1] * v[2] + p[1] * v[3];
    default:
      return p[4] * std::pow(v[1], 4) + 6.0 * p[3] * v[1] * v[1] * v[2] +
             p[2] * (4.0 * v[1] * v[3] + 3.0 * v[2] * v[2]) + p[1] * v[4];
  }
}

// Derivatives of the inverse function v(z) of z = x(v), from x^{(l)}(v) (x[1] != 0):
// v' = 1/x', v'' = -x''/x'^3, v''' = (3x''^2 - x'x''')/x'^5,
// v'''' = (-15x''^3 + 10x'x''x''' - x'^2 x'''')/x'^7.
void inverse_derivatives(const double* x, double* v) {
  const double x1 = x[1];
  v[1] = 1.0 / x1;
  v[2] = -x[2] / (x1 * x1 * x1);
  v[3] = (3.0 * x[2] * x[2] - x1 * x[3]) / std::pow(x1, 5);
  v[4] = (-15.0 * x[2] * x[2] * x[2] + 10.0 * x1 * x[2] * x[3] - x1 * x1 * x[4]) / std::pow(x1, 7);
}

}  // namespace

GeneralizedMarchenkoPastur::GeneralizedMarchenkoPastur(double ratio, std::vector<Atom> population)
    : ratio_(ratio), population_(std::move(population)) {
  if (!std::isfinite(ratio) || ratio <= 0.0) throw InvalidParams("ratio", "must be finite and > 0");
  if (population_.empty()) throw InvalidParams("population", "must not be empty");
  double total = 0.0;
  for (const Atom& a : population_) {
    if (!std::isfinite(a.position) || a.position < 0.0)
      throw InvalidParams("population", "eigenvalues must be finite and >= 0");
    if (!std::isfinite(a.mass) || a.mass <= 0.0)
      throw InvalidParams("population", "weights must be finite and > 0");
    total += a.mass;
  }
  if (std::abs(total - 1.0) > 1e-10) throw InvalidParams("population", "weights must sum to 1");
  std::vector<Atom> pop = population_;
  std::sort(pop.begin(), pop.end(), [](const Atom& x, const Atom& y) { return x.position < y.position; });
  for (const Atom& a : pop) {
    const double w = a.mass / total;
    if (a.position == 0.0) {
      w0_ += w;
    } else if (!t_.empty() && t_.back() == a.position) {
      w_.back() += w;
    } else {
      t_.push_back(a.position);
      w_.push_back(w);
    }
  }
  if (t_.empty()) throw InvalidParams("population", "needs a positive eigenvalue");
  const double c = ratio_;
  const double ceff = c * (1.0 - w0_);
  // Mass at 0: S = Sigma^{1/2} (X X^T / n) Sigma^{1/2} has rank min(rank Sigma, n), so the kernel
  // fraction is 1 - min(1 - w0, 1/c) = max(w0, 1 - 1/c).
  const double mass0 = std::max(w0_, 1.0 - 1.0 / c);
  if (mass0 > 0.0) atoms_.push_back(Atom{0.0, mass0});

  // Support edges: with v = -1/underline m, z = x(v) = v + c sum_k w_k t_k v / (v - t_k) and
  // x'(v) = 1 - h(v), h(v) = c sum_k w_k t_k^2 / (v - t_k)^2. x is increasing exactly outside the
  // support (Silverstein-Choi), so edges are x at the roots of h = 1. On (-inf, t_1) h increases
  // from 0 to inf (one root), on (t_K, inf) it decreases (one root), between poles it is convex
  // (zero or two roots, found around its minimum, the root of h').
  auto h = [&](double v) {
    double s = 0.0;
    for (std::size_t k = 0; k < t_.size(); ++k) s += w_[k] * t_[k] * t_[k] / ((v - t_[k]) * (v - t_[k]));
    return c * s;
  };
  auto hp = [&](double v) {
    double s = 0.0;
    for (std::size_t k = 0; k < t_.size(); ++k) s += w_[k] * t_[k] * t_[k] / std::pow(v - t_[k], 3);
    return -2.0 * c * s;
  };
  auto hm1 = [&](double v) { return h(v) - 1.0; };
  std::vector<double> crit;
  const double t1 = t_.front(), tK = t_.back();
  hard_edge_ = std::abs(ceff - 1.0) <= 1e-14;
  if (hard_edge_) {
    crit.push_back(0.0);  // h(0) = c (1 - w0) = 1
  } else {
    ScalarRootOptions o;
    o.hard_hi = t1 * (1.0 - 1e-13);
    crit.push_back(bracketed_root(hm1, t1 - std::max(t1, 1.0), o.hard_hi, o).x);
  }
  for (std::size_t k = 0; k + 1 < t_.size(); ++k) {
    const double gap = t_[k + 1] - t_[k];
    const double lo = t_[k] + 1e-12 * gap, hi = t_[k + 1] - 1e-12 * gap;
    ScalarRootOptions o;
    o.hard_lo = lo;
    o.hard_hi = hi;
    const double vmin = bracketed_root(hp, lo, hi, o).x;
    if (h(vmin) < 1.0) {
      crit.push_back(bracketed_root(hm1, lo, vmin, o).x);
      crit.push_back(bracketed_root(hm1, vmin, hi, o).x);
    }
  }
  {
    ScalarRootOptions o;
    o.hard_lo = tK * (1.0 + 1e-13);
    crit.push_back(bracketed_root(hm1, o.hard_lo, tK + std::max(tK, 1.0), o).x);
  }
  for (std::size_t i = 0; i + 1 < crit.size(); i += 2) {
    Edge lo{crit[i], xv(crit[i])}, hi{crit[i + 1], xv(crit[i + 1])};
    if (hard_edge_ && i == 0) lo.x = 0.0;
    edges_.push_back(lo);
    edges_.push_back(hi);
    support_.push_back(Interval{lo.x, hi.x});
  }
  cache_invariants();
}

double GeneralizedMarchenkoPastur::xv(double v) const {
  double s = 0.0;
  for (std::size_t k = 0; k < t_.size(); ++k) s += w_[k] * t_[k] / (v - t_[k]);
  return v * (1.0 + ratio_ * s);
}

std::vector<Interval> GeneralizedMarchenkoPastur::support() const { return support_; }
std::vector<Atom> GeneralizedMarchenkoPastur::atoms() const { return atoms_; }

double GeneralizedMarchenkoPastur::raw_moment(int k) const {
  detail::check_moment_order(k);
  // Free multiplicative convolution with the free Poisson law:
  // E x = E t, E x^2 = E t^2 + c (E t)^2, E x^3 = E t^3 + 3 c E t E t^2 + c^2 (E t)^3.
  double e1 = 0, e2 = 0, e3 = 0;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    e1 += w_[i] * t_[i];
    e2 += w_[i] * t_[i] * t_[i];
    e3 += w_[i] * t_[i] * t_[i] * t_[i];
  }
  const double c = ratio_;
  switch (k) {
    case 0: return 1.0;
    case 1: return e1;
    case 2: return e2 + c * e1 * e1;
    default: return e3 + 3.0 * c * e1 * e2 + c * c * e1 * e1 * e1;
  }
}

double GeneralizedMarchenkoPastur::lower_edge_exponent(std::size_t interval) const {
  return (hard_edge_ && interval == 0) ? -0.5 : 0.5;
}

// Near an edge e = x(v_e) (x'(v_e) = 0), write v = v_e + w. Exactly,
//   x(v_e + w) - x(v_e) = w (1 - h(v_e)) + w^2 K(w),  K(w) = c sum w_k t_k^2 / ((v_e - t_k)^2 (v_e - t_k + w)),
// and 1 - h(v_e) = 0 up to rounding, so we solve w^2 K(w) = offset without the cancellation of
// x(v) - x(v_e). With w = y sqrt|offset|: y^2 K(y s) = sign(offset), y ~ 1/sqrt(sign/K(0)).
// Inside the support (offset/K(0) < 0) the root is complex; we return the one with Im w > 0.
std::complex<double> GeneralizedMarchenkoPastur::edge_local_root(const Edge& e, double offset) const {
  const double c = ratio_;
  const double s = std::sqrt(std::abs(offset));
  const double sigma = offset >= 0.0 ? 1.0 : -1.0;
  auto K = [&](cd w, cd& dK) {
    cd k = 0.0, dk = 0.0;
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const double d = e.v - t_[i];
      const double a = w_[i] * t_[i] * t_[i] / (d * d);
      const cd q = 1.0 / (d + w);
      k += a * q;
      dk -= a * q * q;
    }
    dK = c * dk;
    return c * k;
  };
  cd dK0;
  const double K0 = K(0.0, dK0).real();
  cd y = std::sqrt(cd(sigma / K0, 0.0));
  if (y.imag() < 0.0) y = -y;
  auto newton = [&](double sc, cd& yy) {
    for (int it = 0; it < 60; ++it) {
      cd dK;
      const cd k = K(yy * sc, dK);
      const cd g = yy * yy * k - sigma;
      const cd gp = 2.0 * yy * k + yy * yy * sc * dK;
      const cd step = g / gp;
      yy -= step;
      if (!std::isfinite(yy.real()) || !std::isfinite(yy.imag())) return false;
      if (std::abs(step) <= 1e-15 * std::abs(yy)) return true;
    }
    return false;
  };
  // Continuation in s from the edge (s = 0, where y is exact) when a direct Newton fails or
  // lands on a real root.
  for (int pieces = 1; pieces <= 1024; pieces *= 4) {
    cd yy = y;
    bool ok = true;
    for (int j = 1; j <= pieces && ok; ++j) ok = newton(s * j / pieces, yy);
    if (ok && std::abs(yy.imag()) > 1e-10 * std::abs(yy)) {
      if (yy.imag() < 0.0) yy = std::conj(yy);
      return yy * s;
    }
  }
  throw NumericalError("GeneralizedMarchenkoPastur: density root not found at offset " +
                       std::to_string(offset));
}

double GeneralizedMarchenkoPastur::density_over_weight(double x, std::size_t interval) const {
  const Edge& L = edges_.at(2 * interval);
  const Edge& U = edges_.at(2 * interval + 1);
  const double a = L.x, b = U.x, c = ratio_;
  const bool lower_half = x <= 0.5 * (a + b);
  const Edge& e = lower_half ? L : U;
  const double offset = lower_half ? x - a : x - b;
  const double s = std::sqrt(std::abs(offset));
  // y = w / s; at the edge itself (s = 0) it is the exact limit.
  cd y;
  if (s == 0.0) {
    double k0 = 0.0;
    for (std::size_t i = 0; i < t_.size(); ++i) k0 += w_[i] * t_[i] * t_[i] / std::pow(e.v - t_[i], 3);
    y = cd(0.0, 1.0 / std::sqrt(std::abs(c * k0)));
  } else {
    y = edge_local_root(e, offset) / s;
  }
  const cd w = y * s;
  const cd v = e.v + w;
  // The population eigenvalue 0 (weight w0) is left out of A below: its term in psi is
  // -(w0/v)/D = -w0/z exactly (D = x(v)/v = z/v), real on the support (it is the atom at 0), so it
  // adds nothing to Im psi but rounding -- and at the hard edge (v -> 0) it is infinite.
  if (hard_edge_ && interval == 0 && lower_half) {
    // Hard edge at 0 (v_e = 0, D(0) = 1 - c(1 - w0) = 0): D(w) = w E(w), E = c sum w_k / (w - t_k),
    // so density sqrt(x) = Im(psi) s / pi = |Im(-A / (y E))| / pi, finite at x = 0.
    cd A = 0.0;
    cd E = 0.0;
    for (std::size_t i = 0; i < t_.size(); ++i) {
      A += w_[i] / (v - t_[i]);
      E += w_[i] / (v - t_[i]);
    }
    E *= c;
    return std::abs((-A / (y * E)).imag()) / (kPi * std::sqrt(b - x));
  }
  // m = psi(v) = -A/D, A = sum w_k/(v - t_k) (t > 0; see above for t = 0), D = 1 + c sum w_k t_k/(v - t_k).
  // Im A = -Im v alpha, Im D = -c Im v beta with alpha = sum w/|v-t|^2, beta = sum w t/|v-t|^2,
  // so Im psi = Im v (alpha Re D - c beta Re A) / |D|^2: proportional to Im w, no cancellation.
  double alpha = 0.0, beta = 0.0, reA = 0.0, reB = 0.0;
  auto add = [&](double t, double wt) {
    const cd d = v - t;
    const double n2 = std::norm(d);
    alpha += wt / n2;
    beta += wt * t / n2;
    reA += wt * d.real() / n2;
    reB += wt * t * d.real() / n2;
  };
  for (std::size_t i = 0; i < t_.size(); ++i) add(t_[i], w_[i]);
  const cd D(1.0 + c * reB, -c * w.imag() * beta);
  const double S = (alpha * D.real() - c * beta * reA) / std::norm(D);
  const double dens_over_sqrt = std::abs(y.imag() * S) / kPi;  // density / sqrt|x - e|
  const double other = lower_half ? b - x : x - a;
  // hard edge: weight x^{-1/2} (b - x)^{1/2}, and here dens_over_sqrt = density / sqrt(b - x)
  if (hard_edge_ && interval == 0) return dens_over_sqrt * std::sqrt(x);
  return dens_over_sqrt / std::sqrt(other);
}

double GeneralizedMarchenkoPastur::density(double x) const {
  for (std::size_t i = 0; i < support_.size(); ++i) {
    const Interval& I = support_[i];
    if (x > I.lo && x < I.hi)
      return density_over_weight(x, i) * std::pow(x - I.lo, lower_edge_exponent(i)) * std::sqrt(I.hi - x);
  }
  return 0.0;
}

double GeneralizedMarchenkoPastur::stieltjes_derivative(double z, int n) const {
  return real_derivative(z, n, false);
}
double GeneralizedMarchenkoPastur::continuous_stieltjes_derivative(double z, int n) const {
  return real_derivative(z, n, true);
}

double GeneralizedMarchenkoPastur::real_derivative(double z, int n, bool continuous_only) const {
  detail::check_derivative_order(n);
  const double lo = lower_edge();
  detail::check_below(z, lo);
  const double c = ratio_;
  const Edge& e = edges_.front();
  // Below the support z = x(v_e + w) with w < 0 on the increasing branch; solve w^2 K(w) = z - a
  // (the cancellation-free form of x(v_e + w) - x(v_e), see edge_local_root), monotone in w.
  auto Kfun = [&](double w) {
    double k = 0.0;
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const double d = e.v - t_[i];
      k += w_[i] * t_[i] * t_[i] / (d * d * (d + w));
    }
    return c * k;
  };
  const double off = z - e.x;  // < 0
  const double K0 = Kfun(0.0);
  ScalarRootOptions o;
  o.hard_hi = 0.0;
  const double guess = std::max(std::sqrt(std::abs(off / K0)), std::abs(off));
  const double w = bracketed_root([&](double ww) { return ww * ww * Kfun(ww) - off; }, -2.0 * guess, 0.0, o).x;
  const double v = e.v + w;
  // A^{(l)} = sum w (-1)^l l!/(v-t)^{l+1} (t = 0 included), B^{(l)} = sum w t (-1)^l l!/(v-t)^{l+1},
  // x^{(l)} = c sum w t^2 (-1)^l l!/(v-t)^{l+1} (l >= 2); x' = 1 - h(v) in the cancellation-free
  // form w c sum w t^2 (2(v_e - t) + w) / ((v_e - t)^2 (v_e - t + w)^2).
  // Continuous part only: m = -(1 - 1/c)/z - 1/(c v) (from sum w = 1 and D = z/v), and the atom
  // at 0 has mass max(w0, 1 - 1/c). If it is 1 - 1/c > w0 (c (1 - w0) > 1), m_cont = -1/(c v)
  // (the companion matrix has no kernel then, so -1/v carries no atom) with
  // d^l/dv^l = -(1/c) (-1)^l l! / v^{l+1}; otherwise it is w0 and m_cont = -A_+/D with the t = 0
  // term w0/v never added to A: that term is -w0/z, the atom, and near z = 0 (v ~ z/(1 - c(1 - w0)))
  // its derivatives w0 l!/|v|^{l+1} dwarf the continuous part, so adding and then subtracting it
  // cancelled catastrophically (relative error ~1e-3 at n = 4, z = -1e-4).
  const bool dual = continuous_only && (1.0 - 1.0 / c) > w0_;
  double A[5] = {}, Bd[5] = {}, X[5] = {};
  for (int l = 0; l <= n; ++l) {
    const double sg = (l % 2 ? -1.0 : 1.0) * detail::factorial(l);
    if (w0_ > 0.0 && !continuous_only) A[l] += w0_ * sg / std::pow(v, l + 1);
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const double q = sg / std::pow(v - t_[i], l + 1);
      A[l] += w_[i] * q;
      Bd[l] += w_[i] * t_[i] * q;
      X[l] += w_[i] * t_[i] * t_[i] * q;
    }
    X[l] *= c;
  }
  double x1 = 0.0;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    const double d = e.v - t_[i];
    x1 += w_[i] * t_[i] * t_[i] * (2.0 * d + w) / (d * d * (d + w) * (d + w));
  }
  X[1] = c * w * x1;
  // D = 1 + c B = x(v)/v = z/v, exact from the given z unless v is near 0 (z near 0).
  double D[5];
  D[0] = (std::abs(v) >= 0.5 * std::abs(e.v) && v != 0.0) ? z / v : 1.0 + c * Bd[0];
  for (int l = 1; l <= n; ++l) D[l] = c * Bd[l];
  // psi = -A/D: psi^{(n)} = (-A^{(n)} - sum_{i<n} C(n,i) psi^{(i)} D^{(n-i)}) / D.
  double psi[5] = {};
  for (int k = 0; k <= n && dual; ++k) psi[k] = -(k % 2 ? -1.0 : 1.0) * detail::factorial(k) / (c * std::pow(v, k + 1));
  for (int k = 0; k <= n && !dual; ++k) {
    double s = -A[k];
    for (int i = 0; i < k; ++i) s -= detail::binom(k, i) * psi[i] * D[k - i];
    psi[k] = s / D[0];
  }
  if (n == 0) return psi[0];
  double vd[5] = {v, 0, 0, 0, 0};
  inverse_derivatives(X, vd);
  return compose(n, psi, vd);
}

std::complex<double> GeneralizedMarchenkoPastur::stieltjes(std::complex<double> z) const {
  if (z.imag() < 0.0) return std::conj(stieltjes(std::conj(z)));
  if (z.imag() == 0.0) return stieltjes_derivative(z.real(), 0);
  const double c = ratio_;
  auto xfun = [&](cd v, cd& dx) {
    cd B = 0.0, H = 0.0;
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const cd q = 1.0 / (v - t_[i]);
      B += w_[i] * t_[i] * q;
      H += w_[i] * t_[i] * t_[i] * q * q;
    }
    dx = 1.0 - c * H;
    return v * (1.0 + c * B);
  };
  // Newton on x(v) = z with continuation in Im z from far above the axis, where v ~ z - c E t
  // (Im v > 0 is the branch with Im m > 0 since underline m = -1/v).
  const double scale = std::max({std::abs(z), support_.back().hi, 1.0});
  double eta = std::max(z.imag(), 10.0 * scale);
  double e1 = 0.0;
  for (std::size_t i = 0; i < t_.size(); ++i) e1 += w_[i] * t_[i];
  cd v = cd(z.real(), eta) - c * e1;
  while (true) {
    const cd target(z.real(), eta);
    bool ok = false;
    for (int it = 0; it < 100; ++it) {
      cd dx;
      const cd f = xfun(v, dx) - target;
      cd step = f / dx;
      // Keep Im v > 0: halve steps that would cross the real axis.
      while ((v - step).imag() <= 0.0 && std::abs(step) > 1e-300) step *= 0.5;
      v -= step;
      if (std::abs(step) <= 1e-15 * std::abs(v)) {
        ok = true;
        break;
      }
    }
    if (!ok) throw NumericalError("GeneralizedMarchenkoPastur::stieltjes: Newton failed");
    if (eta == z.imag()) break;
    eta = std::max(z.imag(), eta * 0.5);
  }
  cd A = (w0_ > 0.0) ? w0_ / v : cd(0.0), B = 0.0;
  for (std::size_t i = 0; i < t_.size(); ++i) {
    A += w_[i] / (v - t_[i]);
    B += w_[i] * t_[i] / (v - t_[i]);
  }
  return -A / (1.0 + c * B);
}

}  // namespace icl::numerics
