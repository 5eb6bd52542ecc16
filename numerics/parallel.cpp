#include "numerics/parallel.hpp"

#include "numerics/error.hpp"

namespace icl::numerics {

void check_threads(int threads, bool zero_means_all_cores) {
  const int lo = zero_means_all_cores ? 0 : 1;
  if (threads < lo || threads > kMaxThreads)
    throw InvalidParams("threads", "must be in [" + std::to_string(lo) + ", " +
                                       std::to_string(kMaxThreads) + "]" +
                                       (zero_means_all_cores ? " (0 = all cores)" : "") +
                                       ", got " + std::to_string(threads));
}

}  // namespace icl::numerics
