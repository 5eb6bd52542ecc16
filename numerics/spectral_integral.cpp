// Integrals against spectral measures by GSL QAWS (algebraic edge weights) plus atoms, and the
// resolvent moments R_{k,j}(z) = int x^k (x - z)^{-j} dmu by quadrature or from exact transforms.
#include "numerics/spectral_integral.hpp"

#include <cmath>
#include <mutex>
#include <numbers>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>

#include "numerics/error.hpp"
#include "numerics/detail/measure_checks.hpp"
#include "numerics/detail/quadrature_node_cache.hpp"

namespace icl::numerics {

const char* to_string(MomentMethod m) { return m == MomentMethod::Exact ? "exact" : "quadrature"; }

MomentMethod moment_method_from_string(const std::string& s) {
  if (s == "quadrature") return MomentMethod::Quadrature;
  if (s == "exact") return MomentMethod::Exact;
  throw InvalidParams("moments", "must be quadrature or exact (got '" + s + "')");
}


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

// Integrands are called as g(x, u) with u = x - a, the distance to the lower edge: on the graded
// pieces below, u is the integration variable and exact, while x - a recomputed from a GSL
// abscissa x would carry an absolute error eps |a| (relative eps |a| / u: 1e-8 on a piece of
// length 1e-8 |a|, which GSL then reports as "roundoff error").
//
// Graded scheme, for integrands sharply peaked at the lower edge (z or a pole of g just below
// it): in u, geometric pieces [B 4^{-i-1}, B 4^{-i}], i = 0..n-2, and [0, B 4^{-n+1}], B = b - a,
// so that each piece resolves the peak at its own scale. When the distance `resolve` from a to
// the nearest singularity of g is known, n is the smallest count whose innermost piece is no
// longer than that distance (so every piece sees its singularities at least one piece length
// away, and no piece is needlessly tiny); otherwise n = 20. The end pieces keep their algebraic
// singularity in a QAWS weight (u^alpha, resp. (B-u)^{1/2}), the inner ones are smooth and use
// QAG (21-point Gauss-Kronrod) with the weight multiplied in.
int graded_pieces(double a, double b, double resolve) {
  if (!(resolve > 0.0) || !std::isfinite(resolve)) return 20;
  const int n = static_cast<int>(std::ceil(std::log((b - a) / resolve) / std::log(4.0))) + 1;
  return std::clamp(n, 2, 200);
}

template <class G>
double qaws_graded(G& g, double a, double b, double alpha, const QuadratureOptions& o, double& abserr,
                   double resolve) {
  GslCache& cache = gsl_cache();
  const std::size_t limit = static_cast<std::size_t>(o.max_subintervals);
  const int pieces = graded_pieces(a, b, resolve);
  const double B = b - a;
  double total = 0.0;
  double hi = B;
  for (int i = 0; i < pieces; ++i) {
    const double lo = (i + 1 == pieces) ? 0.0 : B * std::pow(0.25, i + 1);
    double result = 0.0, err = 0.0;
    int status;
    if (i == 0) {
      auto f = [&](double u) { return g(a + u, u) * std::pow(u, alpha); };
      gsl_function F = make_gsl_function(f);
      status = gsl_integration_qaws(&F, lo, hi, cache.table(0.0, 0.5), o.abs_tolerance, o.rel_tolerance, limit,
                                    cache.workspace(limit), &result, &err);
    } else if (i + 1 == pieces) {
      auto f = [&](double u) { return g(a + u, u) * std::sqrt(B - u); };
      gsl_function F = make_gsl_function(f);
      status = gsl_integration_qaws(&F, lo, hi, cache.table(alpha, 0.0), o.abs_tolerance, o.rel_tolerance, limit,
                                    cache.workspace(limit), &result, &err);
    } else {
      auto f = [&](double u) { return g(a + u, u) * std::pow(u, alpha) * std::sqrt(B - u); };
      gsl_function F = make_gsl_function(f);
      status = gsl_integration_qag(&F, lo, hi, o.abs_tolerance, o.rel_tolerance, limit, GSL_INTEG_GAUSS21,
                                   cache.workspace(limit), &result, &err);
    }
    check_gsl_status(status, "gsl_integration_qaws (graded)");
    total += result;
    abserr += err;
    hi = lo;
  }
  return total;
}

// A known singularity closer to the edge than this fraction of the interval is a peak that an
// adaptive rule started on the whole interval can miss entirely (its first Clenshaw-Curtis /
// Gauss-Kronrod nodes do not see it, and it reports success with a wrong value: observed for
// MP with a ~ 1e-13..1e-33 and z in (0, a)); such integrals go straight to the graded pieces.
constexpr double kGradedFraction = 1e-3;

// \int_a^b (x-a)^alpha (b-x)^{1/2} g(x, x - a) dx by gsl_integration_qaws, with the graded
// scheme when GSL cannot reach the tolerance on the whole interval. `resolve`: see qaws_graded
// (0: unknown).
template <class G>
double qaws(G& g, double a, double b, double alpha, const QuadratureOptions& o, double& abserr,
            double resolve = 0.0) {
  ensure_gsl_error_handler_off();
  if (resolve > 0.0 && resolve < kGradedFraction * (b - a)) return qaws_graded(g, a, b, alpha, o, abserr, resolve);
  GslCache& cache = gsl_cache();
  auto gx = [&](double x) { return g(x, x - a); };
  gsl_function F = make_gsl_function(gx);
  double result = 0.0, err = 0.0;
  const std::size_t limit = static_cast<std::size_t>(o.max_subintervals);
  const int status = gsl_integration_qaws(&F, a, b, cache.table(alpha, 0.5), o.abs_tolerance, o.rel_tolerance,
                                          limit, cache.workspace(limit), &result, &err);
  if (status == GSL_EROUND || status == GSL_ESING || status == GSL_EDIVERGE) {
    // (a too-small workspace reads as GSL_EMAXITER and is reported, not retried)
    return qaws_graded(g, a, b, alpha, o, abserr, resolve);
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

void check_z(const SpectralMeasure& mu, double z) { detail::check_below(z, mu.lower_edge()); }

// ------------------------------------------------------------------ near-hard square-root edge
//
// Marchenko-Pastur with ratio c near 1 has the density sqrt((b-x)(x-a)) q / x on [a, b] with
// a = s(1 - sqrt c)^2 tiny but > 0 (q = 1/(2 pi c s) constant; in general q(x) = x g(x) smooth,
// see SpectralMeasure::density_pole_at_zero). Written with the square-root weight, g = q/x has a
// pole at 0, only a away from the edge a: for a ~ 1e-20 no polynomial rule and no adaptive
// bisection of [a, b] in double precision resolves it (GSL QAWS: "roundoff error"), while the
// limit c = 1 is harmless (hard edge: weight x^{-1/2}, g constant). The pole is removed exactly:
//   sqrt(x - a) / x = (x - a)^{-1/2} (1 - a/x),
// so with F(x) = x^k (x - z)^{-j} and H = F q,
//   \int_a^b F g (x-a)^{1/2} (b-x)^{1/2} dx = \int_a^b [H(x) - a H(x)/x] (x-a)^{-1/2} (b-x)^{1/2} dx.
// Adding and subtracting a H(0)/x,
//   H(x) - a H(x)/x = G(x) - a H(0)/x,   G(x) = H(x) - a (H(x) - H(0))/x,
// where G is analytic wherever H is (the divided difference (H(x) - H(0))/x has a removable
// singularity at 0): for z < 0, G is smooth on [0, b] at the scale |z|, independently of a. The
// remaining term is elementary,
//   J = \int_a^b (b-x)^{1/2} / (x (x-a)^{1/2}) dx = pi (sqrt(b/a) - 1)   (x = a + (b-a) sin^2 phi
//   and the standard \int_0^{pi/2} cos^2 phi / (a + (b-a) sin^2 phi) dphi),
// so that
//   \int F dmu_cont = \int_a^b G (x-a)^{-1/2} (b-x)^{1/2} dx - pi H(0) sqrt(a) (sqrt b - sqrt a).
// This is exact for every a >= 0 (at a = 0 it is the hard-edge formula, so the result is
// continuous through c = 1), and G is evaluated without cancellation as
//   G(x) = F(x) g(x) (x - a) + a H(0)/x      (both terms >= 0 for z < 0, k = 0; H(0) = 0 for k > 0).
// The subtracted term is O(sqrt(a/|z|)) relative to the result, so nothing cancels when a <= |z|,
// which is the condition for using the form (otherwise the poles of g and F are at least a from
// the edge and the original form with graded refinement down to that distance is fine). The form
// is also used only when a is small against the interval (below kNearHardFraction of b - a),
// where the original one degrades.
constexpr double kNearHardFraction = 1e-3;

bool near_hard_edge(const SpectralMeasure& mu, std::size_t i, const Interval& I, double z) {
  return mu.lower_edge_exponent(i) > 0.0 && mu.density_pole_at_zero(i) && z < 0.0 && I.lo >= 0.0 &&
         I.lo <= -z && I.lo <= kNearHardFraction * (I.hi - I.lo);
}

// pi sqrt(a) (sqrt b - sqrt a), without cancellation.
double near_hard_correction(double a, double b) {
  const double sa = std::sqrt(a), sb = std::sqrt(b);
  return std::numbers::pi * sa * (b - a) / (sb + sa);
}

// Distance from the lower edge to the nearest known singularity of x^k (x-z)^{-j} g(x): the pole
// at z and, when g has one, the pole at 0 (0 = unknown).
double singularity_distance(const SpectralMeasure& mu, std::size_t i, const Interval& I, double z) {
  double d = I.lo - z;
  if (mu.lower_edge_exponent(i) > 0.0 && mu.density_pole_at_zero(i) && I.lo > 0.0) d = std::min(d, I.lo);
  return d;
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

// One R_{k,j} over one support interval by GSL QAWS. With `memo_gen` != 0, g is memoized under
// that generation (distinct per interval and per resolvent_moments call).
double moment_quadrature_interval(const SpectralMeasure& mu, std::size_t i, const Interval& I, double z, int k,
                                  int j, const QuadratureOptions& o, std::uint64_t memo_gen) {
  DensityMemo& dm = density_memo();
  auto gfun = [&](double x) {
    if (memo_gen == 0) return mu.density_over_weight(x, i);
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    DensityMemo::Slot& s = dm.slots[(bits ^ (bits >> 29) ^ (bits >> 17)) % DensityMemo::kSize];
    if (s.gen == memo_gen && s.x == x) return s.g;
    const double gx = mu.density_over_weight(x, i);
    s = DensityMemo::Slot{x, gx, memo_gen};
    return gx;
  };
  double err = 0.0;
  const double a = I.lo, d = a - z;  // x - z = d + u, no cancellation for z just below a
  if (near_hard_edge(mu, i, I, z)) {
    const double H0 = (k == 0) ? mu.density_over_weight_times_x(0.0, i) / ipow(-z, j) : 0.0;
    auto G = [&](double x, double u) { return ipow(x, k) / ipow(d + u, j) * gfun(x) * u + a * H0 / x; };
    return qaws(G, a, I.hi, -0.5, o, err, d) - H0 * near_hard_correction(a, I.hi);
  }
  // x^k (x - z)^{-j} g(x), evaluated directly (no recurrence in k or j).
  auto f = [&](double x, double u) { return ipow(x, k) / ipow(d + u, j) * gfun(x); };
  return qaws(f, a, I.hi, mu.lower_edge_exponent(i), o, err, singularity_distance(mu, i, I, z));
}

using detail::binom;
using detail::factorial;

}  // namespace

// ------------------------------------------------------------------ shared nested rule, cached g

namespace detail {
using Cache = QuadratureNodeCache;

// sin and cos of the half angles pi k / (2 M) of the odd (level kFirstLevel: all) k < M = 2^l:
// the same for every measure and interval, so computed once per process and level.
struct HalfAngle {
  double sin, cos;
};
const std::vector<HalfAngle>& half_angles(int l) {
  static std::array<std::once_flag, Cache::kLevels> once;
  static std::array<std::vector<HalfAngle>, Cache::kLevels> table;
  const auto i = static_cast<std::size_t>(l - Cache::kFirstLevel);
  std::call_once(once[i], [l, i] {
    const int M = 1 << l;
    const int stride = (l == Cache::kFirstLevel) ? 1 : 2;
    for (int k = 1; k < M; k += stride) {
      const double half = 0.5 * std::numbers::pi * k / M;
      table[i].push_back({std::sin(half), std::cos(half)});
    }
  });
  return table[i];
}

struct QuadratureCacheAccess {
  static Cache::IntervalNodes& nodes(const SpectralMeasure& mu, std::size_t i, const Interval& I) {
    Cache& c = *mu.node_cache_;
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.intervals.size() <= i) c.intervals.resize(i + 1);
    if (!c.intervals[i]) {
      c.intervals[i] = std::make_unique<Cache::IntervalNodes>();
      c.intervals[i]->lo = I.lo;
      c.intervals[i]->hi = I.hi;
    }
    return *c.intervals[i];
  }
  // Makes levels kFirstLevel..L available (lazily, under the cache's mutex). Readers then use
  // levels[0 .. L - kFirstLevel] without locking: those vectors are never written again.
  static void ensure(const SpectralMeasure& mu, std::size_t i, Cache::IntervalNodes& n, int L) {
    const int need = L - Cache::kFirstLevel + 1;
    if (n.ready.load(std::memory_order_acquire) >= need) return;
    std::lock_guard<std::mutex> lock(mu.node_cache_->mutex);
    const double h = 0.5 * (n.hi - n.lo);
    for (int l = Cache::kFirstLevel + n.ready.load(std::memory_order_relaxed); l <= L; ++l) {
      const int M = 1 << l;
      const int stride = (l == Cache::kFirstLevel) ? 1 : 2;
      const std::vector<HalfAngle>& angles = half_angles(l);
      std::vector<QuadratureNode> level;
      level.reserve(angles.size());
      for (int k = 1; k < M; k += stride) {
        const HalfAngle& a = angles[static_cast<std::size_t>((k - 1) / stride)];
        const double sh = a.sin, ch = a.cos;
        QuadratureNode q;
        q.xmlo = 2.0 * h * ch * ch;
        q.x = (2 * k >= M) ? n.lo + q.xmlo : n.hi - 2.0 * h * sh * sh;
        q.sin2 = 4.0 * sh * sh * ch * ch;
        q.omc = 2.0 * sh * sh;
        q.g = mu.density_over_weight(q.x, i);
        level.push_back(q);
      }
      n.levels[static_cast<std::size_t>(l - Cache::kFirstLevel)] = std::move(level);
      n.ready.store(l - Cache::kFirstLevel + 1, std::memory_order_release);
    }
  }
};
}  // namespace detail

namespace {

// All 20 R_{k,j} on one support interval at once, by one nested rule whose nodes (and g there)
// come from the measure's cache, so that per z only the rational factors x^k (x - z)^{-j} are
// evaluated. x = m + h cos(theta) on [a, b] = [m - h, m + h]:
//  * square-root edges, weight sqrt((x-a)(b-x)) dx = h^2 sin^2(theta) dtheta: Gauss-Chebyshev
//    (2nd kind) with N = 2^L - 1 nodes theta_i = i pi / 2^L, weights pi/2^L sin^2(theta_i);
//  * hard lower edge, and the near-hard form above, weight (x-a)^{-1/2} (b-x)^{1/2} dx =
//    h (1 - cos theta) dtheta: the trapezoid rule in theta on the same nodes plus the end theta = pi
//    (x = a, integrand value 2 G(a), half weight; the end theta = 0 has weight 0).
// Both integrands are even, 2 pi-periodic and analytic in theta when the x-integrand is analytic
// near [a, b], so both rules converge geometrically (faster the farther the poles: z and, for MP,
// 0 or, in the near-hard form, only z). The levels are nested. Converged when every entry changes
// by at most rel_tolerance between consecutive levels (geometric convergence makes the finer
// level far more accurate than that difference). Returns false (caller falls back to GSL QAWS
// per entry) when 2^kLastLevel - 1 nodes do not suffice, e.g. for z very close to an edge.
bool shared_rule_moments(const SpectralMeasure& mu, std::size_t interval, const Interval& I, double z,
                         const QuadratureOptions& o, double out[4][5]) {
  using Cache = detail::QuadratureNodeCache;
  const double alpha = mu.lower_edge_exponent(interval);
  const bool near_hard = near_hard_edge(mu, interval, I, z);
  const bool sqrt_sqrt = alpha > 0.0 && !near_hard;
  if (!sqrt_sqrt && !near_hard && alpha != -0.5) return false;
  // Poles closer than this (relative to the interval) are out of reach of 2^kLastLevel nodes
  // (the rules need N sqrt(2 d / (b - a)) >~ 30): do not try, and do not risk a false convergence.
  const double dist = near_hard ? I.lo - z : singularity_distance(mu, interval, I, z);
  if (dist < 1e-6 * (I.hi - I.lo)) return false;
  Cache::IntervalNodes& nodes = detail::QuadratureCacheAccess::nodes(mu, interval, I);
  const double a = I.lo, b = I.hi, h = 0.5 * (b - a);
  const double pi = std::numbers::pi;

  // Endpoint x = a (trapezoid only) and the near-hard extras: T_j = H(0)/q0 for k = 0.
  double end[4][5] = {};
  double q0 = 0.0, corr = 0.0;
  double zpow[5];  // (-z)^{-j}
  if (!sqrt_sqrt) {
    if (near_hard) {
      q0 = mu.density_over_weight_times_x(0.0, interval);
      corr = near_hard_correction(a, b);
      for (int j = 0; j < 5; ++j) zpow[j] = 1.0 / ipow(-z, j);
      for (int j = 0; j < 5; ++j) end[0][j] = q0 * zpow[j];  // G(a) = H(0) (k = 0), 0 for k > 0
    } else {
      const double ga = mu.density_over_weight(a, interval);
      const double p = 1.0 / (a - z);
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 5; ++j) end[k][j] = ga * ipow(a, k) * ipow(p, j);
    }
  }

  double acc[4][5] = {}, prev[4][5] = {};
  double s1 = 0.0;  // near-hard: sum of (1 - cos theta) / x, times a H(0) below
  for (int L = Cache::kFirstLevel; L <= Cache::kLastLevel; ++L) {
    detail::QuadratureCacheAccess::ensure(mu, interval, nodes, L);
    for (const detail::QuadratureNode& q : nodes.levels[static_cast<std::size_t>(L - Cache::kFirstLevel)]) {
      double w;
      if (sqrt_sqrt) {
        w = q.sin2 * q.g;
      } else if (near_hard) {
        w = q.omc * q.g * q.xmlo;
        s1 += q.omc / q.x;
      } else {
        w = q.omc * q.g;
      }
      const double p = 1.0 / (q.x - z);
      const double p2 = p * p;
      const double pj[5] = {1.0, p, p2, p2 * p, p2 * p2};
      const double x2 = q.x * q.x;
      const double xk[4] = {w, w * q.x, w * x2, w * x2 * q.x};
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 5; ++j) acc[k][j] += xk[k] * pj[j];
    }
    const int M = 1 << L;
    const double step = pi / M;
    bool converged = L > Cache::kFirstLevel;
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 5; ++j) {
        double v;
        if (sqrt_sqrt) {
          v = h * h * step * acc[k][j];
        } else {
          double sum = acc[k][j] + end[k][j];
          if (near_hard && k == 0) sum += a * q0 * zpow[j] * s1;
          v = h * step * sum;
          if (near_hard && k == 0) v -= q0 * zpow[j] * corr;
        }
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

}  // namespace

Integral integrate(const SpectralMeasure& mu, const std::function<double(double)>& f,
                   const QuadratureOptions& options) {
  Integral out;
  const auto sup = mu.support();
  for (std::size_t i = 0; i < sup.size(); ++i) {
    auto g = [&](double x, double) { return f(x) * mu.density_over_weight(x, i); };
    // f is arbitrary, so the near-hard form (which needs f at 0) is not used; the graded fallback
    // refines down to the pole of g at 0 instead.
    const double resolve =
        (mu.lower_edge_exponent(i) > 0.0 && mu.density_pole_at_zero(i) && sup[i].lo > 0.0) ? sup[i].lo : 0.0;
    out.value += qaws(g, sup[i].lo, sup[i].hi, mu.lower_edge_exponent(i), options, out.abs_error, resolve);
  }
  for (const Atom& a : mu.atoms()) out.value += a.mass * f(a.position);
  return out;
}

double resolvent_moment_quadrature(const SpectralMeasure& mu, double z, int k, int j,
                                   const QuadratureOptions& options) {
  if (k < 0 || j < 0) throw InvalidParams("k, j", "must be >= 0");
  check_z(mu, z);
  const auto sup = mu.support();
  double value = 0.0;
  for (std::size_t i = 0; i < sup.size(); ++i)
    value += moment_quadrature_interval(mu, i, sup[i], z, k, j, options, 0);
  for (const Atom& a : mu.atoms()) value += a.mass * ipow(a.position, k) / ipow(a.position - z, j);
  return value;
}

namespace {
// Exact R_{k,j} for all k <= 3, j <= 4 (jmax <= 5 for a single entry). The continuous part uses
// x^k = sum_i C(k,i) z^{k-i} (x - z)^i, so R_{k,j} = sum_i C(k,i) z^{k-i} T_{j-i} with
// T_p = int (x-z)^{-p} = m_c^{(p-1)}/(p-1)! for p >= 1, and for p = -q <= 0 the polynomial moment
// int (x - z)^q = sum_l C(q,l) M_l (-z)^{q-l}. Atoms are added exactly: expanding them too would
// cancel catastrophically for z near an atom (e.g. the atom at 0 of MP with c > 1 and z ~ 0).
void exact_table(const SpectralMeasure& mu, double z, int kmax, int jmax, double out[4][6]) {
  const std::vector<Atom>& atoms = mu.atom_list();
  double T[6] = {};  // T[p] for p = 1..jmax
  double dm[5];      // the continuous part's Stieltjes derivatives 0..jmax-1, in one call
  mu.continuous_stieltjes_derivatives(z, jmax - 1, dm);
  for (int p = 1; p <= jmax; ++p) T[p] = dm[p - 1] / factorial(p - 1);
  // Powers and binomials as tables, each number computed as ipow() and binom() compute it.
  double zp[4], mzp[4];  // z^n, (-z)^n
  zp[0] = mzp[0] = 1.0;
  for (int n = 1; n < 4; ++n) {
    zp[n] = zp[n - 1] * z;
    mzp[n] = mzp[n - 1] * -z;
  }
  double C[4][4] = {};
  for (int n = 0; n < 4; ++n)
    for (int i = 0; i <= n; ++i) C[n][i] = binom(n, i);
  // int (x - z)^q dmu_cont = sum_l C(q,l) M_l (-z)^{q-l} for q = 0..kmax (p = -q <= 0).
  double P[4] = {};
  for (int q = 0; q <= kmax; ++q)
    for (int l = 0; l <= q; ++l) P[q] += C[q][l] * mu.continuous_raw_moment(l) * mzp[q - l];
  for (int k = 0; k <= kmax; ++k)
    for (int j = 0; j <= jmax; ++j) {
      double r = 0.0;
      for (int i = 0; i <= k; ++i) {
        const int p = j - i;
        r += C[k][i] * zp[k - i] * (p >= 1 ? T[p] : P[-p]);
      }
      out[k][j] = r;
    }
  // Atoms exactly: mass x^k / (x - z)^j.
  for (const Atom& a : atoms) {
    double xk[4], dj[6];
    xk[0] = dj[0] = 1.0;
    for (int n = 1; n < 4; ++n) xk[n] = xk[n - 1] * a.position;
    for (int n = 1; n < 6; ++n) dj[n] = dj[n - 1] * (a.position - z);
    for (int k = 0; k <= kmax; ++k)
      for (int j = 0; j <= jmax; ++j) out[k][j] += a.mass * xk[k] / dj[j];
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
  const std::vector<Atom>& atoms = mu.atom_list();
  DensityMemo& dm = density_memo();
  const std::uint64_t gen0 = dm.gen + 1;
  dm.gen += sup.size() + 1;  // generations gen0 .. gen0 + #intervals - 1 belong to this call
  // Per interval, one shared nested rule for all entries (cached g); otherwise (slow convergence)
  // GSL QAWS entry by entry.
  for (std::size_t i = 0; i < sup.size(); ++i) {
    double part[4][5];
    const bool fast = shared_rule_moments(mu, i, sup[i], z, options, part);
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 5; ++j)
        out.r[k][j] += fast ? part[k][j] : moment_quadrature_interval(mu, i, sup[i], z, k, j, options, gen0 + i);
  }
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      for (const Atom& a : atoms) out.r[k][j] += a.mass * ipow(a.position, k) / ipow(a.position - z, j);
  return out;
}

}  // namespace icl::numerics
