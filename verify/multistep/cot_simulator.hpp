// The finite-D simulator of the test-time iteration (docs/multistep_simulation.md), the
// independent judge of theory/cot.hpp. One seed:
//
//   pretraining  M = round(tau D) tasks w ~ N(0, I_D), each with a fresh context X (D x L,
//                columns x ~ N(0, I_D/D), L = round(alpha D)) and labels y = X^T w + sigma eps;
//                b = (D/L) X y (drawn factorized by default: CotSimOptions::direct_pretraining);
//                A = (sum w b^T) (sum b b^T + (M lambda/2) I)^{-1}, the ridge solution of
//                (1/M) sum |w - A b|^2 + (lambda/2) |A|_F^2 (Cholesky).
//   test         test_tasks fresh tasks w with fresh contexts X, noise-free labels, S = (D/L) X X^T;
//                e_0 = w, e_{t+1} = (I - A S) e_t (the same S at every step), i.e. the iterate
//                w_t = w - e_t of w_{t+1} = w_t - A S (w_t - w) from w_0 = 0;
//                E_t = |e_t|^2 / D, t = 0..steps.
//
// Statistics over seeds (StepStatistics): mean = the average of the per-seed means of E_t,
// sem = the standard deviation of the per-seed means / sqrt(seeds) (NaN for one seed: the
// pretraining's randomness is only sampled across seeds, so the spread within a seed would
// understate it), median = the median of E_t over all test tasks of all seeds pooled (the
// typical task, not a per-seed quantity; the mean of two middle values for an even count).
//
// Seeds (numerics/seed.hpp): seed k of a run is derive_seed(seed, "cot", k); its pretraining task
// mu draws (w, then X and eps, or the factorized draw's a, eps, g) from
// derive_seed(seed_k, "pretraining", mu) and its test task j (w, X)
// from derive_seed(seed_k, "test", j). Seeds run in parallel, each on one thread with fixed block
// sizes, so the output is the same bits whatever the number of threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/progress.hpp"
#include "numerics/status.hpp"
#include "theory/cot.hpp"

namespace icl::verify::multistep {

struct CotSimOptions {
  int dim = 100;          // D >= 1 (bounded by the memory check only)
  int seeds = 4;          // >= 1
  int test_tasks = 1000;  // test tasks per seed, >= 1
  int steps = 30;         // T >= 0: E_t for t = 0..T
  int threads = 0;        // 0 = every core, else 1..numerics::kMaxThreads; seeds run in parallel
  std::uint64_t seed = 1; // the run's base seed
  // How a pretraining task's b = (D/L) X y is drawn: false (default) factorized, from 2 L + D
  // normals, exact in distribution (docs/multistep_simulation.md §2, as docs/simulation.md
  // §13.3); true: the D x L context X itself, D L normals. The two give different draws of the
  // same distribution (a test compares them).
  bool direct_pretraining = false;
  // Throws InvalidParams naming "dim", "seeds", "test_tasks", "steps" or "threads".
  void validate() const;
  // The peak memory of a simulation at p (the seeds that run at once, each with its D x D
  // matrices and its block of test contexts, and the E_t of every test task kept for the median);
  // simulate() refuses (InvalidParams "dim") a run that does not fit (numerics/memory.hpp).
  double memory_bytes(const theory::CotParams& p) const;
};

// E_t for t = 0..steps.
struct StepStatistics {
  std::vector<double> mean, sem, median;
};

struct CotSimResult {
  theory::CotParams params;
  CotSimOptions options;
  int context_length = 0;  // L = round(alpha D)
  int tasks = 0;           // M = round(tau D) pretraining tasks
  StepStatistics error;    // E_t over seeds (NaN when a seed failed)
  std::vector<std::vector<double>> seed_means;  // [seed][t]: the seed's mean of E_t over its tasks
  // Per seed: the spectral radius of I - A S for the seed's first test task's S (> 1: a
  // direction of that context grows under the iteration); NaN when the seed failed.
  std::vector<double> spectral_radius;
  numerics::Status status = numerics::Status::Converged;
  // Empty when converged; else "seed k: <why>" for the first failed seed, e.g. the singular
  // pretraining Gram matrix of tau < 1 with lambda = 0 (NumericalFailure).
  std::string message;
  double seconds = 0;  // wall clock of simulate()
  bool converged() const { return status == numerics::Status::Converged; }
};

// Validates p (CotParams::validate: any tau > 0, any lambda >= 0) and o, the sizes (L >= 1 and
// M >= 1, InvalidParams "alpha" / "tau" otherwise) and the memory, then simulates.
// progress(done, seeds, "seed") after each seed; an exception it throws stops the run (no new
// seed starts) and is rethrown here.
CotSimResult simulate(const theory::CotParams& p, const CotSimOptions& o,
                      const numerics::Progress& progress = {});

// {"dim", "seeds", "test_tasks", "context_length", "tasks", "seed", "mean", "sem", "median",
//  "spectral_radius", "seed_means", "status", "message"}; NaN is null.
nlohmann::ordered_json to_json(const CotSimResult& r);
// The text of `icl cot --simulate`: a header line, then t, mean, sem, median per step and the
// spectral radii.
std::string to_text(const CotSimResult& r);

}  // namespace icl::verify::multistep

namespace icl::verify::multistep {

// Theory next to simulation: what `icl cot --simulate` and Python's cot(simulate=True) run. The
// theory runs when its conditions hold (tau > 1 and lambda = 0), with its finite-D prediction
// (theory::CotOptions::finite_dim) at the simulated dimension unless the options ask for another;
// the simulation runs with steps = theory.steps. Both are validated before any work.
struct CotComparison {
  bool has_theory = false;
  theory::CotResult theory;
  CotSimResult simulation;
};
CotComparison compare(const theory::CotParams& p, theory::CotOptions theory_options,
                      CotSimOptions sim_options, const numerics::Progress& progress = {});
// The theory's JSON (theory::to_json(CotResult)) or, without it, {"params": ...}, plus
// "simulation": to_json(CotSimResult).
nlohmann::ordered_json to_json(const CotComparison& c);

}  // namespace icl::verify::multistep
