// Internal to the numerics layer (included by its .cpp files only): small helpers shared by the
// spectral measures and the resolvent moments.
#pragma once
#include <cmath>
#include <string>

#include "numerics/error.hpp"

namespace icl::numerics::detail {

// Binomial coefficient C(n, k) and n! as doubles (small n).
constexpr double binom(int n, int k) {
  double r = 1.0;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}
constexpr double factorial(int n) {
  double r = 1.0;
  for (int i = 2; i <= n; ++i) r *= i;
  return r;
}

// The ranges of SpectralMeasure's exact methods: Stieltjes derivative order n in 0..4, raw
// moment order k in 0..3, real z finite and strictly below the lowest point `lo` of the measure.
inline void check_derivative_order(int n) {
  if (n < 0 || n > 4) throw InvalidParams("n", "Stieltjes derivative order must be in 0..4");
}
inline void check_moment_order(int k) {
  if (k < 0 || k > 3) throw InvalidParams("k", "raw moment order must be in 0..3");
}
inline void check_below(double z, double lo) {
  if (!std::isfinite(z) || !(z < lo))
    throw InvalidParams("z", "must be below the lowest point of the measure (" + std::to_string(lo) + ")");
}

}  // namespace icl::numerics::detail
