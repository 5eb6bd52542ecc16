// The softmax-attention check at the paper's setting (D = 20, tau 1.5, kappa 0.5, sigma 0.01):
// one full-batch forward+backward pass over the N = 600 sequences (one Adam epoch) for
// alpha = 2, 4, 6, and one whole seed with a short training (data, 100 epochs, evaluation).
// Counter: tokens per second of the forward+backward pass.
#include <benchmark/benchmark.h>

#include "verify/softmax/experiment.hpp"

namespace {

using namespace icl::verify::softmax;

icl::theory::Params paper_point(double alpha) {
  return {.alpha = alpha, .tau = 1.5, .kappa = 0.5, .rho = 0.5, .sigma = 0.01, .lambda = 0};
}

void BM_Epoch(benchmark::State& state) {
  const double alpha = double(state.range(0));
  Rng rng(1);
  const TrainingData d = generate(paper_point(alpha), 20, rng);
  const Model m = init_model(20, 4, rng);
  Gradient g;
  for (auto _ : state) {
    benchmark::DoNotOptimize(loss_and_gradient(m, d.prompts, g));
    benchmark::ClobberMemory();
  }
  state.counters["tokens/s"] = benchmark::Counter(
      double(d.prompts.Z.cols()) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Epoch)->Arg(2)->Arg(4)->Arg(6)->Unit(benchmark::kMillisecond);

void BM_SeedShort(benchmark::State& state) {
  SoftmaxOptions o;
  o.dim = 20;
  o.seeds = 1;
  o.threads = 1;
  o.train.max_epochs = 100;
  std::uint64_t k = 0;
  for (auto _ : state) {
    auto v = run_seed(paper_point(double(state.range(0))), o,
                      icl::numerics::derive_seed(o.base_seed, k++));
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_SeedShort)->Arg(2)->Arg(6)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
