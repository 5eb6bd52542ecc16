// Integrals against spectral measures by GSL QAWS (algebraic edge weights) plus atoms, and the
// resolvent moments R_{k,j}(z) = int x^k (x - z)^{-j} dmu by quadrature or from exact transforms.
#include "numerics/spectral_integral.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>

#include "numerics/error.hpp"

namespace icl::numerics {

namespace {

// Per-thread GSL state: one workspace (grown on demand) and the QAWS tables, keyed by the
// exponents (alpha, beta) of (x-a)^alpha (b-x)^beta. Building them costs more than a smooth
// integral, so they are reused; thread_local keeps threads independent.
struct GslCache {
  gsl_integration_workspace* ws = nullptr;
  std::size_t ws_size = 0;
  struct Table {
    double alpha, beta;
    gsl_integration_qaws_table* t;
  };
  std::vector<Table> tables;
  GslCache() = default;
  GslCache(const GslCache&) = delete;
  GslCache& operator=(const GslCache&) = delete;
  ~GslCache() {
    if (ws) gsl_integration_workspace_free(ws);
    for (Table& t : tables) gsl_integration_qaws_table_free(t.t);
  }
  gsl_integration_workspace* workspace(std::size_t n) {
    if (ws_size < n) {
      if (ws) gsl_integration_workspace_free(ws);
      ws = gsl_integration_workspace_alloc(n);
      ws_size = ws ? n : 0;
      if (!ws) throw NumericalError("GSL workspace allocation failed");
    }
    return ws;
  }
  gsl_integration_qaws_table* table(double alpha, double beta) {
    for (Table& t : tables)
      if (t.alpha == alpha && t.beta == beta) return t.t;
    gsl_integration_qaws_table* t = gsl_integration_qaws_table_alloc(alpha, beta, 0, 0);
    if (!t) throw NumericalError("GSL qaws table allocation failed");
    tables.push_back(Table{alpha, beta, t});
    return t;
  }
};
GslCache& gsl_cache() {
  thread_local GslCache cache;
  return cache;
}

template <class G>
gsl_function make_gsl_function(G& g) {
  gsl_function F;
  F.function = [](double x, void* p) { return (*static_cast<G*>(p))(x); };
  F.params = &g;
  return F;
}

// Fallback for integrands sharply peaked at the lower edge (z just below it): geometric pieces
// [a + (b-a) 4^{-i-1}, a + (b-a) 4^{-i}], i = 0..19, so that each piece resolves the peak at its
// own scale. The end pieces keep their algebraic singularity in a QAWS weight ((x-a)^alpha, resp.
// (b-x)^{1/2}), the inner ones are smooth and use QAG (21-point Gauss-Kronrod) with the weight
// multiplied in.
template <class G>
double qaws_graded(G& g, double a, double b, double alpha, const QuadratureOptions& o, double& abserr) {
  GslCache& cache = gsl_cache();
  const std::size_t limit = static_cast<std::size_t>(o.max_subintervals);
  constexpr int kPieces = 20;
  double total = 0.0;
  double hi = b;
  for (int i = 0; i < kPieces; ++i) {
    const double lo = (i + 1 == kPieces) ? a : a + (b - a) * std::pow(0.25, i + 1);
    double result = 0.0, err = 0.0;
    int status;
    if (i == 0) {
      auto f = [&](double x) { return g(x) * std::pow(x - a, alpha); };
      gsl_function F = make_gsl_function(f);
      status = gsl_integration_qaws(&F, lo, hi, cache.table(0.0, 0.5), o.abs_tolerance, o.rel_tolerance, limit,
                                    cache.workspace(limit), &result, &err);
    } else if (i + 1 == kPieces) {
      auto f = [&](double x) { return g(x) * std::sqrt(b - x); };
      gsl_function F = make_gsl_function(f);
      status = gsl_integration_qaws(&F, lo, hi, cache.table(alpha, 0.0), o.abs_tolerance, o.rel_tolerance, limit,
                                    cache.workspace(limit), &result, &err);
    } else {
      auto f = [&](double x) { return g(x) * std::pow(x - a, alpha) * std::sqrt(b - x); };
      gsl_function F = make_gsl_function(f);
      status = gsl_integration_qag(&F, lo, hi, o.abs_tolerance, o.rel_tolerance, limit, GSL_INTEG_GAUSS21,
                                   cache.workspace(limit), &result, &err);
    }
    check_gsl_status(status, "gsl_integration_qaws (graded fallback)");
    total += result;
    abserr += err;
    hi = lo;
  }
  return total;
}

// \int_a^b (x-a)^alpha (b-x)^{1/2} g(x) dx by gsl_integration_qaws, with the graded fallback
// when GSL cannot reach the tolerance on the whole interval.
template <class G>
double qaws(G& g, double a, double b, double alpha, const QuadratureOptions& o, double& abserr) {
  ensure_gsl_error_handler_off();
  GslCache& cache = gsl_cache();
  gsl_function F = make_gsl_function(g);
  double result = 0.0, err = 0.0;
  const std::size_t limit = static_cast<std::size_t>(o.max_subintervals);
  const int status = gsl_integration_qaws(&F, a, b, cache.table(alpha, 0.5), o.abs_tolerance, o.rel_tolerance,
                                          limit, cache.workspace(limit), &result, &err);
  if (status == GSL_EROUND || status == GSL_ESING || status == GSL_EDIVERGE) {
    // (a too-small workspace reads as GSL_EMAXITER and is reported, not retried)
    return qaws_graded(g, a, b, alpha, o, abserr);
  }
  check_gsl_status(status, "gsl_integration_qaws");
  abserr += err;
  return result;
}

double ipow(double x, int k) {
  double r = 1.0;
  for (int i = 0; i < k; ++i) r *= x;
  return r;
}

void check_z(const SpectralMeasure& mu, double z) {
  const double lo = mu.lower_edge();
  if (!std::isfinite(z) || !(z < lo))
    throw InvalidParams("z", "must be below the lowest point of the measure (" + std::to_string(lo) + ")");
}

// Memo of g(x) = density_over_weight(x, i) within one resolvent_moments call: the 20 integrands
// differ only in the rational factor and QAWS evaluates them at largely the same nodes, while g
// may be expensive (generalized MP solves an equation per point). Direct-mapped, per thread,
// invalidated by a generation counter instead of clearing.
struct DensityMemo {
  static constexpr std::size_t kSize = 4096;
  struct Slot {
    double x;
    double g;
    std::uint64_t gen;
  };
  std::vector<Slot> slots = std::vector<Slot>(kSize, Slot{0.0, 0.0, 0});
  std::uint64_t gen = 0;
};
DensityMemo& density_memo() {
  thread_local DensityMemo memo;
  return memo;
}

double moment_quadrature_impl(const SpectralMeasure& mu, const std::vector<Interval>& sup,
                              const std::vector<Atom>& atoms, double z, int k, int j,
                              const QuadratureOptions& o, bool memo) {
  double value = 0.0, err = 0.0;
  for (std::size_t i = 0; i < sup.size(); ++i) {
    const double alpha = mu.lower_edge_exponent(i);
    DensityMemo& dm = density_memo();
    if (memo) ++dm.gen;  // intervals must not share entries
    const std::uint64_t gen = dm.gen;
    auto g = [&](double x) {
      double gx;
      if (memo) {
        std::uint64_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        DensityMemo::Slot& s = dm.slots[(bits ^ (bits >> 29) ^ (bits >> 17)) % DensityMemo::kSize];
        if (s.gen == gen && s.x == x) {
          gx = s.g;
        } else {
          gx = mu.density_over_weight(x, i);
          s = DensityMemo::Slot{x, gx, gen};
        }
      } else {
        gx = mu.density_over_weight(x, i);
      }
      // x^k (x - z)^{-j} g(x), evaluated directly (no recurrence in k or j).
      return ipow(x, k) / ipow(x - z, j) * gx;
    };
    value += qaws(g, sup[i].lo, sup[i].hi, alpha, o, err);
  }
  for (const Atom& a : atoms) value += a.mass * ipow(a.position, k) / ipow(a.position - z, j);
  return value;
}

// All 20 R_{k,j} on one square-root interval at once. With x = c + h cos(theta) the weight
// sqrt((x-a)(b-x)) dx becomes h^2 sin^2(theta) dtheta, and the Gauss-Chebyshev (second kind)
// rule with N = 2^L - 1 nodes theta_i = i pi / 2^L, weights pi/2^L sin^2(theta_i), is exact for
// polynomials of degree 2N - 1 and converges geometrically for integrands analytic near [a, b]
// (ours: x^k (x-z)^{-j} g(x), poles at z and, for MP, at 0). The levels are nested, so each
// refinement only evaluates the new (odd) nodes and reuses g. Converged when every entry changes
// by at most rel_tolerance between consecutive levels (geometric convergence makes the finer
// level far more accurate than that difference). Returns false (caller falls back to GSL QAWS
// per entry) when 1023 nodes do not suffice, e.g. for z or a pole very close to an edge.
bool chebyshev_moments(const SpectralMeasure& mu, std::size_t interval, const Interval& I, double z,
                       const QuadratureOptions& o, double out[4][5]) {
  constexpr int kFirst = 4, kLast = 10;
  const double c = 0.5 * (I.lo + I.hi), h = 0.5 * (I.hi - I.lo);
  const double pi = 3.14159265358979323846;
  double acc[4][5] = {}, prev[4][5] = {};
  for (int L = kFirst; L <= kLast; ++L) {
    const int M = 1 << L;
    const int stride = (L == kFirst) ? 1 : 2;
    for (int i = 1; i < M; i += stride) {
      const double th = pi * i / M;
      const double sn = std::sin(th);
      const double x = c + h * std::cos(th);
      const double wg = sn * sn * mu.density_over_weight(x, interval);
      const double p = 1.0 / (x - z);
      double xk = wg;
      for (int k = 0; k < 4; ++k) {
        double t = xk;
        for (int j = 0; j < 5; ++j) {
          acc[k][j] += t;
          t *= p;
        }
        xk *= x;
      }
    }
    const double scale = h * h * pi / M;
    bool converged = L > kFirst;
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 5; ++j) {
        const double v = acc[k][j] * scale;
        if (converged && !(std::abs(v - prev[k][j]) <= o.rel_tolerance * std::abs(v) + o.abs_tolerance))
          converged = false;
        prev[k][j] = v;
      }
    if (converged) {
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 5; ++j) out[k][j] = prev[k][j];
      return true;
    }
  }
  return false;
}

// One R_{k,j} over one support interval by GSL QAWS (memoized g within a resolvent_moments call).
double moment_quadrature_interval(const SpectralMeasure& mu, std::size_t i, const Interval& I, double z, int k,
                                  int j, const QuadratureOptions& o) {
  DensityMemo& dm = density_memo();
  const std::uint64_t gen = dm.gen + 1 + i;  // distinct per interval and per call (see below)
  auto g = [&](double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    DensityMemo::Slot& s = dm.slots[(bits ^ (bits >> 29) ^ (bits >> 17)) % DensityMemo::kSize];
    double gx;
    if (s.gen == gen && s.x == x) {
      gx = s.g;
    } else {
      gx = mu.density_over_weight(x, i);
      s = DensityMemo::Slot{x, gx, gen};
    }
    return ipow(x, k) / ipow(x - z, j) * gx;
  };
  double err = 0.0;
  return qaws(g, I.lo, I.hi, mu.lower_edge_exponent(i), o, err);
}

double factorial(int n) {
  double r = 1.0;
  for (int i = 2; i <= n; ++i) r *= i;
  return r;
}
double binom(int n, int k) {
  double r = 1.0;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

}  // namespace

Integral integrate(const SpectralMeasure& mu, const std::function<double(double)>& f,
                   const QuadratureOptions& options) {
  Integral out;
  const auto sup = mu.support();
  for (std::size_t i = 0; i < sup.size(); ++i) {
    auto g = [&](double x) { return f(x) * mu.density_over_weight(x, i); };
    out.value += qaws(g, sup[i].lo, sup[i].hi, mu.lower_edge_exponent(i), options, out.abs_error);
  }
  for (const Atom& a : mu.atoms()) out.value += a.mass * f(a.position);
  return out;
}

double resolvent_moment_quadrature(const SpectralMeasure& mu, double z, int k, int j,
                                   const QuadratureOptions& options) {
  if (k < 0 || j < 0) throw InvalidParams("k, j", "must be >= 0");
  check_z(mu, z);
  return moment_quadrature_impl(mu, mu.support(), mu.atoms(), z, k, j, options, false);
}

namespace {
// Exact R_{k,j} for all k <= 3, j <= 4 (jmax <= 5 for a single entry). The continuous part uses
// x^k = sum_i C(k,i) z^{k-i} (x - z)^i, so R_{k,j} = sum_i C(k,i) z^{k-i} T_{j-i} with
// T_p = int (x-z)^{-p} = m_c^{(p-1)}/(p-1)! for p >= 1, and for p = -q <= 0 the polynomial moment
// int (x - z)^q = sum_l C(q,l) M_l (-z)^{q-l}. Atoms are added exactly: expanding them too would
// cancel catastrophically for z near an atom (e.g. the atom at 0 of MP with c > 1 and z ~ 0).
void exact_table(const SpectralMeasure& mu, double z, int kmax, int jmax, double out[4][6]) {
  const auto atoms = mu.atoms();
  double T[6] = {};  // T[p] for p = 1..jmax
  for (int p = 1; p <= jmax; ++p) T[p] = mu.continuous_stieltjes_derivative(z, p - 1) / factorial(p - 1);
  double M[4];
  for (int l = 0; l <= kmax; ++l) {
    M[l] = mu.raw_moment(l);
    for (const Atom& a : atoms) M[l] -= a.mass * ipow(a.position, l);
  }
  for (int k = 0; k <= kmax; ++k)
    for (int j = 0; j <= jmax; ++j) {
      double r = 0.0;
      for (int i = 0; i <= k; ++i) {
        const int p = j - i;
        double Tp = 0.0;
        if (p >= 1) {
          Tp = T[p];
        } else {
          for (int l = 0; l <= -p; ++l) Tp += binom(-p, l) * M[l] * ipow(-z, -p - l);
        }
        r += binom(k, i) * ipow(z, k - i) * Tp;
      }
      for (const Atom& a : atoms) r += a.mass * ipow(a.position, k) / ipow(a.position - z, j);
      out[k][j] = r;
    }
}
}  // namespace

double resolvent_moment_exact(const SpectralMeasure& mu, double z, int k, int j) {
  if (k < 0 || k > 3 || j < 0 || j > 5) throw InvalidParams("k, j", "need 0 <= k <= 3, 0 <= j <= 5");
  check_z(mu, z);
  double t[4][6];
  exact_table(mu, z, k, std::max(j, 1), t);
  return t[k][j];
}

ResolventMoments resolvent_moments(const SpectralMeasure& mu, double z, MomentMethod method,
                                   const QuadratureOptions& options) {
  ResolventMoments out;
  out.z = z;
  check_z(mu, z);
  if (method == MomentMethod::Exact) {
    double t[4][6];
    exact_table(mu, z, 3, 4, t);
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 5; ++j) out.r[k][j] = t[k][j];
    return out;
  }
  const auto sup = mu.support();
  const auto atoms = mu.atoms();
  density_memo().gen += sup.size() + 1;  // new memo generation for this call
  // Fast path: per square-root interval, one shared nested Gauss-Chebyshev rule for all entries;
  // otherwise (hard edge, slow convergence) GSL QAWS entry by entry.
  for (std::size_t i = 0; i < sup.size(); ++i) {
    double part[4][5];
    const bool fast = mu.lower_edge_exponent(i) > 0.0 && chebyshev_moments(mu, i, sup[i], z, options, part);
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 5; ++j) {
        if (fast) {
          out.r[k][j] += part[k][j];
        } else {
          out.r[k][j] += moment_quadrature_interval(mu, i, sup[i], z, k, j, options);
        }
      }
  }
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      for (const Atom& a : atoms) out.r[k][j] += a.mass * ipow(a.position, k) / ipow(a.position - z, j);
  return out;
}

}  // namespace icl::numerics
