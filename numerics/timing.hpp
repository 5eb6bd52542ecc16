// Wall-clock seconds for the timings that results report, and the calling thread's CPU seconds
// for the estimates that decide whether to refuse work (a size check must not depend on how
// loaded the machine is: one preemption during a probe of microseconds would inflate a wall
// time a hundredfold).
#pragma once
#include <chrono>
#include <ctime>

namespace icl::numerics {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU seconds the calling thread has used (POSIX CLOCK_THREAD_CPUTIME_ID): not advanced while
// the thread waits for a core.
inline double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace icl::numerics
