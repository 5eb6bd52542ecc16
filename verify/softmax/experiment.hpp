// The softmax-attention check as library entries (docs/softmax.md): options, typed results and
// run() for one parameter point, a set of points (the figure's alpha x rho grid) and a rho sweep.
// The CLI (`icl softmax`) and paper_figs call these and the serializers of
// verify/softmax/serialize.hpp; the procedure lives here only.
//
// Procedure of one point: for seed k = 0..seeds-1 (seed numerics::derive_seed(base_seed, k)),
// generate the pretraining data, initialize and train the model (full-batch Adam, the authors'
// stopping rule), evaluate it on fresh TM/IDG/ODG prompts (run_seed); then the mean and s.e.
// over seeds. With compare_linear, the linear-attention replica theory and the linear simulator
// (same D, seeds, base seed, assignment, ODG kind) at the same point (docs/softmax.md §6).
//
// Convergence: each seed's training carries a numerics::Status (TrainLog: Converged when the
// |loss change| < tol rule stopped it, NotConverged when the epoch cap did, with the last loss
// change as residual_norm). This is the authors' protocol, in which most runs of the paper's
// setting reach the cap (docs/softmax.md §4): the test errors of a model trained to the cap are
// still measurements of that trained model, so they are reported (never NaN'd), together with
// the counts of seeds that met and did not meet the rule and the point's status.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/statistics.hpp"
#include "numerics/status.hpp"
#include "theory/lowrank.hpp"
#include "theory/params.hpp"
#include "verify/lowrank/measure.hpp"
#include "verify/softmax/softmax.hpp"

namespace icl::verify::softmax {

struct SoftmaxOptions {
  int dim = 20;                      // token dimension D, >= 2
  int seeds = 5;                     // independent seeds, >= 1
  std::uint64_t base_seed = 20251;   // seed k is numerics::derive_seed(base_seed, k)
  int threads = 2;                   // worker threads over (point, seed), >= 1; results do not depend on it
  int attn_dim = 4;                  // attention (query/key) dimension d, 1..1000 (docs/softmax.md §2)
  Init init = Init::Glorot;          // docs/softmax.md §3
  TrainOptions train;  // lr in [1e-12, 10], max_epochs 1..10^7, tol in [0, 1], betas in [0, 1), eps > 0
  int test_prompts = 3000;           // fresh prompts per protocol (the authors' n_test), 1..10^7
  verify::lowrank::Assignment assignment = verify::lowrank::Assignment::Random;
  verify::lowrank::OdgKind odg = verify::lowrank::OdgKind::Isotropic;
  bool compare_linear = true;        // also the linear theory and the linear simulator
  // Throws InvalidParams naming the field ("dim", "seeds", "threads", "attn_dim", "prompts",
  // "lr", "epochs", "tol", "betas", "eps").
  void validate() const;
};
// The options and a parameter point together: p.validate(), the paper's low-rank tasks only
// (InvalidParams("task_spectrum")), the ODG kind applicable at p, and options.validate().
void validate(const theory::Params& p, const SoftmaxOptions& o);

// The three test protocols (docs/model.md §2.1), in this order everywhere.
using verify::lowrank::kProtocols;  // "tm", "idg", "odg"
template <class T>
using ByProtocol = verify::lowrank::PerProtocol<T>;  // tm, idg, odg; [k] in kProtocols order

// One seed (docs/softmax.md §5). Test prompts: L_t = round(alpha_test D) pairs, noise
// sigma_test; TM picks one of the M0 training tasks uniformly, IDG a fresh sqrt(D/r) A v, ODG
// N(0, I_D) (or low rank in an independent Haar subspace with OdgKind::Subspace).
struct SeedResult {
  std::uint64_t seed = 0;
  ByProtocol<double> error;  // test MSE against the noisy query label (includes sigma_test^2)
  ByProtocol<double> zero;   // MSE of the zero predictor on the same prompts (mean y_q^2)
  TrainLog training;         // epochs, status / residual_norm / message, losses, seconds (no history)
  double seconds = 0;        // the whole seed: data, training, evaluation
};

// Training facts of a point over its seeds.
struct TrainingSummary {
  numerics::Estimate epochs;
  int epochs_min = 0, epochs_max = 0;
  numerics::Estimate initial_loss, final_loss;
  int converged = 0;          // seeds whose training met the |loss change| < tol rule
  int not_converged = 0;      // seeds stopped by the epoch cap
  int failed = 0;             // seeds whose loss became non-finite
};

// The linear-attention comparisons at the same point (empty without compare_linear).
struct LinearComparison {
  // The replica theory (D -> infinity) when it applies (lambda > 0 or tau > 1); its own status
  // says whether the saddle point converged. theory_note says why it is absent.
  std::optional<theory::Solution> theory;
  std::string theory_note;
  // The linear simulator's test errors (mean, s.e. over the same seeds); simulation_note says
  // why they are absent.
  std::optional<ByProtocol<numerics::Estimate>> simulation;
  std::string simulation_note;
};

struct PointResult {
  theory::Params params;
  std::vector<SeedResult> seeds;        // seed k of the run at index k
  ByProtocol<numerics::Estimate> error;  // over seeds, every seed counted (see the top of the file)
  ByProtocol<numerics::Estimate> zero;
  TrainingSummary training;
  numerics::Estimate seed_seconds;
  LinearComparison linear;
  // Converged: every seed met the stopping rule; NotConverged: some reached the epoch cap;
  // NumericalFailure: some loss became non-finite. residual_norm: the largest last
  // |loss change| over the seeds.
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  double residual_norm = 0;
};

// One point.
struct SoftmaxResult {
  SoftmaxOptions options;
  PointResult point;
  double softmax_seconds = 0;  // wall time of the softmax runs
  double linear_seconds = 0;   // wall time of the linear comparisons
};
// A sweep over rho at the other parameters of `base`.
struct SweepResult {
  SoftmaxOptions options;
  theory::Params base;
  std::vector<double> rhos;
  std::vector<PointResult> points;  // one per rho
  double softmax_seconds = 0;
  double linear_seconds = 0;
};

// One seed: data, initialization, training, evaluation on fresh prompts (no validation: the
// entries below validate).
SeedResult run_seed(const theory::Params& p, const SoftmaxOptions& o, std::uint64_t seed);

// Several points with the same seeds (seed k of every point is derive_seed(base_seed, k)); all
// (point, seed) runs share one pool of o.threads threads. Progress: stage "softmax seed" after
// each run, then (compare_linear) stage "linear" after each point's comparisons.
std::vector<PointResult> run(const std::vector<theory::Params>& points, const SoftmaxOptions& o,
                             const numerics::Progress& progress = {});
// One point.
SoftmaxResult run(const theory::Params& p, const SoftmaxOptions& o,
                  const numerics::Progress& progress = {});
// A sweep over rho at the other parameters of `base`: rho in (0, 1] for every value
// (InvalidParams("rho") otherwise), at least one value.
SweepResult run(const theory::Params& base, const std::vector<double>& rhos,
                const SoftmaxOptions& o, const numerics::Progress& progress = {});

}  // namespace icl::verify::softmax
