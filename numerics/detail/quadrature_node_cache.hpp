// Internal to the numerics layer (included by its .cpp files only): per-measure cache of the
// nested Chebyshev nodes of each support interval and of density_over_weight there.
//
// Interval [lo, hi], h = (hi - lo)/2, level L has M = 2^L and angles theta_i = i pi / M,
// i = 1..M-1; level kFirstLevel stores all of them, every finer level only the new (odd i) ones,
// so the nodes of levels kFirstLevel..L together are the full level-L set. Node positions are
// computed from half angles without cancellation at either edge:
//   x - lo = 2 h cos^2(theta/2),  hi - x = 2 h sin^2(theta/2).
#pragma once
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace icl::numerics::detail {

struct QuadratureNode {
  double x;      // node position
  double xmlo;   // x - lo, to full relative accuracy
  double sin2;   // sin^2 theta       (Gauss-Chebyshev 2nd kind: weight sqrt((x-lo)(hi-x)))
  double omc;    // 1 - cos theta     (trapezoid for the weight (x-lo)^{-1/2} (hi-x)^{1/2})
  double g;      // density_over_weight(x, interval)
};

struct QuadratureNodeCache {
  static constexpr int kFirstLevel = 4;
  static constexpr int kLastLevel = 13;  // 8191 nodes at most
  static constexpr int kLevels = kLastLevel - kFirstLevel + 1;
  struct IntervalNodes {
    double lo = 0.0, hi = 0.0;
    std::atomic<int> ready{0};  // levels kFirstLevel .. kFirstLevel + ready - 1 are filled
    std::array<std::vector<QuadratureNode>, kLevels> levels;
  };
  std::mutex mutex;
  std::vector<std::unique_ptr<IntervalNodes>> intervals;  // grown under the mutex; entries stable
};

}  // namespace icl::numerics::detail
