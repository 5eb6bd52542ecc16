// The finite-D simulator of linear attention trained on low-rank regression tasks, the
// independent judge of the replica theory (docs/simulation.md §13). One seed = data (data.hpp),
// training (training.hpp), measurements (measure.hpp); a simulation aggregates seeds into a
// typed SimulationResult with mean and standard error per quantity and a status.
//
//   prediction x_q^T Gamma s; Gamma = argmin sum_n (y_n - x_n^T Gamma s_n)^2 + lambda M0 |Gamma|_F^2.
//
// Everything is seeded (std::mt19937_64); seed k of a run is numerics::derive_seed(base_seed, k)
// only, so results do not depend on the number of threads.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/seed.hpp"
#include "numerics/statistics.hpp"
#include "numerics/status.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "theory/params.hpp"
#include "verify/lowrank/data.hpp"
#include "verify/lowrank/measure.hpp"
#include "verify/lowrank/training.hpp"

namespace icl::verify::lowrank {

struct SimOptions {
  int dim = 60;                    // token dimension D, 2..2000
  int seeds = 5;                   // independent seeds, >= 1
  std::uint64_t base_seed = 20251; // seed k is derive_seed(base_seed, k)
  // Worker threads, >= 1 (results do not depend on it): min(threads, seeds) seeds run at once,
  // each training on threads_per_seed() of them (docs/simulation.md §13.4).
  int threads = 2;
  OdgKind odg = OdgKind::Isotropic;  // Subspace only for low-rank tasks (no task_spectrum)
  Sampler sampler = Sampler::Factorized;
  Solver solver = Solver::CG;        // Direct needs dim <= 40
  double cg_tolerance = CgOptions{}.tolerance;          // in (0, 1), see CgOptions
  int cg_max_iterations = CgOptions{}.max_iterations;   // >= 1
  // lambda = 0 with N < D^2 is rejected unless this is set; then the minimum-norm solution is
  // computed (unpreconditioned CG from zero / complete orthogonal decomposition).
  bool min_norm = false;
  std::optional<TheoryRef> theory;  // enables the decomposition and prediction distribution
  // Without `theory`: solve the theory at this point (the ridgeless Letey/Lu branch when
  // ridgeless_point(p)) and use it; SimulationResult::theory holds it, `notes` says why not.
  bool solve_theory = false;
  int prediction_prompts = 0;  // >= 0 fresh test prompts per protocol for the distribution
  int histogram_bins = 16;     // >= 2, standardized residuals on [-4, 4]
  // > 0: TM's Bayes-optimal (dMMSE) baseline by Monte Carlo on this many fresh prompts per seed
  // (docs/errors_phases.md §17.4), from its own random stream derive_seed(seed, "bayes_tm").
  int bayes_prompts = 0;
  // Finite-D sources switched off (docs/simulation.md §13.7); the default is the paper's data.
  // Each keeps the D -> infinity theory unchanged.
  FiniteDSwitches switches;

  // The options of a simulation at one point next to its theory (icl simulate, Python
  // simulate()): the theory solved there (decomposition, distribution) and 2000 fresh prompts
  // per protocol for the distribution of predictions.
  static SimOptions standalone();

  void validate() const;  // the fields alone; InvalidParams naming the field
  // The fields and their combination with p: p.validate(), odg (Subspace with a task_spectrum),
  // lambda (0 with N < D^2 without min_norm).
  void validate(const theory::Params& p) const;
  CgOptions cg() const;  // the CG options of one seed's training (with threads_per_seed())
  int threads_per_seed() const;  // threads / min(threads, seeds), at least 1
  // The memory a simulation of p holds at its peak, in bytes (docs/simulation.md §13.9): the
  // arrays of the min(threads, seeds) seeds that run at once (N x D queries and context
  // estimates with the CG's N x D work arrays, or the dense N x D^2 features of the direct
  // solver, and the D x D matrices). run() refuses (InvalidParams "dim") a simulation that does
  // not fit in the available memory (numerics::available_memory).
  double memory_bytes(const theory::Params& p) const;
};

// The finite-D theory's options that mirror a simulation's (docs/simulation.md §13.7,
// docs/finite_dim.md §21): its dimension and switches (a source the simulation removes is
// predicted as 0, so the prediction is that of what is simulated).
theory::FiniteDimOptions finite_dim_options(const SimOptions& so);

// A simulated ratio further than this (relative) from the one given is a warning in
// SimulationResult::notes (docs/simulation.md §13.1): the comparison is then with the theory at
// the simulated ratios, which differs from the theory at the given ones.
inline constexpr double kSizingWarning = 0.01;

// One seed's measurements with the training's convergence status.
struct SeedMeasurement : Measurements<double> {
  std::uint64_t seed = 0;  // derive_seed(base_seed, k)
  numerics::Status status = numerics::Status::Converged;
  std::string message;
};

// A simulation: mean and standard error over seeds of every measured quantity. When a seed's
// training did not converge, status is NotConverged, message names the seed and its residual,
// and the aggregates are left NaN (per_seed keeps what was measured). When the run was asked to
// stop (progress threw), status is Interrupted and everything is over the finished seeds.
struct SimulationResult : Measurements<numerics::Estimate> {
  theory::Params params;     // as given
  theory::Params simulated;  // the ratios of the integer sizes (simulated_params)
  std::vector<SizedRatio> sizing;  // sized_ratios(params, dim): given next to simulated
  SimOptions options;
  Sizes sizes;
  numerics::Status status = numerics::Status::Converged;
  std::string message;
  double residual_norm = 0;  // the largest relative CG residual over seeds
  // options.memory_bytes(params), and the process's largest resident set at the end of run()
  // (numerics::peak_resident_bytes: the simulation's peak when it is the process's main work).
  double memory_estimate_bytes = 0, peak_resident_bytes = 0;
  // With options.solve_theory: the theory at `simulated` (not at `params`: the comparison is at
  // the sizes simulated) and the finite-D prediction at options.dim (solve_finite_dim of
  // `params` with finite_dim_options; absent where the finite-D theory does not apply).
  std::optional<theory::Solution> theory;
  std::optional<theory::FiniteDimResult> finite_dim;
  // e.g. "no theory at this point (...)", "warning: at D = 20 the integer sizes move rho ..."
  std::vector<std::string> notes;
  std::vector<double> histogram_edges;     // histogram_bins + 1 edges on [-4, 4]
  std::vector<SeedMeasurement> per_seed;
  bool converged() const { return status == numerics::Status::Converged; }
  // The aggregates are values: converged, or interrupted after at least one seed.
  bool has_estimates() const {
    return (converged() || status == numerics::Status::Interrupted) && !per_seed.empty();
  }
};

// lambda = 0 and tau < 1: compared as minimum-norm simulation vs the ridgeless Letey/Lu theory.
bool ridgeless_point(const theory::Params& p);
TheoryRef theory_ref(const theory::Solution& s);

// One full seed: data, training, measurements (validates o against p).
// cg_progress: the seed's CG iterations (CgOptions::progress).
SeedMeasurement run_seed(const theory::Params& p, const SimOptions& o, std::uint64_t seed,
                         const numerics::Progress& cg_progress = {});

// The simulation at one point: seeds spread over o.threads std::threads; progress(done, seeds,
// "seed") after each seed. Throws InvalidParams for invalid options. The progress function may
// throw to stop the run (Ctrl-C in the CLI or in Python): no further seed starts, the running
// ones finish, and the result holds the finished seeds (seeds 0 .. k-1, whatever the number of
// threads) with status Interrupted; the exception itself is dropped (the caller knows why it
// threw).
SimulationResult run(const theory::Params& p, const SimOptions& o,
                     const numerics::Progress& progress = {});

// The same as an object (validates on construction).
class LowRankSimulator {
 public:
  LowRankSimulator(theory::Params p, SimOptions o);
  SimulationResult run(const numerics::Progress& progress = {}) const;
  const theory::Params& params() const { return p_; }
  const SimOptions& options() const { return o_; }

 private:
  theory::Params p_;
  SimOptions o_;
};

}  // namespace icl::verify::lowrank
