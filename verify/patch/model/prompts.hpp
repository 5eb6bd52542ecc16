// The in-context regression prompts the patch model reads (docs/patch.md §13).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "verify/patch/model/weights.hpp"

namespace icl::verify::patch {

// A regression prompt: tokens (x_i, y_i) in R^{d+1}, i = 1..n, then the query (x_q, 0);
// y = w . x with w ~ N(0, I_d), x ~ N(0, I_d). The prediction is the last coordinate of the
// model output at the query (last column).
struct Prompt {
  Mat<double> tokens;  // (d+1) x (n+1)
  double target = 0;   // w . x_q
  Vec<double> w;
};
Prompt make_prompt(int d, int n_ctx, std::mt19937_64& rng);
// `count` prompts from one stream seeded by `seed` (the experiments: derive_seed(base_seed,
// "prompts"), docs/patch.md §14.1).
std::vector<Prompt> make_prompts(int d, int n_ctx, int count, std::uint64_t seed);

}  // namespace icl::verify::patch
