// exp and erf over arrays of doubles (docs/patch.md §2.6). Each function is written once on GCC
// vector types and run at 8 lanes (AVX-512F), 4 lanes (AVX2), 2 lanes (SSE2, every x86-64) and
// one lane (the tail), the wide ones compiled for their instruction set by target attributes and
// chosen at run time, so the library stays built for baseline x86-64. No Eigen here: a template
// of Eigen instantiated under AVX flags could replace the baseline copy of another unit.
//
// Bits: every lane runs the same IEEE operations, with no fused multiply-add (the pragma: the
// wide drivers could otherwise contract a * b + c) and no table, so every width gives the same
// value for the same input (tests/patch_vmath.cpp checks it).
#include "verify/patch/model/detail/vmath.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#pragma GCC optimize("fp-contract=off")
// The lane functions return 32- and 64-byte vectors by value; they are always inlined into the
// driver of their width, so no call crosses the ABI that -Wpsabi warns about.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace icl::verify::patch::detail {
namespace {

typedef double V1 __attribute__((vector_size(8)));
typedef double V2 __attribute__((vector_size(16)));
typedef double V4 __attribute__((vector_size(32)));
typedef double V8 __attribute__((vector_size(64)));
template <class V>
using Int = decltype(V{} < V{});  // 64-bit integer lanes (a comparison's type: -1 true, 0 false)
template <class V>
constexpr int kLanes = sizeof(V) / sizeof(double);

// ---- exp: x = k ln2 + r, |r| <= ln2 / 2 (Cody-Waite: k ln2_hi is exact), exp(r) by its Taylor
// polynomial to degree 13 (remainder < 5e-18), times 2^k built in the exponent bits.
constexpr double kLog2e = 1.4426950408889634;      // 1 / ln 2
constexpr double kLn2Hi = 0.6931471803691238;      // ln 2 to 32 bits: k kLn2Hi exact for |k| < 2^21
constexpr double kLn2Lo = 1.9082149292705877e-10;  // ln 2 - kLn2Hi
constexpr double kShift = 0x1.8p52;  // x + kShift rounds x to an integer, held in the low bits
constexpr double kExpMin = -708, kExpMax = 709;  // 2^k is a normal number: outside, std::exp
// 1/13!, 1/12!, ..., 1/2!
constexpr double kExpPoly[] = {1.6059043836821613e-10, 2.08767569878681e-09, 2.505210838544172e-08,
                               2.755731922398589e-07,  2.7557319223985893e-06, 2.48015873015873e-05,
                               0.0001984126984126984,  0.001388888888888889,   0.008333333333333333,
                               0.041666666666666664,   0.16666666666666666,    0.5};

// ---- erf: |x| < 1: x + x q(x^2), q(s) = erf(sqrt s) / sqrt s - 1 (near-minimax, degree 12,
// error 1.3e-19); 1 <= |x| < 6: 1 - exp(-x^2) g(|x|) with g(a) = exp(a^2) erfc(a) a polynomial of
// degree 14 in t = (a - 3) / (a + 3) (error 4e-18 relative to erf); |x| >= 6: +-1.
// Coefficients: Chebyshev fits at 50 digits (mpmath), rounded to double.
constexpr double kErfSmall[] = {
    5.957176147748911e-11,  -1.1372848856791674e-09, 1.4659775274047436e-08, -1.6350312701054695e-07,
    1.6461000484121368e-06, -1.4925595266831182e-05, 0.0001205533111164271,  -0.000854832698083379,
    0.0052239776248180145,  -0.026866170645076792,   0.11283791670954879,    -0.3761263890318375,
    0.1283791670955126};
constexpr double kErfcScaled[] = {
    1.2801900862962662e-06,  2.023603179641757e-06,  -8.008021319412685e-06, -1.284889451252353e-05,
    6.406182073530546e-05,   4.525472635483354e-05,  -0.0005970623517093284, 0.0007077464443901538,
    0.004269136347508256,    -0.024392499318273194,  0.07166583719774874,    -0.15011593650078744,
    0.24560380171233195,     -0.32623356004303716,   0.17900115118138996};
constexpr long kSignBit = static_cast<long>(1UL << 63);
constexpr double kErfOne = 6;  // erfc(6) = 2e-17: erf rounds to +-1 from here on

// The lanes out of the polynomial's range (rare; out of line, so that the vector comparisons stay
// vector comparisons).
[[gnu::noinline]] void exp_fixup(double* out, const double* in, int lanes) {
  for (int i = 0; i < lanes; ++i)
    if (!(in[i] >= kExpMin && in[i] <= kExpMax)) out[i] = std::exp(in[i]);
}

[[gnu::noinline]] void erf_fixup(double* out, const double* in, int lanes) {
  for (int i = 0; i < lanes; ++i)
    if (std::isnan(in[i])) out[i] = in[i];
}

// Half of a vector type (V8 -> V4 -> V2 -> V1).
template <class V>
struct HalfOf;
template <> struct HalfOf<V2> { using type = V1; };
template <> struct HalfOf<V4> { using type = V2; };
template <> struct HalfOf<V8> { using type = V4; };

// The drivers: SSE2 (2 lanes, every x86-64) and one lane for the tails in the baseline build.
#define ICL_VMATH_LANES base
#include "verify/patch/model/detail/vmath_lanes.ipp"
#undef ICL_VMATH_LANES
void exp_1(double* x, std::size_t n) { base::exp_run<V1, 1>(x, n, 0); }
void erf_1(double* x, std::size_t n) { base::erf_run<V1, 1>(x, n, 0); }
void exp_2(double* x, std::size_t n) { base::exp_all<V2>(x, n); }
void erf_2(double* x, std::size_t n) { base::erf_all<V2>(x, n); }

#if defined(__x86_64__) && defined(__GNUC__)
#define ICL_VMATH_X86 1
#pragma GCC push_options
#pragma GCC target("avx2")
#define ICL_VMATH_LANES avx2
#include "verify/patch/model/detail/vmath_lanes.ipp"
#undef ICL_VMATH_LANES
void exp_4(double* x, std::size_t n) { avx2::exp_all<V4>(x, n); }
void erf_4(double* x, std::size_t n) { avx2::erf_all<V4>(x, n); }
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
#define ICL_VMATH_LANES avx512
#include "verify/patch/model/detail/vmath_lanes.ipp"
#undef ICL_VMATH_LANES
void exp_8(double* x, std::size_t n) { avx512::exp_all<V8>(x, n); }
void erf_8(double* x, std::size_t n) { avx512::erf_all<V8>(x, n); }
#pragma GCC pop_options
#endif

int detect_width() {
#ifdef ICL_VMATH_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return 8;
  if (__builtin_cpu_supports("avx2")) return 4;
#endif
  return 2;
}

using Kernel = void (*)(double*, std::size_t);
Kernel pick(int width, Kernel k1, Kernel k2, [[maybe_unused]] Kernel k4,
            [[maybe_unused]] Kernel k8) {
#ifdef ICL_VMATH_X86
  if (width >= 8) return k8;
  if (width >= 4) return k4;
#endif
  return width >= 2 ? k2 : k1;
}

#ifdef ICL_VMATH_X86
const Kernel kExp[] = {exp_1, exp_2, exp_4, exp_8};
const Kernel kErf[] = {erf_1, erf_2, erf_4, erf_8};
#else
const Kernel kExp[] = {exp_1, exp_2, exp_2, exp_2};
const Kernel kErf[] = {erf_1, erf_2, erf_2, erf_2};
#endif

}  // namespace

int vmath_width() {
  static const int w = detect_width();
  return w;
}

void exp_inplace_width(int width, double* x, std::size_t n) {
  pick(std::min(width, vmath_width()), kExp[0], kExp[1], kExp[2], kExp[3])(x, n);
}
void erf_inplace_width(int width, double* x, std::size_t n) {
  pick(std::min(width, vmath_width()), kErf[0], kErf[1], kErf[2], kErf[3])(x, n);
}

void exp_inplace(double* x, std::size_t n) {
  static const Kernel k = pick(vmath_width(), kExp[0], kExp[1], kExp[2], kExp[3]);
  k(x, n);
}
void erf_inplace(double* x, std::size_t n) {
  static const Kernel k = pick(vmath_width(), kErf[0], kErf[1], kErf[2], kErf[3]);
  k(x, n);
}

}  // namespace icl::verify::patch::detail
