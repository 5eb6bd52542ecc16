#include "verify/patch/model/prompts.hpp"

namespace icl::verify::patch {

Prompt make_prompt(int d, int n_ctx, std::mt19937_64& rng) {
  std::normal_distribution<double> nd(0.0, 1.0);
  Prompt p;
  p.w.resize(d);
  for (int k = 0; k < d; ++k) p.w(k) = nd(rng);
  p.tokens = Mat<double>::Zero(d + 1, n_ctx + 1);
  for (int i = 0; i <= n_ctx; ++i) {
    for (int k = 0; k < d; ++k) p.tokens(k, i) = nd(rng);
    const double y = p.w.dot(p.tokens.col(i).head(d));
    if (i < n_ctx) p.tokens(d, i) = y;   // context token (x_i, y_i)
    else p.target = y;                   // query token (x_q, 0)
  }
  return p;
}

std::vector<Prompt> make_prompts(int d, int n_ctx, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Prompt> v;
  v.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v.push_back(make_prompt(d, n_ctx, rng));
  return v;
}

}  // namespace icl::verify::patch
