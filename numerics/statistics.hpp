// Mean and standard error of independent samples (seeds, prompts): the one estimate type of every
// simulated quantity.
#pragma once
#include <cmath>
#include <limits>
#include <vector>

namespace icl::numerics {

struct Estimate {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double sem = std::numeric_limits<double>::quiet_NaN();  // sample std / sqrt(count); NaN if count < 2
  int count = 0;
};

// Non-finite samples are not skipped: one NaN makes the estimate NaN (a failed seed is visible).
inline Estimate estimate(const std::vector<double>& samples) {
  Estimate e;
  e.count = static_cast<int>(samples.size());
  if (samples.empty()) return e;
  double sum = 0;
  for (double v : samples) sum += v;
  e.mean = sum / e.count;
  if (e.count < 2) return e;
  double ss = 0;
  for (double v : samples) ss += (v - e.mean) * (v - e.mean);
  e.sem = std::sqrt(ss / (e.count - 1) / e.count);
  return e;
}

}  // namespace icl::numerics
