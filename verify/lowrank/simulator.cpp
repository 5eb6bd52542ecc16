#include "verify/lowrank/simulator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "numerics/error.hpp"
#include "numerics/memory.hpp"
#include "numerics/parallel.hpp"
#include "verify/lowrank/detail/normal_kernel.hpp"
#include "verify/lowrank/serialize.hpp"
#include "numerics/timing.hpp"

namespace icl::verify::lowrank {

namespace {

using numerics::Clock;
using numerics::seconds_since;

template <class Get>
numerics::Estimate over_seeds(const std::vector<SeedMeasurement>& seeds, Get get) {
  std::vector<double> v;
  v.reserve(seeds.size());
  for (const auto& m : seeds) v.push_back(get(m));
  return numerics::estimate(v);
}

// Mean and standard error over seeds of every field of Measurements (the seeds all have the
// same optional parts, except fit_e_nu_null: averaged over the seeds where S is singular).
void aggregate(const std::vector<SeedMeasurement>& s, Measurements<numerics::Estimate>& a) {
  for (int k = 0; k < 3; ++k) a.error[k] = over_seeds(s, [k](const auto& m) { return m.error[k]; });
  if (s.front().shift) a.shift = over_seeds(s, [](const auto& m) { return *m.shift; });
  if (s.front().bayes_tm) a.bayes_tm = over_seeds(s, [](const auto& m) { return *m.bayes_tm; });
  a.order.m = over_seeds(s, [](const auto& m) { return m.order.m; });
  a.order.q = over_seeds(s, [](const auto& m) { return m.order.q; });
  a.order.mbar = over_seeds(s, [](const auto& m) { return m.order.mbar; });
  a.order.qbar = over_seeds(s, [](const auto& m) { return m.order.qbar; });
  a.order.m0 = over_seeds(s, [](const auto& m) { return m.order.m0; });
  a.order.q0 = over_seeds(s, [](const auto& m) { return m.order.q0; });
  if (s.front().decomposition) {
    auto& d = a.decomposition.emplace();
    for (int k = 0; k < 3; ++k) {
      auto piece = [&](double DecompositionPieces<double>::*f) {
        return over_seeds(s, [&](const auto& m) { return m.decomposition->protocol[k].*f; });
      };
      d.protocol[k] = {piece(&DecompositionPieces<double>::algo),
                       piece(&DecompositionPieces<double>::excess),
                       piece(&DecompositionPieces<double>::span),
                       piece(&DecompositionPieces<double>::null),
                       piece(&DecompositionPieces<double>::cross)};
    }
    d.fit_e = over_seeds(s, [](const auto& m) { return m.decomposition->fit_e; });
    d.fit_e_nu = over_seeds(s, [](const auto& m) { return m.decomposition->fit_e_nu; });
    std::vector<double> null_fit;
    for (const auto& m : s)
      if (m.decomposition->fit_e_nu_null) null_fit.push_back(*m.decomposition->fit_e_nu_null);
    if (!null_fit.empty()) d.fit_e_nu_null = numerics::estimate(null_fit);
    d.rank_S = over_seeds(s, [](const auto& m) { return m.decomposition->rank_S; });
  }
  if (s.front().distribution) {
    auto& dist = a.distribution.emplace();
    for (int k = 0; k < 3; ++k) {
      dist[k].var_ratio = over_seeds(s, [k](const auto& m) { return (*m.distribution)[k].var_ratio; });
      dist[k].std_mean = over_seeds(s, [k](const auto& m) { return (*m.distribution)[k].std_mean; });
      dist[k].std_var = over_seeds(s, [k](const auto& m) { return (*m.distribution)[k].std_var; });
      for (std::size_t b = 0; b < (*s.front().distribution)[k].histogram.size(); ++b)
        dist[k].histogram.push_back(
            over_seeds(s, [k, b](const auto& m) { return (*m.distribution)[k].histogram[b]; }));
    }
  }
  a.cg_iterations = over_seeds(s, [](const auto& m) { return m.cg_iterations; });
  a.cg_relative_residual = over_seeds(s, [](const auto& m) { return m.cg_relative_residual; });
  a.data_seconds = over_seeds(s, [](const auto& m) { return m.data_seconds; });
  a.train_seconds = over_seeds(s, [](const auto& m) { return m.train_seconds; });
  a.seed_seconds = over_seeds(s, [](const auto& m) { return m.seed_seconds; });
}

// A warning per ratio the integer sizes move by more than kSizingWarning (docs/simulation.md
// §13.1).
void note_sizing(const SimulationResult& res, std::vector<std::string>& notes) {
  for (const SizedRatio& s : res.sizing) {
    const double change = s.relative_change();
    if (!(std::abs(change) > kSizingWarning)) continue;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "warning: at D = %d the integer sizes move %s from %.6g to %.6g (%+.1f%%); the "
                  "theory is compared at the simulated ratios",
                  res.sizes.D, s.name.c_str(), s.nominal, s.simulated, 100 * change);
    notes.push_back(buf);
  }
}

// The theory at the simulated ratios and the finite-D prediction at o.dim for
// SimOptions::solve_theory (notes say why there is none).
void solve_theory(const theory::Params& given, SimOptions& o, SimulationResult& res) {
  try {
    res.finite_dim = theory::solve_finite_dim(given, finite_dim_options(o));
    if (res.finite_dim->converged() && !res.finite_dim->valid())
      res.notes.push_back("note: the finite-D prediction is " + res.finite_dim->validity.reason);
  } catch (const InvalidParams& e) {
    res.notes.push_back(std::string("note: no finite-D prediction at this point (") + e.what() +
                        ")");
  }
  const theory::Params& p = res.simulated;
  try {
    const bool ridgeless = ridgeless_point(p);
    if (!ridgeless) p.validate_for_saddle_point();
    res.theory = theory::solve(p, {.method = ridgeless ? theory::Method::Letey
                                                       : theory::Method::Saddle});
    if (!res.theory->converged()) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "warning: theory did not converge (residual %.3g); no decomposition",
                    res.theory->residual_norm);
      res.notes.push_back(buf);
    } else {
      o.theory = theory_ref(*res.theory);
    }
  } catch (const InvalidParams& e) {
    res.notes.push_back(std::string("note: no theory at this point (") + e.what() + ")");
  }
}

}  // namespace

SimOptions SimOptions::standalone() {
  SimOptions o;
  o.solve_theory = true;
  o.prediction_prompts = 2000;
  return o;
}

void SimOptions::validate() const {
  if (dim < 2 || dim > 2000)
    throw InvalidParams("dim", "must be in [2, 2000], got " + std::to_string(dim));
  if (seeds < 1) throw InvalidParams("seeds", "must be >= 1, got " + std::to_string(seeds));
  numerics::check_threads(threads, false);
  if (solver == Solver::Direct && dim > 40)
    throw InvalidParams("solver", "direct (dense D^2 x D^2) needs dim <= 40, got " +
                                      std::to_string(dim));
  cg().validate();
  if (prediction_prompts < 0)
    throw InvalidParams("prediction_prompts", "must be >= 0, got " +
                                                  std::to_string(prediction_prompts));
  if (histogram_bins < 2)
    throw InvalidParams("histogram_bins", "must be >= 2, got " + std::to_string(histogram_bins));
  if (bayes_prompts < 0)
    throw InvalidParams("bayes_prompts", "must be >= 0, got " + std::to_string(bayes_prompts));
  switches.validate();
  if (switches.gaussian_context && sampler != Sampler::Factorized)
    throw InvalidParams("gaussian_context", "needs the factorized sampler");
}

void SimOptions::validate(const theory::Params& p) const {
  validate();
  p.validate();
  check_odg_kind(p, odg);
  if (p.test_overlap && *p.test_overlap != 1) {
    const Sizes n = sizes(p, dim);
    if (n.r == n.D)
      throw InvalidParams("test_overlap", "at D = " + std::to_string(dim) + " the task rank "
                          "round(rho D) is D: there is no complement for the energy 1 - C");
  }
  const Sizes n = sizes(p, dim);
  if (p.lambda == 0.0 && (long long)n.N < (long long)n.D * n.D && !min_norm)
    throw InvalidParams("lambda", "lambda = 0 with N = " + std::to_string(n.N) + " < D^2 = " +
                                      std::to_string((long long)n.D * n.D) +
                                      " sequences (tau < 1): Gamma is not unique; use lambda > 0"
                                      " or the minimum-norm option");
}

double SimOptions::memory_bytes(const theory::Params& p) const {
  const Sizes n = sizes(p, dim);
  const double N = n.N, D = n.D, d8 = sizeof(double);
  // Per seed (data.cpp, training.cpp, detail/normal_kernel.hpp): the queries X and context
  // estimates Sm (N x D each); CG adds the blocked products' work space (a block of rows per
  // thread and a D x D partial per lane, one operator for the right-hand side and the
  // iterations); the direct solver instead the N x D^2 features (twice for the minimum-norm
  // decomposition's copy) and the D^2 x D^2 normal matrix. Then the labels and task indices, the tasks W (D x M0),
  // and about twenty D x D matrices (Gamma and the CG vectors, the preconditioner's
  // eigenvectors, the test moments, Sigma and its root).
  double seed = 2 * N * D * d8 + N * (d8 + sizeof(int)) + D * n.M0 * d8 + 20 * D * D * d8;
  if (solver == Solver::CG) {
    seed += detail::BlockedNormalOperator::work_bytes(D, threads_per_seed());
  } else {
    const double P = D * D;
    seed += (min_norm && p.lambda == 0 ? 2 : 1) * N * P * d8 + P * P * d8;
  }
  return std::min(threads, seeds) * seed;
}

CgOptions SimOptions::cg() const {
  CgOptions c;
  c.tolerance = cg_tolerance;
  c.max_iterations = cg_max_iterations;
  c.min_norm = min_norm;
  c.threads = threads_per_seed();
  return c;
}

int SimOptions::threads_per_seed() const { return std::max(1, threads / std::min(threads, seeds)); }

theory::FiniteDimOptions finite_dim_options(const SimOptions& so) {
  theory::FiniteDimOptions fo;
  fo.dim = so.dim;
  fo.switches = so.switches;
  return fo;
}

bool ridgeless_point(const theory::Params& p) { return p.on_ridgeless_branch() && p.tau < 1; }

TheoryRef theory_ref(const theory::Solution& s) { return TheoryRef{s.z, s.e, s.nu}; }

SeedMeasurement run_seed(const theory::Params& p, const SimOptions& o, std::uint64_t seed,
                         const numerics::Progress& cg_progress) {
  check_odg_kind(p, o.odg);
  const auto t0 = Clock::now();
  Rng rng(seed);
  const Dataset d = generate(p, o.dim, rng, o.sampler, o.switches);
  SeedMeasurement m;
  m.seed = seed;
  m.data_seconds = seconds_since(t0);
  CgOptions cg = o.cg();
  cg.progress = cg_progress;
  const RidgeFit fit = o.solver == Solver::CG ? train_cg(d, p.lambda, cg)
                                              : train_direct(d, p.lambda, o.min_norm);
  m.status = fit.status;
  m.message = fit.message;
  const MatrixXd& G = fit.Gamma;
  const PerProtocol<MatrixXd> C = test_task_moments(d, o.odg, rng);
  m.error = test_errors(G, C, d.n.Lt, p.sigma_test);
  if (d.shift_covariance.size() > 0)
    m.shift = exact_error(G, d.shift_covariance, d.n.Lt, p.sigma_test);
  if (o.bayes_prompts > 0) {
    Rng bayes_rng(numerics::derive_seed(seed, "bayes_tm"));
    m.bayes_tm = dmmse_tm_error(d, d.n.Lt, p.sigma_test, o.bayes_prompts, bayes_rng);
  }
  m.order = order_parameters(G, d, C.tm);
  if (o.theory) {
    auto dm = measure_decomposition(G, d, C, *o.theory, p.sigma_test, o.odg, o.sampler,
                                    o.prediction_prompts, o.histogram_bins, rng);
    m.decomposition = std::move(dm.decomposition);
    m.distribution = std::move(dm.distribution);
  }
  m.cg_iterations = fit.iterations;
  m.cg_relative_residual = fit.residual_norm;
  m.train_seconds = fit.seconds;
  m.seed_seconds = seconds_since(t0);
  return m;
}

SimulationResult run(const theory::Params& p, const SimOptions& options,
                     const numerics::Progress& progress) {
  options.validate(p);
  char what[160];
  std::snprintf(what, sizeof what, "a simulation at D = %d (N = %d sequences, %d seeds at once)",
                options.dim, sizes(p, options.dim).N, std::min(options.threads, options.seeds));
  const double memory = options.memory_bytes(p);
  numerics::check_fits_in_memory(memory, "dim", what);
  SimulationResult res;
  res.memory_estimate_bytes = memory;
  res.params = p;
  res.sizes = sizes(p, options.dim);
  res.simulated = simulated_params(p, options.dim);
  res.sizing = sized_ratios(p, options.dim);
  note_sizing(res, res.notes);
  SimOptions o = options;
  if (o.solve_theory && !o.theory) solve_theory(p, o, res);
  res.options = o;

  std::vector<SeedMeasurement> seeds(o.seeds);
  std::vector<std::exception_ptr> errors(o.seeds);
  std::atomic<int> next{0};
  std::atomic<bool> cancelled{false};  // progress threw: stop taking seeds, keep the finished
  std::mutex report;
  std::size_t done = 0;
  auto worker = [&] {
    for (int k; !cancelled && (k = next.fetch_add(1)) < o.seeds;) {
      // The seed's CG iterations as a stage of their own; a stop request from them lets the
      // seed finish (the seeds in progress finish) and takes no new one.
      numerics::Progress cg_progress;
      if (progress)
        cg_progress = [&, k](std::size_t done, std::size_t total, const std::string& what) {
          std::lock_guard<std::mutex> lock(report);
          if (cancelled) return;
          try {
            progress(done, total, "seed " + std::to_string(k) + " " + what);
          } catch (...) {
            cancelled = true;
          }
        };
      try {
        seeds[k] = run_seed(p, o, numerics::derive_seed(o.base_seed, std::uint64_t(k)),
                            cg_progress);
      } catch (...) {
        errors[k] = std::current_exception();
      }
      if (!progress) continue;
      std::lock_guard<std::mutex> lock(report);
      if (cancelled) break;
      try {
        progress(++done, std::size_t(o.seeds), "seed");
      } catch (...) {  // the request to stop (its exception is the caller's, e.g. Ctrl-C)
        cancelled = true;
      }
    }
  };
  const int nt = std::min(o.threads, o.seeds);
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  // Every seed a worker took has finished (a worker stops between seeds): the taken ones are
  // the prefix 0 .. taken - 1, whatever the number of threads.
  const int taken = std::min(next.load(), o.seeds);
  for (int k = 0; k < taken; ++k)
    if (errors[k]) std::rethrow_exception(errors[k]);
  if (taken < o.seeds) seeds.resize(taken);

  const int nb = std::max(2, o.histogram_bins);
  for (int b = 0; b <= nb; ++b) res.histogram_edges.push_back(-4.0 + 8.0 * b / nb);
  int failed = 0;
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    res.residual_norm = std::max(res.residual_norm, seeds[k].cg_relative_residual);
    if (seeds[k].status == numerics::Status::Converged) continue;
    if (failed++ == 0) {
      res.status = seeds[k].status;
      res.message = "seed " + std::to_string(k) + ": " + seeds[k].message;
    }
  }
  if (failed > 1) res.message += " (and " + std::to_string(failed - 1) + " more seeds)";
  if (failed == 0 && taken < o.seeds) {
    res.status = numerics::Status::Interrupted;
    res.message = "interrupted after " + std::to_string(taken) + " of " +
                  std::to_string(o.seeds) + " seeds: the estimates are over these seeds";
  }
  // A run with a failed seed reports no aggregates (they stay NaN); per_seed keeps the values.
  // An interrupted one aggregates the finished seeds (none: NaN).
  if (failed == 0 && !seeds.empty()) aggregate(seeds, res);
  res.per_seed = std::move(seeds);
  res.peak_resident_bytes = double(numerics::peak_resident_bytes());
  return res;
}

LowRankSimulator::LowRankSimulator(theory::Params p, SimOptions o)
    : p_(std::move(p)), o_(std::move(o)) {
  o_.validate(p_);
}

SimulationResult LowRankSimulator::run(const numerics::Progress& progress) const {
  return lowrank::run(p_, o_, progress);
}

}  // namespace icl::verify::lowrank
