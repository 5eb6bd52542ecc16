// Time per seed of the low-rank ICL simulator (data + PCG training + measurements) at the
// paper's point (alpha 2, tau 2.25, kappa 1.5, rho 0.9, sigma 0.3, lambda 0), D = 60, 100, 150.
// Counters: CG iterations, and GFLOP/s of the training (4 N D^2 flops per operator application:
// X*Gamma and X^T*(diag(u) Sm)), single thread. Also one seed with a general task covariance,
// and one seed of the test-time iteration's simulator (BM_CotSeed).
#include <benchmark/benchmark.h>

#include "numerics/blas.hpp"
#include "verify/lowrank/detail/normal_operator.hpp"
#include "verify/lowrank/simulator.hpp"
#include "verify/multistep/cot_simulator.hpp"

namespace {

using namespace icl::verify::lowrank;

// The paper's point is theory::Params' defaults (theory/params.hpp, README "Two commands").
icl::theory::Params paper_point() { return {}; }

void BM_Seed(benchmark::State& state) {
  const int D = int(state.range(0));
  const auto p = paper_point();
  SimOptions o;
  o.dim = D;
  o.seeds = 1;
  o.threads = 1;
  std::uint64_t k = 0;
  double iters = 0, train = 0, data = 0;
  for (auto _ : state) {
    const SeedMeasurement m = run_seed(p, o, icl::numerics::derive_seed(o.base_seed, k++));
    iters += m.cg_iterations;
    train += m.train_seconds;
    data += m.data_seconds;
    benchmark::DoNotOptimize(m.error.tm);
  }
  const Sizes n = sizes(p, D);
  const double it = iters / state.iterations();
  // Operator applications: one per iteration plus two (start and final residual).
  const double flops = (it + 2.0) * 4.0 * double(n.N) * n.D * n.D;
  state.counters["N"] = n.N;
  state.counters["cg_iters"] = it;
  state.counters["train_s"] = train / state.iterations();
  state.counters["data_s"] = data / state.iterations();
  state.counters["GFLOPs"] = flops / (train / state.iterations()) * 1e-9;
}
BENCHMARK(BM_Seed)->Arg(60)->Arg(100)->Arg(150)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same with a general task covariance (power law, 4 levels): data generation adds a D x D
// Haar matrix and Sigma^{1/2}; the IDG measurements use the dense Sigma.
void BM_SeedGeneralSpectrum(benchmark::State& state) {
  const int D = int(state.range(0));
  auto p = paper_point();
  p.task_spectrum = icl::theory::power_law_spectrum(1.0, 4);
  SimOptions o;
  o.dim = D;
  o.seeds = 1;
  o.threads = 1;
  std::uint64_t k = 0;
  double data = 0;
  for (auto _ : state) {
    const SeedMeasurement m = run_seed(p, o, icl::numerics::derive_seed(o.base_seed, k++));
    data += m.data_seconds;
    benchmark::DoNotOptimize(m.error.tm);
  }
  state.counters["data_s"] = data / state.iterations();
}
BENCHMARK(BM_SeedGeneralSpectrum)->Arg(60)->Unit(benchmark::kMillisecond)->UseRealTime();

// The dense operator alone (the hot loop), 4 N D^2 flops: second argument 0 = Eigen's products
// (the reference), 1 = BLAS on row blocks on one thread, 2 = on two threads. GFLOP/s per CPU
// second (one thread: against the core's peak) and per wall second.
void BM_Operator(benchmark::State& state) {
  const int D = int(state.range(0)), mode = int(state.range(1));
  const auto p = paper_point();
  Rng rng(1);
  const Dataset d = generate(p, D, rng, Sampler::Factorized);
  MatrixXd G = MatrixXd::Identity(D, D) * 0.5;
  detail::NormalOperator op(d, 0.0, std::max(1, mode), mode != 0);
  MatrixXd out(D, D);
  for (auto _ : state) {
    op.apply(G, out);
    benchmark::DoNotOptimize(out.data());
  }
  const double flops = 4.0 * d.n.N * double(D) * D * state.iterations() * 1e-9;
  state.counters["GFLOPs"] = benchmark::Counter(flops, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Operator)
    ->ArgsProduct({{60, 100, 200, 300}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime();

// The machine's limit for the rows above: one large square dgemm (n = 1500) through the same
// BLAS on one thread, GFLOP/s per CPU second.
void BM_PeakDgemm(benchmark::State& state) {
  const int n = int(state.range(0));
  const MatrixXd A = MatrixXd::Random(n, n), B = MatrixXd::Random(n, n);
  MatrixXd C(n, n);
  using icl::numerics::Transpose;
  for (auto _ : state) {
    icl::numerics::gemm(Transpose::No, Transpose::No, n, n, n, 1.0, A.data(), n, B.data(), n, 0.0,
                        C.data(), n);
    benchmark::DoNotOptimize(C.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * n * double(n) * n * state.iterations() * 1e-9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel(icl::numerics::blas_description());
}
BENCHMARK(BM_PeakDgemm)->Arg(1500)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// One seed of the test-time iteration's simulator (verify/multistep/cot_simulator.hpp) at
// D = 400, alpha = 2, tau = 4 (L = 800, M = 1600), T = 30 steps on 1000 test tasks, one
// thread; the second argument 1 keeps a single test task (the pretraining and the diagnostic
// alone). docs/multistep_simulation.md counts the flops.
void BM_CotSeed(benchmark::State& state) {
  const icl::theory::CotParams p{.alpha = 2, .tau = 4, .sigma = 0.1, .lambda = 0};
  icl::verify::multistep::CotSimOptions o;
  o.dim = int(state.range(0));
  o.test_tasks = int(state.range(1));
  o.seeds = 1;
  o.steps = 30;
  o.threads = 1;
  for (auto _ : state) {
    const auto r = icl::verify::multistep::simulate(p, o);
    benchmark::DoNotOptimize(r.error.mean.back());
    ++o.seed;
  }
}
BENCHMARK(BM_CotSeed)->Args({400, 1000})->Args({400, 1})->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
