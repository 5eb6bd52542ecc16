// Cost of the spectral engine: resolvent_moments (20 entries R_{k,j}, k <= 3, j <= 4) by
// quadrature and from exact transforms, for MP, the low-rank mixture and generalized MP, and
// single integrals.
#include <benchmark/benchmark.h>

#include <memory>

#include "numerics/spectral_integral.hpp"
#include "numerics/spectral_measure.hpp"

using namespace icl::numerics;

namespace {

const MarchenkoPastur& mp() {
  static const MarchenkoPastur m(0.6, 1.0 / 0.9);
  return m;
}
const PointMassMixture& lowrank() {
  static const PointMassMixture m(std::make_shared<MarchenkoPastur>(0.6, 1.0 / 0.9), 0.9, {Atom{0.0, 0.1}});
  return m;
}
const GeneralizedMarchenkoPastur& gmp() {
  static const GeneralizedMarchenkoPastur m(0.5, {Atom{1.0, 0.5}, Atom{4.0, 0.5}});
  return m;
}
// hard edge at 0 with zero population eigenvalues: c (1 - w0) = 1
const GeneralizedMarchenkoPastur& gmp_hard() {
  static const GeneralizedMarchenkoPastur m(2.0, {Atom{0.0, 0.5}, Atom{1.0, 0.25}, Atom{3.0, 0.25}});
  return m;
}
// ratio within 1e-12 of 1: lower edge ~2.5e-25 (near-hard edge)
const MarchenkoPastur& mp_near1() {
  static const MarchenkoPastur m(1.0 - 1e-12, 1.0);
  return m;
}

void BM_moments(benchmark::State& st, const SpectralMeasure& mu, MomentMethod method) {
  double z = -0.75;
  for (auto _ : st) {
    ResolventMoments r = resolvent_moments(mu, z, method);
    benchmark::DoNotOptimize(r);
    z = (z == -0.75) ? -0.7500001 : -0.75;  // defeat any caching across calls
  }
}
void BM_mp_quad(benchmark::State& s) { BM_moments(s, mp(), MomentMethod::Quadrature); }
void BM_mp_exact(benchmark::State& s) { BM_moments(s, mp(), MomentMethod::Exact); }
void BM_lowrank_quad(benchmark::State& s) { BM_moments(s, lowrank(), MomentMethod::Quadrature); }
void BM_lowrank_exact(benchmark::State& s) { BM_moments(s, lowrank(), MomentMethod::Exact); }
void BM_gmp_quad(benchmark::State& s) { BM_moments(s, gmp(), MomentMethod::Quadrature); }
void BM_gmp_exact(benchmark::State& s) { BM_moments(s, gmp(), MomentMethod::Exact); }

void BM_gmp_hard_quad(benchmark::State& s) { BM_moments(s, gmp_hard(), MomentMethod::Quadrature); }
void BM_mp_near1_quad(benchmark::State& s) { BM_moments(s, mp_near1(), MomentMethod::Quadrature); }
void BM_mp_near1_exact(benchmark::State& s) { BM_moments(s, mp_near1(), MomentMethod::Exact); }
// z sweeping over a range (each call a new z), as a saddle-point solve or a sweep does
void BM_gmp_quad_zsweep(benchmark::State& st) {
  int i = 0;
  for (auto _ : st) {
    ResolventMoments r = resolvent_moments(gmp(), -0.05 - 0.01 * (i++ % 500), MomentMethod::Quadrature);
    benchmark::DoNotOptimize(r);
  }
}
// a fresh measure per call: construction + first call (fills the node cache)
void BM_gmp_quad_cold(benchmark::State& st) {
  for (auto _ : st) {
    GeneralizedMarchenkoPastur m(0.5, {Atom{1.0, 0.5}, Atom{4.0, 0.5}});
    ResolventMoments r = resolvent_moments(m, -0.75, MomentMethod::Quadrature);
    benchmark::DoNotOptimize(r);
  }
}
void BM_single_moment_near1(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(resolvent_moment_quadrature(mp_near1(), -0.75, 1, 2));
}

void BM_single_moment_mp(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(resolvent_moment_quadrature(mp(), -0.75, 1, 2));
}
void BM_single_integral_mp(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(integrate(mp(), [](double x) { return x / (x + 0.75); }));
}
void BM_single_integral_gmp(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(integrate(gmp(), [](double x) { return x / (x + 0.75); }));
}
void BM_gmp_stieltjes_real(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(gmp().stieltjes_derivative(-0.75, 2));
}
void BM_gmp_density(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(gmp().density(2.0));
}
void BM_mp_stieltjes_d4(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(mp().stieltjes_derivative(-0.75, 4));
}

}  // namespace

BENCHMARK(BM_mp_quad);
BENCHMARK(BM_mp_exact);
BENCHMARK(BM_lowrank_quad);
BENCHMARK(BM_lowrank_exact);
BENCHMARK(BM_gmp_quad);
BENCHMARK(BM_gmp_exact);
BENCHMARK(BM_gmp_quad_zsweep);
BENCHMARK(BM_gmp_quad_cold);
BENCHMARK(BM_gmp_hard_quad);
BENCHMARK(BM_mp_near1_quad);
BENCHMARK(BM_mp_near1_exact);
BENCHMARK(BM_single_moment_near1);
BENCHMARK(BM_single_moment_mp);
BENCHMARK(BM_single_integral_mp);
BENCHMARK(BM_single_integral_gmp);
BENCHMARK(BM_gmp_stieltjes_real);
BENCHMARK(BM_gmp_density);
BENCHMARK(BM_mp_stieltjes_d4);
BENCHMARK_MAIN();
