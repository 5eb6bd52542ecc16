// The lane functions of verify/patch/model/vmath.cpp (docs/patch.md §2.6), included there once
// per instruction set inside `#pragma GCC target` (no include guard): GCC compiles a vector
// comparison in a function for that function's own target, so the functions that compare must be
// compiled for the target of the driver that inlines them. Each inclusion defines them in the
// namespace ICL_VMATH_LANES.
namespace ICL_VMATH_LANES {

#define ICL_LANES [[gnu::always_inline]] inline

// p(t) = c[N-1] + t (c[N-2] + ...) ... coefficients from the highest degree down (Horner).
template <class V, std::size_t N>
ICL_LANES V horner(const V& t, const double (&c)[N]) {
  V p = V{} + c[0];
  for (std::size_t i = 1; i < N; ++i) p = p * t + c[i];
  return p;
}

// Whether every lane of a mask is set (-1), folding halves with vector ANDs (a lane-by-lane loop
// would turn the comparisons that made the mask into scalar ones).
template <class V>
ICL_LANES bool all_set(const Int<V>& m) {
  if constexpr (kLanes<V> == 1) {
    return m[0] != 0;
  } else {
    using H = typename HalfOf<V>::type;
    Int<H> lo, hi;
    std::memcpy(&lo, &m, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&m) + sizeof lo, sizeof hi);
    return all_set<H>(lo & hi);
  }
}
template <class V>
ICL_LANES bool none_set(const Int<V>& m) {
  return all_set<V>(~m);
}

// exp(x) for kExpMin <= x <= kExpMax (other lanes: garbage, replaced by the caller).
template <class V>
ICL_LANES V exp_lanes(const V& x) {
  V kd = x * kLog2e + kShift;
  const Int<V> k = (Int<V>)kd - (Int<V>)(V{} + kShift);
  kd = kd - kShift;
  const V hi = x - kd * kLn2Hi;  // exact
  const V lo = kd * kLn2Lo;
  const V r = hi - lo;
  const V err = (hi - r) - lo;  // hi - lo = r + err exactly
  const V p = horner(r, kExpPoly) * (r * r);
  const V y = 1.0 + (r + (p + err));
  return y * (V)((k + 1023) << 52);
}

// K vectors at a time from p (K independent chains that the CPU overlaps).
template <class V, int K>
ICL_LANES void exp_block(double* p) {
  V x[K], y[K];
  for (int k = 0; k < K; ++k) std::memcpy(&x[k], p + k * kLanes<V>, sizeof(V));
  Int<V> ok = ~Int<V>{};
  for (int k = 0; k < K; ++k) {
    y[k] = exp_lanes(x[k]);
    ok &= (x[k] >= kExpMin) & (x[k] <= kExpMax);  // false for NaN
  }
  for (int k = 0; k < K; ++k) std::memcpy(p + k * kLanes<V>, &y[k], sizeof(V));
  if (!all_set<V>(ok)) {
    double in[K * kLanes<V>];
    std::memcpy(in, x, sizeof x);
    exp_fixup(p, in, K * kLanes<V>);
  }
}

template <class V>
ICL_LANES V erf_small(const V& x) {
  return x + x * horner(x * x, kErfSmall);
}
// sign(x) (1 - exp(-a^2) g(a)), a = |x|
template <class V>
ICL_LANES V erf_large(const V& a, const Int<V>& sign) {
  const V g = horner((a - 3.0) / (a + 3.0), kErfcScaled);
  const V r = 1.0 - exp_lanes(-(a * a)) * g;
  return (V)((Int<V>)r | sign);
}

template <class V, int K>
ICL_LANES void erf_block(double* p) {
  V x[K], y[K];
  for (int k = 0; k < K; ++k) std::memcpy(&x[k], p + k * kLanes<V>, sizeof(V));
  Int<V> small = ~Int<V>{}, nan = Int<V>{};
  for (int k = 0; k < K; ++k) {
    small &= (x[k] < 1.0) & (x[k] > -1.0);
    nan |= x[k] != x[k];
  }
  if (all_set<V>(small)) {
    for (int k = 0; k < K; ++k) y[k] = erf_small(x[k]);
  } else {
    for (int k = 0; k < K; ++k) {
      const Int<V> sign = (Int<V>)x[k] & (Int<V>{} + kSignBit);
      const V a = (V)((Int<V>)x[k] ^ sign);
      const V one = (V)((Int<V>)(V{} + 1.0) | sign);  // also NaN lanes (replaced below)
      y[k] = a < 1.0 ? erf_small(x[k]) : a < kErfOne ? erf_large(a, sign) : one;
    }
  }
  for (int k = 0; k < K; ++k) std::memcpy(p + k * kLanes<V>, &y[k], sizeof(V));
  if (!none_set<V>(nan)) {
    double in[K * kLanes<V>];
    std::memcpy(in, x, sizeof x);
    erf_fixup(p, in, K * kLanes<V>);
  }
}

// Blocks of K vectors from i on, then returns the new i.
template <class V, int K>
[[gnu::always_inline]] inline std::size_t exp_run(double* x, std::size_t n, std::size_t i) {
  for (; i + K * kLanes<V> <= n; i += K * kLanes<V>) exp_block<V, K>(x + i);
  return i;
}
template <class V, int K>
[[gnu::always_inline]] inline std::size_t erf_run(double* x, std::size_t n, std::size_t i) {
  for (; i + K * kLanes<V> <= n; i += K * kLanes<V>) erf_block<V, K>(x + i);
  return i;
}
// The last n - i < kLanes<V> entries, as one V padded with zeros (lanes are independent: the
// same values as one lane at a time).
template <class V, class Block>
[[gnu::always_inline]] inline void tail(double* x, std::size_t n, std::size_t i, Block block) {
  if (i == n) return;
  double buf[kLanes<V>] = {};
  std::memcpy(buf, x + i, (n - i) * sizeof(double));
  block(buf);
  std::memcpy(x + i, buf, (n - i) * sizeof(double));
}
// exp and erf on x[0, n): pairs of V, one V, then the padded tail.
template <class V>
[[gnu::always_inline]] inline void exp_all(double* x, std::size_t n) {
  tail<V>(x, n, exp_run<V, 1>(x, n, exp_run<V, 2>(x, n, 0)), exp_block<V, 1>);
}
template <class V>
[[gnu::always_inline]] inline void erf_all(double* x, std::size_t n) {
  tail<V>(x, n, erf_run<V, 1>(x, n, erf_run<V, 2>(x, n, 0)), erf_block<V, 1>);
}

#undef ICL_LANES

}  // namespace ICL_VMATH_LANES
