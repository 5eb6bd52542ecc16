// Wall-clock seconds for the timings that results report (never for control flow).
#pragma once
#include <chrono>

namespace icl::numerics {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace icl::numerics
