// The test-time iteration's theory (theory/cot.hpp, docs/multistep.md §2-§5): the generating
// function's diagonal by a row-by-row solve in extended precision, and the closed forms.
#include "theory/cot.hpp"

#include <algorithm>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mpfr.h>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/memory.hpp"
#include "theory/mpfr_array.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::kNaN;

using detail::MpArray;

constexpr mpfr_rnd_t kRound = detail::kMpRound;
constexpr int kFirstBits = 128;

struct SeriesValues {
  std::vector<double> error;          // E_0..E_T
  std::vector<double> tau_infinity;   // the tau -> infinity closed form, per step
  std::vector<double> tau_infinity_finite_dim;  // the same at CotOptions::finite_dim (§7.3)
  // The cancellation, in bits: the binary exponent of the largest number summed minus that of
  // the smallest result (the precision below which the results are noise; §3).
  long spread_bits = 0;
};

// Tracks the largest exponent among the numbers summed and the smallest among the results.
struct ExponentRange {
  long largest = std::numeric_limits<long>::min(), smallest = std::numeric_limits<long>::max();
  void summand(mpfr_srcptr x) {
    if (mpfr_regular_p(x)) largest = std::max(largest, static_cast<long>(mpfr_get_exp(x)));
  }
  void result(mpfr_srcptr x) {
    if (mpfr_regular_p(x)) smallest = std::min(smallest, static_cast<long>(mpfr_get_exp(x)));
  }
  long spread() const { return largest < smallest ? 0 : largest - smallest; }
};

// E_t = [x^t y^t] B(x, y), B = alpha p(x) p(y) / Den(r(x), r(y)) (docs/multistep.md §2-§3).
// Den = alpha - P r_x r_y - beta r_x r_y (r_x + r_y) has constant term alpha and every other
// monomial contains both x and y (r(0) = 0), so the coefficient (m, n) of Den * B = alpha p p
// gives b_{m,n} from rows m' < m:
//   b_{m,n} = p_m p_n + sum_{i=1..m} [f_i U_{m-i,n} + g_i V_{m-i,n}],
//   f_i = (P r_i + beta (r^2)_i)/alpha, g_i = beta r_i/alpha,
//   U_{k,n} = sum_j r_j b_{k,n-j}, V_{k,n} = sum_j (r^2)_j b_{k,n-j} (convolutions of row k):
// O(T^3) operations and 3 (T+1)^2 numbers.
std::vector<double> series_diagonal(const CotParams& p, int T, mpfr_prec_t bits,
                                    ExponentRange& range) {
  const std::size_t n1 = static_cast<std::size_t>(T) + 1;
  MpArray k(8, bits);  // alpha, a1, a2, beta, P, sigma^2, scratch, scratch
  mpfr_ptr alpha = k[0], a1 = k[1], a2 = k[2], beta = k[3], big_p = k[4], s2 = k[5], tmp = k[6],
           acc = k[7];
  mpfr_set_d(alpha, p.alpha, kRound);
  mpfr_set_d(s2, p.sigma, kRound);
  mpfr_sqr(s2, s2, kRound);
  mpfr_add_ui(a1, alpha, 1, kRound);
  mpfr_add(a1, a1, s2, kRound);          // a1 = alpha + 1 + sigma^2
  mpfr_add_ui(a2, s2, 2, kRound);        // a2 = 2 + sigma^2
  mpfr_set_d(tmp, p.tau, kRound);
  mpfr_sub_ui(tmp, tmp, 1, kRound);
  mpfr_mul(tmp, tmp, alpha, kRound);
  mpfr_add_ui(beta, s2, 1, kRound);
  mpfr_div(beta, beta, tmp, kRound);     // beta = (1 + sigma^2)/(alpha (tau - 1))
  mpfr_add_ui(tmp, alpha, 1, kRound);
  mpfr_mul(big_p, beta, tmp, kRound);
  mpfr_add_ui(big_p, big_p, 1, kRound);  // P = 1 + beta (alpha + 1)
  // h(x) = sum h_n x^n, the root with h(0) = 1 of x h^2 + (a1 - a2 x) h - a1 (1 - x) = 0.
  MpArray h(n1, bits), r(n1, bits), r2(n1, bits), pp(n1, bits), f(n1, bits), g(n1, bits);
  mpfr_set_ui(h[0], 1, kRound);
  for (std::size_t n = 1; n < n1; ++n) {
    mpfr_mul(acc, a2, h[n - 1], kRound);
    for (std::size_t j = 0; j < n; ++j) {
      mpfr_mul(tmp, h[j], h[n - 1 - j], kRound);
      mpfr_sub(acc, acc, tmp, kRound);
    }
    if (n == 1) mpfr_sub(acc, acc, a1, kRound);
    mpfr_div(h[n], acc, a1, kRound);
  }
  for (std::size_t n = 1; n < n1; ++n) mpfr_set(r[n], h[n], kRound);  // r = h - 1
  mpfr_set_zero(acc, 1);
  for (std::size_t n = 0; n < n1; ++n) {
    for (std::size_t j = 1; j < n; ++j) mpfr_fma(r2[n], r[j], r[n - j], r2[n], kRound);
    mpfr_add(acc, acc, h[n], kRound);
    mpfr_set(pp[n], acc, kRound);  // p(x) = h(x)/(1 - x)
    mpfr_mul(f[n], big_p, r[n], kRound);
    mpfr_fma(f[n], beta, r2[n], f[n], kRound);
    mpfr_div(f[n], f[n], alpha, kRound);
    mpfr_mul(g[n], beta, r[n], kRound);
    mpfr_div(g[n], g[n], alpha, kRound);
  }
  // B is symmetric (b_{m,n} = b_{n,m}): row m is solved for n >= m only, its entries n < m are
  // those of the earlier rows; and U_{m,n}, V_{m,n} are needed only for n > m (a later row m'
  // reads them at n >= m' > m). About T^3 fused multiply-adds instead of 2 T^3.
  MpArray b(n1 * n1, bits), u(n1 * n1, bits), v(n1 * n1, bits);
  std::vector<double> diagonal(n1);
  for (std::size_t m = 0; m < n1; ++m) {
    mpfr_ptr row = b[m * n1];
    for (std::size_t n = 0; n < m; ++n) mpfr_set(row + n, b[n * n1 + m], kRound);
    for (std::size_t n = m; n < n1; ++n) {
      mpfr_mul(acc, pp[m], pp[n], kRound);
      for (std::size_t i = 1; i <= m; ++i) {
        mpfr_fma(acc, f[i], u[(m - i) * n1 + n], acc, kRound);
        mpfr_fma(acc, g[i], v[(m - i) * n1 + n], acc, kRound);
      }
      mpfr_set(row + n, acc, kRound);
      range.summand(acc);
    }
    range.result(row + m);
    diagonal[m] = mpfr_get_d(row + m, kRound);
    for (std::size_t n = m + 1; n < n1; ++n) {
      mpfr_ptr su = u[m * n1 + n], sv = v[m * n1 + n];
      for (std::size_t j = 1; j <= n; ++j) {
        mpfr_fma(su, r[j], row + (n - j), su, kRound);
        mpfr_fma(sv, r2[j], row + (n - j), sv, kRound);
      }
    }
  }
  return diagonal;
}

// tau -> infinity: A = I/c with E b b^T = c I, and E_t = (1/D) E tr (I - S/c)^{2t}
// = sum_k C(2t, k) (-1/c)^k m_k, m_k = (1/D) E tr S^k (docs/multistep.md §4.1, §7.3). The moments
// come from the loop equation of the real Wishart matrix S = Z Z^T / L (Stein's lemma):
//   m_{k+1} = (1 + k/L) m_k + (D/L) sum_{a=0..k-1} m_{a+1} m_{k-1-a}  (+ O(1/D^2)),
// exact for k <= 1 and exact to O(1/D) beyond; dim = 0 is D -> infinity (the Marchenko-Pastur
// moments, ratio 1/alpha, atom included), where c = 1 + (1 + sigma^2)/alpha, else
// L = round(alpha D) and c = m_2 + sigma^2 D/L. An alternating sum: computed at the series'
// precision.
std::vector<double> tau_infinity_closed_form(const CotParams& p, int T, mpfr_prec_t bits,
                                            ExponentRange& range, int dim) {
  const int kmax = 2 * T;
  MpArray k(8, bits);
  mpfr_ptr ratio = k[0], inv_l = k[1], minus_inv_c = k[2], sum = k[3], binom = k[4], cpow = k[5],
           term = k[6], s2 = k[7];
  if (dim == 0) {
    mpfr_set_d(ratio, p.alpha, kRound);
    mpfr_ui_div(ratio, 1, ratio, kRound);  // D/L -> 1/alpha
    mpfr_set_zero(inv_l, 1);               // 1/L -> 0
  } else {
    const double l = std::max(1.0, std::round(p.alpha * dim));
    mpfr_set_d(inv_l, l, kRound);
    mpfr_ui_div(inv_l, 1, inv_l, kRound);
    mpfr_mul_ui(ratio, inv_l, static_cast<unsigned long>(dim), kRound);
  }
  MpArray moments(static_cast<std::size_t>(std::max(kmax, 2)) + 1, bits);
  mpfr_set_ui(moments[0], 1, kRound);
  for (int kk = 0; kk < std::max(kmax, 2); ++kk) {
    mpfr_set_zero(sum, 1);
    for (int a = 0; a < kk; ++a)
      mpfr_fma(sum, moments[static_cast<std::size_t>(a + 1)],
               moments[static_cast<std::size_t>(kk - 1 - a)], sum, kRound);
    mpfr_mul(sum, sum, ratio, kRound);
    mpfr_mul_ui(term, inv_l, static_cast<unsigned long>(kk), kRound);
    mpfr_add_ui(term, term, 1, kRound);
    mpfr_fma(moments[static_cast<std::size_t>(kk + 1)], term,
             moments[static_cast<std::size_t>(kk)], sum, kRound);
  }
  mpfr_set_d(s2, p.sigma, kRound);
  mpfr_sqr(s2, s2, kRound);
  if (dim == 0) {
    mpfr_add_ui(minus_inv_c, s2, 1, kRound);
    mpfr_mul(minus_inv_c, minus_inv_c, ratio, kRound);
    mpfr_add_ui(minus_inv_c, minus_inv_c, 1, kRound);  // c = 1 + (1 + sigma^2)/alpha
  } else {
    mpfr_mul(minus_inv_c, s2, ratio, kRound);
    mpfr_add(minus_inv_c, minus_inv_c, moments[2], kRound);  // c = m_2 + sigma^2 D/L
  }
  mpfr_si_div(minus_inv_c, -1, minus_inv_c, kRound);
  std::vector<double> out(static_cast<std::size_t>(T) + 1);
  for (int t = 0; t <= T; ++t) {
    mpfr_set_zero(sum, 1);
    mpfr_set_ui(binom, 1, kRound);  // C(2t, k)
    mpfr_set_ui(cpow, 1, kRound);   // (-1/c)^k
    for (int kk = 0; kk <= 2 * t; ++kk) {
      mpfr_mul(term, binom, cpow, kRound);
      mpfr_mul(term, term, moments[static_cast<std::size_t>(kk)], kRound);
      range.summand(term);
      mpfr_add(sum, sum, term, kRound);
      mpfr_mul_ui(binom, binom, static_cast<unsigned long>(2 * t - kk), kRound);
      mpfr_div_ui(binom, binom, static_cast<unsigned long>(kk + 1), kRound);
      mpfr_mul(cpow, cpow, minus_inv_c, kRound);
    }
    range.result(sum);
    out[static_cast<std::size_t>(t)] = mpfr_get_d(sum, kRound);
  }
  return out;
}

SeriesValues series_at_bits(int bits, const CotParams& p, int T, int dim) {
  ExponentRange range;
  SeriesValues v;
  v.error = series_diagonal(p, T, bits, range);
  v.tau_infinity = tau_infinity_closed_form(p, T, bits, range, 0);
  if (dim > 0) v.tau_infinity_finite_dim = tau_infinity_closed_form(p, T, bits, range, dim);
  v.spread_bits = range.spread();
  return v;
}

// The largest relative difference between two evaluations (inf when one is not finite and the
// other differs).
double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    const double d = std::abs(a[i] - b[i]) / std::max(std::abs(a[i]), std::abs(b[i]));
    worst = std::max(worst, std::isfinite(d) ? d : std::numeric_limits<double>::infinity());
  }
  return worst;
}

// The bytes of the series at `bits`: 3 (T+1)^2 MPFR numbers (the rows b and their convolutions
// U, V).
double series_bytes(int T, int bits) {
  const double n1 = T + 1.0;
  return 3.0 * n1 * n1 * (bits / 8.0 + sizeof(__mpfr_struct) + 16.0);
}

// h(x) in closed form (docs/multistep.md §2): the root with h(0) = 1; the rationalized form
// near x = 0, the direct one elsewhere (each free of cancellation where it is used).
double h_closed(double x, double a1, double a2) {
  const double b = a1 - a2 * x;
  const double root = std::sqrt(b * b + 4 * a1 * x * (1 - x));
  if (std::abs(x) < 0.5) return 2 * a1 * (1 - x) / (b + root);
  return (root - b) / (2 * x);
}

struct IterationCoefficients {
  double alpha, a1, a2, beta, big_p;
};
IterationCoefficients coefficients(const CotParams& p) {
  const double s2 = p.sigma * p.sigma;
  const double beta = (1 + s2) / (p.alpha * (p.tau - 1));
  return {p.alpha, p.alpha + 1 + s2, 2 + s2, beta, 1 + beta * (p.alpha + 1)};
}

// The denominator on the diagonal, Den(r(x), r(x)) = alpha - P r^2 - 2 beta r^3.
double diagonal_denominator(double x, const IterationCoefficients& k) {
  const double r = h_closed(x, k.a1, k.a2) - 1;
  return k.alpha - k.big_p * r * r - 2 * k.beta * r * r * r;
}

// The root of the diagonal denominator in (-1, 1) nearest to 0 (NaN when there is none): a
// scan of 4000 points, then TOMS 748 on the first bracket from 0 outwards on each side.
double dominant_root(const CotParams& p) {
  const IterationCoefficients k = coefficients(p);
  constexpr int kScan = 2000;
  double best = kNaN;
  for (int side : {-1, 1}) {
    double x_prev = 0, f_prev = k.alpha;  // Den(0) = alpha > 0
    for (int i = 1; i <= kScan; ++i) {
      const double x = side * (1 - std::ldexp(1.0, -40)) * i / kScan;
      const double f = diagonal_denominator(x, k);
      if (!(f > 0)) {
        auto fn = [&](double y) { return diagonal_denominator(y, k); };
        boost::uintmax_t iters = 200;
        const auto [lo, hi] = boost::math::tools::toms748_solve(
            fn, std::min(x_prev, x), std::max(x_prev, x), side < 0 ? f : f_prev,
            side < 0 ? f_prev : f, boost::math::tools::eps_tolerance<double>(50), iters);
        const double root = 0.5 * (lo + hi);
        if (std::isnan(best) || std::abs(root) < std::abs(best)) best = root;
        break;
      }
      x_prev = x;
      f_prev = f;
    }
  }
  return best;
}

}  // namespace

const char* to_string(CotRegime r) {
  switch (r) {
    case CotRegime::Convergent: return "convergent";
    case CotRegime::Oscillatory: return "oscillatory";
    case CotRegime::Monotone: return "monotone";
  }
  return "?";
}

double cot_c(const CotParams& p) { return 1 + (1 + p.sigma * p.sigma) / p.alpha; }

double cot_first_step_error(const CotParams& p) {
  const double c = cot_c(p), kappa = 1 + 1 / p.alpha;
  return 1 - 2 / c + kappa / (c * c) + kappa * (1 - 1 / c) / (c * (p.tau - 1));
}

double cot_first_step_error(const CotParams& p, int dim) {
  const double D = dim, L = std::round(p.alpha * D), M = std::round(p.tau * D);
  if (!(M > D + 1) || !(L >= 1)) return kNaN;
  const double m2 = 1 + (D + 1) / L;             // E S^2 = m2 I, S = Z Z^T / L, Z Wishart(L, I_D)
  const double c = m2 + p.sigma * p.sigma * D / L;  // E b b^T = c I
  return 1 - 2 / c + m2 / (c * c) + m2 * (1 - 1 / c) * D / (c * (M - D - 1));
}

double cot_tau_c(double alpha, double sigma) {
  const double s2 = sigma * sigma, s = alpha + 1 + 2 * s2;
  const double root_delta = std::sqrt(s * s - 4 * alpha);
  const double r = 2 * alpha / (s + root_delta);  // (s - sqrt(Delta))/2, cancellation-free
  return 1 + (1 + s2) * r * (alpha + 1 + 2 * r) / (alpha * root_delta);
}

double cot_tau_monotone(double alpha, double sigma) {
  const double s2 = sigma * sigma;
  return alpha < 1 ? 2 + s2 : 1 + (1 + s2) / alpha;
}

namespace {

// The regime, limit and growth rate from the dominant root x0 (NaN: none), §4.3-§4.5: one
// root scan serves all three.
CotRegime regime_at(double x0) {
  if (std::isnan(x0)) return CotRegime::Convergent;
  return x0 < 0 ? CotRegime::Oscillatory : CotRegime::Monotone;
}
double limit_at(const CotParams& p, double x0) {
  if (regime_at(x0) != CotRegime::Convergent) return std::numeric_limits<double>::infinity();
  if (p.alpha >= 1) return 0;
  return (1 - p.alpha) * (p.tau - 1) / (p.tau - 2 - p.sigma * p.sigma);
}
double growth_rate_at(double x0) { return std::isnan(x0) ? kNaN : -2 * std::log(std::abs(x0)); }

}  // namespace

CotRegime cot_regime(const CotParams& p) { return regime_at(dominant_root(p)); }
double cot_limit(const CotParams& p) { return limit_at(p, dominant_root(p)); }
double cot_growth_rate(const CotParams& p) { return growth_rate_at(dominant_root(p)); }

bool cot_theory_applies(const CotParams& p) { return p.tau > 1 && p.lambda == 0; }

void check_cot_theory_applies(const CotParams& p) {
  if (!(p.tau > 1))
    throw InvalidParams("tau", "the theory needs tau > 1, more pretraining tasks than dimensions "
                               "(got " + numerics::format_significant(p.tau) +
                                   "; the simulator accepts tau <= 1 with lambda > 0)");
  if (p.lambda != 0)
    throw InvalidParams("lambda", "the theory is the ridgeless limit lambda -> 0+: lambda must be "
                                  "0 (lambda > 0 is a setting of the simulator)");
}

CotResult run(const CotParams& params, const CotOptions& options) {
  params.validate();
  options.validate();
  check_cot_theory_applies(params);
  numerics::check_fits_in_memory(series_bytes(options.steps, options.max_bits), "steps",
                                 "the series at max_bits");
  CotResult r;
  r.params = params;
  r.options = options;
  const int T = options.steps;
  const auto all = [](const SeriesValues& s) {
    std::vector<double> v = s.error;
    v.insert(v.end(), s.tau_infinity.begin(), s.tau_infinity.end());
    v.insert(v.end(), s.tau_infinity_finite_dim.begin(), s.tau_infinity_finite_dim.end());
    return v;
  };
  // The precisions tried (§3): 128 bits, then the cancellation the last run measured plus
  // kMarginBits (rounded up to 64), at least 64 more than the last, until two consecutive runs
  // agree.
  constexpr long kMarginBits = 96;
  SeriesValues previous = series_at_bits(kFirstBits, params, T, options.finite_dim);
  int bits = kFirstBits;
  while (bits < options.max_bits) {
    const long wanted = (previous.spread_bits + kMarginBits + 63) / 64 * 64;
    bits = static_cast<int>(std::min<long>(options.max_bits, std::max<long>(wanted, bits + 64L)));
    SeriesValues current = series_at_bits(bits, params, T, options.finite_dim);
    r.precision_agreement = max_relative_difference(all(previous), all(current));
    r.precision_bits = bits;
    previous = std::move(current);
    if (r.precision_agreement <= options.relative_tolerance) {
      r.status = numerics::Status::Converged;
      break;
    }
  }
  r.error = previous.error;
  r.error_tau_infinity = previous.tau_infinity;
  if (options.finite_dim > 0) {
    // §7.3: the O(1/D) term of tau = infinity, added to the D -> infinity series at tau.
    r.error_tau_infinity_finite_dim = previous.tau_infinity_finite_dim;
    r.error_finite_dim.resize(r.error.size());
    for (std::size_t t = 0; t < r.error.size(); ++t)
      r.error_finite_dim[t] =
          r.error[t] + (r.error_tau_infinity_finite_dim[t] - r.error_tau_infinity[t]);
  }
  if (!r.converged()) {
    for (auto* v : {&r.error, &r.error_tau_infinity, &r.error_tau_infinity_finite_dim,
                    &r.error_finite_dim})
      std::fill(v->begin(), v->end(), kNaN);
    r.message = "the series could not be certified within max_bits = " +
                std::to_string(options.max_bits) + ": the last two precisions differ by " +
                numerics::format_significant(r.precision_agreement) + " (relative)";
  } else {
    r.message = "certified at " + std::to_string(r.precision_bits) + " bits";
  }
  r.tau_c = cot_tau_c(params.alpha, params.sigma);
  r.tau_monotone = cot_tau_monotone(params.alpha, params.sigma);
  r.tau_crit = std::max(r.tau_c, r.tau_monotone);
  const double x0 = dominant_root(params);
  r.regime = regime_at(x0);
  r.limit = limit_at(params, x0);
  r.growth_rate = growth_rate_at(x0);
  if (r.converged()) {
    r.t_opt = static_cast<int>(std::min_element(r.error.begin(), r.error.end()) - r.error.begin());
    r.error_t_opt = r.error[static_cast<std::size_t>(r.t_opt)];
  }
  return r;
}

}  // namespace icl::theory
