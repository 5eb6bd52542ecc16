// The experiments of `icl patch check|dynamics|thought|align|train`, `icl_theory.patch_check`,
// `icl_theory.patch_dynamics` and figures 8-12, 17, each in one place (docs/patch.md §14.1): an
// Options struct whose default member initializers are the defaults of every front end (valid
// ranges documented per field; validate() throws icl::InvalidParams naming the field), an
// overloaded entry run(options, progress) and a typed result that holds its options whole and
// carries a numerics::Status. Serializers (to_json, to_text, to_table): verify/patch/serialize.hpp.
//
// Seeds: an experiment has one `base_seed`; its random streams are
// numerics::derive_seed(base_seed, "weights") (random initialisation), "prompts" (evaluation
// prompts), "training" (TrainOptions::base_seed of a --train-steps run), "control-model" (the
// model of the negative controls), "calibration" k (thought-patch queries of context k),
// "random-weights" (the alignment's random-weight control).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/statistics.hpp"
#include "numerics/status.hpp"
#include "verify/patch/align_protocols.hpp"
#include "verify/patch/model.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/train.hpp"

namespace icl::verify::patch {

// Training before an experiment (--train-steps): `training.steps` = 0 means none. The
// experiment sets training.d from its model, training.base_seed from its "training" stream, and
// training.n_ctx = the experiment's context when training.n_ctx is 0.
TrainOptions default_pretraining();  // TrainOptions with steps 0, n_ctx 0, no patched-loss track

// What the results of check, thought and align start with: a status and its message, the
// options the experiment ran with, the model it ran on (after any training) and that training.
template <class Options>
struct ModelResult {
  numerics::Status status = numerics::Status::Converged;
  std::string message;
  Options options;
  Weights<double> model;
  std::optional<TrainResult> training;  // --train-steps > 0
};

enum class Precision { Double, Float };
std::string to_string(Precision p);
Precision precision_from_string(const std::string& s);  // "double" | "float"; InvalidParams

// ---- check (docs/patch.md §3-§8, §12) -------------------------------------------------------
struct CheckOptions {
  ModelSource model;
  std::uint64_t base_seed = 1;
  TrainOptions training = default_pretraining();
  int context = 50;        // context pairs n, >= 1
  int prompts = 1;         // prompts, >= 1
  int pos = -1;            // position whose output is matched, in [-1, context] (-1: the query)
  int chunk_begin = -1;    // also remove context tokens [chunk_begin, chunk_end) (one block);
  int chunk_end = -1;      //   -1: no chunk. 0 <= begin <= end <= context
  double tol = 1e-10;      // identity holds when max_rel_diff <= tol, > 0
  PatchMode mode = PatchMode::Full;     // the patch of the main identity
  Precision precision = Precision::Double;
  int patch_layers = -1;   // leading blocks patched (-1: all), >= -1
  // Also run the variants (bias-only, bias-free, chunk; norm-scale for post-norm blocks), the
  // float32 pass and the negative controls (weight-only with a residual stream, first block
  // only; gate-only for gated MLPs). When the model cannot
  // show a control (plain blocks, one block), it runs on a control model: Pre-LN, width 32 with
  // an embedding, max(layers, 4) blocks, seeded by the "control-model" stream.
  bool controls = true;
  void validate() const;
  int position() const { return pos < 0 ? context : pos; }  // the position matched
};
struct NegativeControl {
  Diff diff;
  bool given_model = true;  // false: ran on the control model
  std::string model;        // "given" or "control (Pre-LN, 32 wide, L layers)"
};
// status: CheckFailed when an identity fails (main, variants, norm-scale too, and chunk within
// tol, no degenerate anchor), else Converged.
struct CheckResult : ModelResult<CheckOptions> {
  bool passed() const { return status == numerics::Status::Converged; }
  Diff diff;                           // main identity, max over prompts
  int rank = 0;                        // largest numerical rank of a dW1
  double sigma2_over_sigma1 = 0;       // largest sigma2/sigma1 of a dW1
  int rank_gate = -1;                  // largest rank of a dWg (gated MLPs; -1: not gated)
  double sigma2_over_sigma1_gate = 0;
  int rank_last = -1;                  // largest rank of a dWL of the bias-free variant (-1: none)
  int degenerate_anchors = 0;
  std::vector<Diff> per_layer;         // first prompt
  double seconds_per_check = 0;
  // With options.controls:
  Diff float32, bias_only, bias_free;
  bool has_norm_scale = false;         // post-norm blocks: the norm-scale variant (docs/patch.md §16)
  Diff norm_scale;
  bool has_gate_only = false;          // gated MLPs: the gate-only negative control
  NegativeControl gate_only;
  bool has_chunk = false;              // options.chunk_begin >= 0
  int chunk_rank = 0;
  Diff chunk;
  NegativeControl weight_only, first_block_only;
  // Max over prompts of the representation after each block: double, float32, and the two
  // controls (the controls' size is the control model's depth when they ran on it).
  std::vector<Diff> per_layer_max, per_layer_float32_max, per_layer_first_only_max,
      per_layer_weight_only_max;
};
// Progress: (prompt, prompts, "prompt"), and training steps first when training.steps > 0.
CheckResult run(const CheckOptions& options, const numerics::Progress& progress = {});

// ---- dynamics (docs/patch.md §9) -----------------------------------------------------------
// One plain block (layers 1, no residual) with softmax/linear attention (spec.kind) and one with
// an Elman RNN, both random ("weights" stream) or loaded (model.weights / rnn_weights).
struct DynamicsOptions {
  ModelSource model;        // block plain (layers forced to 1 for a random model)
  std::string rnn_weights;  // RNN weights file (empty: random)
  std::uint64_t base_seed = 1;
  TrainOptions training = default_pretraining();  // steps > 0: measure again after training
  int context = 50;         // context pairs n, >= 2
  int prompts = 1;          // >= 1
  double tol = 1e-8;        // prefix and online-GD identities hold when max rel diff <= tol, > 0
  void validate() const;
};
struct DynamicsMeasure {
  double prefix_max_rel = 0, gd_max_rel = 0;
  double slope_mean_over_prompts = 0;
  double slope_of_mean_curve = 0, intercept_of_mean_curve = 0;
  std::vector<double> slopes;                 // per prompt
  int fit_from = 0;                           // fit over i in [fit_from, context]
  std::vector<numerics::Estimate> steps;      // ||dW_i - dW_{i-1}||_F, i = 1..n, over prompts
};
struct DynamicsModel {      // random, or loaded from DynamicsOptions::model.weights / rnn_weights
  ModelConfig config;
  DynamicsMeasure initial;
  std::optional<TrainResult> training;
  std::optional<DynamicsMeasure> trained;
};
struct DynamicsResult {
  numerics::Status status = numerics::Status::Converged;
  std::string message;
  DynamicsOptions options;
  DynamicsModel attention, rnn;
};
// The mean curve and fits of implicit_dynamics over `prompts` (fit from max(2, n/8));
// progress(k, prompts, "prompt") after each.
DynamicsMeasure measure_dynamics(const Weights<double>& w, const std::vector<Prompt>& prompts,
                                 const numerics::Progress& progress = {});
// Progress: per prompt for each model ("attention prompt", "rnn prompt"; after training steps,
// "attention trained prompt", ...).
DynamicsResult run(const DynamicsOptions& options, const numerics::Progress& progress = {});

// ---- thought patch (docs/patch.md §10) -------------------------------------------------------
// One block, plain or residual (with or without Pre-LN). For a fixed context C and calibration
// queries x_1..x_m, with u_C(x) / u_0(x) the MLP input at the query with / without the context
// (plain: A(C, x) / A(x); residual: H or LN2(H)):
//   a_j = u_0(x_j), r_j = W (u_C(x_j) - u_0(x_j)),
//   dW* = R Ac^T (Ac Ac^T + lam I)^{-1},  lam = ridge * tr(Ac Ac^T) / width.
// Residual blocks also get a static last-MLP-bias patch db2 = mean_j (H_C(x_j) - H_0(x_j)) over
// the calibration queries (docs/patch.md §5: the stream carries H_C - H_0 past the MLP). For
// m = 1 this is the exact per-query patch up to the ridge.
// Errors are mean squared differences (over queries and output coordinates) between the
// query-only model output and the full-context output.
struct ThoughtOptions {
  ModelSource model;        // one block (layers forced to 1 for a random model)
  std::uint64_t base_seed = 1;
  TrainOptions training = default_pretraining();
  int context = 50;         // context pairs, >= 1
  int prompts = 1;          // contexts, >= 1
  std::vector<int> m_values{1, 4, 16, 64, 256};  // calibration sizes, each >= 1, not empty
  int heldout = 256;        // held-out queries, >= 1
  double ridge = 1e-6;      // relative ridge, > 0
  void validate() const;
};
struct ThoughtRow {
  int m = 0;
  double train_err = 0, heldout_err = 0;          // ridge thought patch (dW*, + db2 if residual)
  double train_avg = 0, heldout_avg = 0;          // average of the m rank-1 patches (+ db2)
  double train_no_db2 = 0, heldout_no_db2 = 0;    // dW* alone (residual control; = *_err if plain)
  double heldout_none = 0;                        // no patch
  double db2_norm = 0;                            // ||db2|| (0 for plain blocks)
};
// One context (token_dim x n); queries (x, 0) with x ~ N(0, I_d) drawn from `query_seed`.
std::vector<ThoughtRow> thought_patch(const Weights<double>& w, const Mat<double>& context,
                                      const ThoughtOptions& o, std::uint64_t query_seed);
struct ThoughtSummary {     // over contexts
  int m = 0;
  numerics::Estimate train_err, heldout_err, train_avg, heldout_avg, heldout_none, train_no_db2,
      heldout_no_db2, db2_norm;
};
struct ThoughtResult : ModelResult<ThoughtOptions> {  // NumericalFailure: a non-finite error
  std::vector<std::vector<ThoughtRow>> per_prompt;
  std::vector<ThoughtSummary> summary;  // one per m
};
ThoughtResult run(const ThoughtOptions& options, const numerics::Progress& progress = {});
// On a given one-block model (figures share one trained model); ignores model and training.
ThoughtResult run(const Weights<double>& w, const ThoughtOptions& options,
                  const numerics::Progress& progress = {});

// ---- alignment with explicit fine-tuning (docs/patch.md §11) ----------------------------------
// cos_F between the implicit patch dW(C_i) of block 0 and explicit gradient updates of W1 on the
// same context examples, under the protocols of verify/patch/align_protocols.hpp (fullbatch,
// online, per-token), with two controls: mismatched prompts, and random weights.
struct AlignOptions {
  ModelSource model;        // one block (layers forced to 1 for a random model)
  std::uint64_t base_seed = 1;
  TrainOptions training = default_pretraining();
  int context = 50;         // context pairs, >= 1
  int prompts = 16;         // >= 1 (the mismatched control needs >= 2)
  std::vector<AlignProtocol> protocols = all_align_protocols();  // not empty, no repeats
  std::vector<int> steps{1, 2, 5, 10, 20, 50, 100};  // fullbatch SGD step counts, each >= 1
  double lr = 0.01;         // SGD learning rate (fullbatch and online), > 0
  // Also run every protocol on random weights of the same shape (stream "random-weights").
  bool random_control = true;
  void validate() const;
};
struct AlignResult : ModelResult<AlignOptions> {  // NumericalFailure: a non-finite cos_F
  bool trained = false;                // trained here or loaded (random weights: cos about 0)
  std::vector<AlignCurve> curves;      // one per protocol, in options order
};
AlignResult run(const AlignOptions& options, const numerics::Progress& progress = {});
AlignResult run(const Weights<double>& w, const AlignOptions& options,
                const numerics::Progress& progress = {});

// ---- train (docs/patch.md §13) ---------------------------------------------------------------
struct TrainRunOptions {
  ModelSource model;
  std::uint64_t base_seed = 1;         // "weights" and "training" streams
  TrainOptions training;               // d and base_seed are set from the model and base_seed
  void validate() const;
};
struct TrainRunResult {
  TrainRunOptions options;
  Weights<double> initial;             // the weights before training
  Weights<double> weights;             // the trained weights
  TrainResult training;                // status lives here (with the TrainOptions it ran with)
};
TrainRunResult run(const TrainRunOptions& options, const numerics::Progress& progress = {});

// Train `w` in place when o.steps > 0 (after filling d, base_seed and n_ctx as described above).
std::optional<TrainResult> pretrain(Weights<double>& w, TrainOptions o, std::uint64_t base_seed,
                                    int context, const numerics::Progress& progress);
// validate() of such options: steps >= 0 ("train_steps"), and the TrainOptions fields (n_ctx 0
// allowed), whether or not steps > 0.
void validate_pretraining(const TrainOptions& t);

}  // namespace icl::verify::patch
