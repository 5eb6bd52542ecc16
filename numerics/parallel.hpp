// Independent work items on a few threads, with serialized progress: body(k) for k in [0, n),
// each k exactly once, in an unspecified order and thread. Results that body(k) writes to slot k
// do not depend on the number of threads (the callers' reproducibility rule).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "numerics/progress.hpp"

namespace icl::numerics {

// The worker-thread counts every entry accepts: 1..kMaxThreads, and 0 (= every core) where the
// entry says so. check_threads throws InvalidParams("threads") otherwise; the CLI's --threads
// takes its range from here.
inline constexpr int kMaxThreads = 256;
void check_threads(int threads, bool zero_means_all_cores);

// threads <= 0: every core (std::thread::hardware_concurrency, at least 1). The calling thread
// works too; at most n threads are used. progress(done, n, what) after each item, serialized.
// Cancellation: when progress throws (a front end's interrupt), no new item starts, the running
// ones finish, and the exception is rethrown in the calling thread. body must not throw.
template <class Body>
void parallel_for(std::size_t n, int threads, const Body& body, const Progress& progress = {},
                  const std::string& what = "item") {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> cancelled{false};
  std::size_t done = 0;
  std::exception_ptr cancel;
  std::mutex progress_mutex;
  const auto worker = [&] {
    for (std::size_t k; !cancelled && (k = next.fetch_add(1)) < n;) {
      body(k);
      if (!progress) continue;
      std::lock_guard<std::mutex> lock(progress_mutex);
      if (cancelled) break;
      try {
        progress(++done, n, what);
      } catch (...) {
        cancel = std::current_exception();
        cancelled = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min<std::size_t>(static_cast<std::size_t>(threads), n); ++t)
    pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (cancel) std::rethrow_exception(cancel);
}

}  // namespace icl::numerics
