// Benchmarks of verify/patch: forward pass, the patch, a training step (tokens per second),
// and the 10-layer Pre-LN block-by-block check on one prompt.
#include <benchmark/benchmark.h>

#include "verify/patch/model.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/train.hpp"

using namespace icl::verify::patch;

namespace {

// The paper's model, the library's default ModelSpec: d = 2, 1 block, 8 heads of size 4, MLP 128,
// no skips.
ModelConfig paper_config() { return ModelSpec{}.config(); }

// 10 blocks of `block` (Pre-LN by default), width 16, 4 heads of 4, MLP 64.
ModelConfig deep_config(Block block = {BlockKind::PreLn}) {
  return ModelSpec{.layers = 10, .heads = 4, .width = 16, .mlp_hidden = 64, .block = block}.config();
}

void BM_Forward(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  auto w = init_weights(paper_config(), {.seed = 1});
  const auto p = make_prompts(2, n, 1, 2)[0];
  for (auto _ : st) benchmark::DoNotOptimize(forward(w, p.tokens));
  st.SetItemsProcessed(st.iterations() * (n + 1));  // tokens per second
}
BENCHMARK(BM_Forward)->Arg(50)->Arg(200);

void BM_Patch(benchmark::State& st) {
  auto w = init_weights(paper_config(), {.seed = 1});
  const auto p = make_prompts(2, 50, 1, 2)[0];
  for (auto _ : st) benchmark::DoNotOptimize(stack_check(w, p.tokens, 50, PatchMode::Full));
}
BENCHMARK(BM_Patch);

void BM_TrainStep(benchmark::State& st) {
  auto w = init_weights(paper_config(), {.seed = 1});
  const auto batch = make_prompts(2, 50, 64, 3);
  Adam adam(w, {});
  const int threads = static_cast<int>(st.range(0));
  for (auto _ : st) {
    Weights<double> g = zeros_like(w);
    benchmark::DoNotOptimize(batch_loss(w, batch, &g, threads));
    adam.step(w, g);
  }
  st.SetItemsProcessed(st.iterations() * 64 * 51);  // tokens per second
}
BENCHMARK(BM_TrainStep)->Arg(1)->Arg(2)->UseRealTime();

void BM_Check10Layer(benchmark::State& st) {
  auto w = init_weights(deep_config(), {.seed = 1});
  const auto p = make_prompts(2, 50, 1, 2)[0];
  for (auto _ : st) benchmark::DoNotOptimize(stack_check(w, p.tokens, 50, PatchMode::Full));
}
BENCHMARK(BM_Check10Layer)->Unit(benchmark::kMillisecond);

// The same 10-layer check with modern blocks (docs/patch.md §16): 0 pre-norm RMSNorm SwiGLU,
// 1 post-norm RMSNorm SwiGLU, 2 parallel RMSNorm SwiGLU.
void BM_Check10LayerModern(benchmark::State& st) {
  const BlockKind kinds[] = {BlockKind::PreLn, BlockKind::PostLn, BlockKind::Parallel};
  auto w = init_weights(deep_config({kinds[st.range(0)], Norm::RmsNorm, Mlp::SwiGlu}), {.seed = 1});
  const auto p = make_prompts(2, 50, 1, 2)[0];
  for (auto _ : st) benchmark::DoNotOptimize(stack_check(w, p.tokens, 50, PatchMode::Full));
}
BENCHMARK(BM_Check10LayerModern)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
