// The depth simulator (docs/multistep_depth.md §7): L layers of linear attention with infinite
// pretraining, i.e. L steps w_{l+1} = w_l + g (D/N) X (y - X^T w_l) from w_0 = 0, on contexts of
// N = round(alpha D) tokens x ~ N(0, I/D) with labels y = X^T w + sigma eps, w ~ N(0, I_D).
//
// Default estimator (conditional): for each sampled X, the error averaged exactly over w, the
// noise and the query given X, from the eigenvalues s_i of S = (D/N) X X^T:
//     sigma^2 + (1/D) sum_i [ (1 - g s_i)^{2L} + sigma^2 (D/N) s_i Q(s_i)^2 ],
//     Q(s) = g sum_{k<L} (1 - g s)^k  (= [1 - (1 - g s)^L] / s),
// so the only randomness is X. Literal: the recursion itself with one sampled w and noise per X
// (the query still averaged exactly: sigma^2 + |w - w_L|^2 / D), the check of the former.
//
// Sample k draws X from derive_seed(seed, "X", k) and (literal) w, eps from
// derive_seed(seed, "w_eps", k) only: the result does not depend on the number of threads, and
// both estimators see the same X for the same seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/progress.hpp"
#include "numerics/statistics.hpp"
#include "numerics/status.hpp"
#include "theory/depth.hpp"

namespace icl::verify::multistep {

enum class DepthEstimator { Conditional, Literal };
const char* to_string(DepthEstimator e);  // "conditional" | "literal"

struct DepthSimOptions {
  int dim = 100;                 // D, 2..2000
  int seeds = 200;               // independent contexts X (one seed stream each), 2..1000000
  int threads = 1;               // 1..256 (results do not depend on it)
  std::uint64_t seed = 20251;    // base seed
  DepthEstimator estimator = DepthEstimator::Conditional;
  void validate() const;  // the fields alone; InvalidParams naming the field
  // The fields and N = round(alpha D): 1 <= N and D N <= 5e7 (InvalidParams "dim").
  void validate(const theory::DepthParams& p) const;
};

struct DepthSimResult {
  theory::DepthParams params;
  double step = 0;               // g, per layer
  DepthSimOptions options;
  int context = 0;               // N = round(alpha D)
  double alpha_simulated = 0;    // N / D
  numerics::Estimate error;      // mean and s.e. over samples (query noise included)
  std::vector<double> per_sample;
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  bool converged() const { return status == numerics::Status::Converged; }
};

// Validates params, options and g (finite, InvalidParams "step"), then simulates.
DepthSimResult simulate(const theory::DepthParams& params, double g,
                        const DepthSimOptions& options, const numerics::Progress& progress = {});

// {"mean", "sem", "dim", "seeds", "context", "alpha_simulated", "step", "gamma", "estimator",
//  "seed", "status", "message"}
nlohmann::ordered_json to_json(const DepthSimResult& r);

}  // namespace icl::verify::multistep
