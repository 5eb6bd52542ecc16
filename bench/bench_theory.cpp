// Time per theory solve (saddle point with quadrature, saddle with closed forms, reduced,
// Letey/Lu), a 400-point sweep, and a 100 x 100 phase grid (its solve and its TSV text).
#include <benchmark/benchmark.h>

#include "numerics/table.hpp"
#include "theory/bayes.hpp"
#include "theory/cot.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"
#include "theory/phase_grid.hpp"
#include "theory/sweep.hpp"

using namespace icl::theory;

namespace {

void solve_at_defaults(benchmark::State& state, SolveOptions opt) {
  const Params p;
  for (auto _ : state) {
    Solution s = solve(p, opt);
    if (!s.converged()) state.SkipWithError("not converged");
    benchmark::DoNotOptimize(s.error.idg);
  }
}

void BM_SaddleQuadrature(benchmark::State& state) { solve_at_defaults(state, {.method = Method::Saddle}); }
void BM_SaddleClosedForm(benchmark::State& state) {
  solve_at_defaults(state, {.method = Method::Saddle, .moments = icl::numerics::MomentMethod::Exact});
}
void BM_Reduced(benchmark::State& state) { solve_at_defaults(state, {.method = Method::Reduced}); }
// The same solves with the exact gradient of every output in every parameter
// (docs/sensitivity.md §22): the cost of the derivatives next to that of the solve.
void BM_SaddleQuadratureGradient(benchmark::State& state) {
  solve_at_defaults(state, {.method = Method::Saddle, .gradient = true});
}
void BM_ReducedGradient(benchmark::State& state) {
  solve_at_defaults(state, {.method = Method::Reduced, .gradient = true});
}
void BM_Letey(benchmark::State& state) { solve_at_defaults(state, {.method = Method::Letey}); }

// Ceres from the authors' start (all ones) instead of the reduced closed form, with quadrature
// (the damped iteration runs only if Ceres fails from there).
void BM_SaddleFromOnes(benchmark::State& state) {
  OrderParams ones;
  ones.q = ones.m = ones.chi = ones.qbar = ones.chibar = 1;
  ones.qhat = ones.mhat = ones.chihat = ones.qbarhat = ones.chibarhat = 1;
  solve_at_defaults(state, {.method = Method::Saddle, .start = ones});
}

void BM_Sweep400(benchmark::State& state) {
  const auto alphas = logspace(0.1, 100, 400);
  for (auto _ : state) benchmark::DoNotOptimize(sweep(Params{}, "alpha", alphas));
}

// The same 400 points as independent solves (each from its own closed form): a sweep should
// cost no more per point.
void BM_Single400(benchmark::State& state) {
  const auto alphas = logspace(0.1, 100, 400);
  for (auto _ : state)
    for (double a : alphas) {
      Params p;
      p.alpha = a;
      benchmark::DoNotOptimize(solve(p).error.idg);
    }
}

// Below the interpolation threshold with a small ridge (tau = 0.5, lambda = 1e-3,
// sigma = 0.5): the sweep against the same points solved one by one.
Params hard_point() {
  Params p;
  p.tau = 0.5;
  p.lambda = 1e-3;
  p.sigma = 0.5;
  return p;
}
void BM_Sweep400Hard(benchmark::State& state) {
  const auto alphas = logspace(0.1, 100, 400);
  for (auto _ : state) benchmark::DoNotOptimize(sweep(hard_point(), "alpha", alphas));
}
void BM_Single400Hard(benchmark::State& state) {
  const auto alphas = logspace(0.1, 100, 400);
  for (auto _ : state)
    for (double a : alphas) {
      Params p = hard_point();
      p.alpha = a;
      benchmark::DoNotOptimize(solve(p).error.idg);
    }
}

// The extra outputs of a solve: the Bayes-optimal baselines (docs/errors_phases.md §17, inside
// every solve), the whole `icl solve --json` object, and one block of it (Python's Solution.error).
void BM_BayesOptimal(benchmark::State& state) {
  const Params p;
  for (auto _ : state) benchmark::DoNotOptimize(bayes_optimal(p).idg);
}
void BM_SolutionToJson(benchmark::State& state) {
  const Solution s = solve(Params{});
  for (auto _ : state) benchmark::DoNotOptimize(to_json(s));
}
void BM_SolutionErrorBlock(benchmark::State& state) {
  const Solution s = solve(Params{});
  for (auto _ : state) benchmark::DoNotOptimize(to_json_block(s, "error"));
}
void BM_SolutionRow(benchmark::State& state) {
  const Solution s = solve(Params{});
  for (auto _ : state) benchmark::DoNotOptimize(solution_row(s));
}

void BM_Phase100x100(benchmark::State& state) {
  const auto rhos = linspace(0.01, 1.0, 100), kappas = linspace(0.05, 2.0, 100);
  PhaseOptions po;
  po.threads = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(phase_grid(Params{}, "rho", rhos, "kappa", kappas, po));
}

// The text of the same grid's TSV (icl phase: the solution columns of every point, formatted by
// numerics::append_row_line on one thread): the writing side of a grid, next to its solve.
void BM_Phase100x100Text(benchmark::State& state) {
  const auto rhos = linspace(0.01, 1.0, 100), kappas = linspace(0.05, 2.0, 100);
  const auto sols = phase_grid(Params{}, "rho", rhos, "kappa", kappas);
  std::vector<double> row;
  for (auto _ : state) {
    std::string text;
    for (const Solution& s : sols) {
      solution_row(s, false, row);
      icl::numerics::append_row_line(text, row, '\t');
    }
    benchmark::DoNotOptimize(text.data());
  }
}

// The finite-D prediction at the paper's point (docs/finite_dim.md §21): one saddle solve at the
// sizes of D, the Jacobian of the map, and the linear response of every source (with quadratures of
// the context's quadratic forms).
void BM_FiniteDim(benchmark::State& state) {
  FiniteDimOptions o;
  o.dim = 40;
  for (auto _ : state) benchmark::DoNotOptimize(solve_finite_dim(Params{}, o));
}

// The same on the ridgeless branch (lambda = 0, tau = 0.6; docs/finite_dim.md §21.10: the ridge
// prediction at halved ridges until the Richardson extrapolation settles) and for the verify
// grid's general task spectrum (§21.13-§21.15: four task-resolved solves).
void BM_FiniteDimRidgeless(benchmark::State& state) {
  FiniteDimOptions o;
  o.dim = 40;
  const Params p{.alpha = 2, .tau = 0.6, .kappa = 1.5, .rho = 0.9, .sigma = 0.3, .lambda = 0};
  for (auto _ : state) benchmark::DoNotOptimize(solve_finite_dim(p, o));
}
void BM_FiniteDimGeneralSpectrum(benchmark::State& state) {
  FiniteDimOptions o;
  o.dim = 40;
  Params p{.alpha = 2, .tau = 2.25, .kappa = 0.8, .sigma = 0.3, .lambda = 0.1};
  p.task_spectrum = icl::theory::low_rank_plus_complement_spectrum(0.4, 0.2);
  for (auto _ : state) benchmark::DoNotOptimize(solve_finite_dim(p, o));
}

}  // namespace

// The test-time iteration's series (theory/cot.hpp, docs/multistep.md §3) to T steps, with its
// precision ladder (128 bits, then the measured cancellation + 96, then + 64): convergent
// (alpha 4, tau 3) and oscillatory (alpha 3, tau 1.5) points of the authors' data, sigma 0.01.
void BM_CotSeries(benchmark::State& state) {
  const icl::theory::CotParams p{state.range(1) ? 3.0 : 4.0, state.range(1) ? 1.5 : 3.0, 0.01, 0};
  icl::theory::CotOptions o;
  o.steps = static_cast<int>(state.range(0));
  int bits = 0;
  for (auto _ : state) bits = icl::theory::run(p, o).precision_bits;
  state.counters["bits"] = bits;
}
BENCHMARK(BM_CotSeries)->Args({30, 0})->Args({100, 0})->Args({100, 1})->Args({200, 0})
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_SaddleQuadrature)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SaddleClosedForm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SaddleFromOnes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Reduced)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SaddleQuadratureGradient)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReducedGradient)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Letey)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Sweep400)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Single400)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sweep400Hard)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Single400Hard)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BayesOptimal)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SolutionToJson)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SolutionErrorBlock)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SolutionRow)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FiniteDim)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FiniteDimRidgeless)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FiniteDimGeneralSpectrum)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Phase100x100)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Phase100x100Text)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
