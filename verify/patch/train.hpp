// Training on in-context linear regression (docs/patch.md §13): loss, hand-written backprop +
// Adam, and the patched-vs-context loss along training. The prompts: model/prompts.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/status.hpp"
#include "verify/patch/model.hpp"

namespace icl::verify::patch {

// Mean squared error (pred - target)^2 over the prompts; with `grad` (zero-initialised, same
// shapes) ADDS the gradient of that mean. Work is split over `threads` threads.
double batch_loss(const Weights<double>& w, const std::vector<Prompt>& batch,
                  Weights<double>* grad = nullptr, int threads = 1);
// Loss of the query-only model patched block by block from each prompt's context (§7, §13);
// max_rel receives the largest relative output difference to the full-context model.
double patched_loss(const Weights<double>& w, const std::vector<Prompt>& batch,
                    double* max_rel = nullptr);

// Adam: m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2, W -= lr mhat / (sqrt(vhat) + eps).
struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};
class Adam {
 public:
  Adam(const Weights<double>& shape, const AdamOptions& p);
  void step(Weights<double>& w, Weights<double>& grad);
 private:
  AdamOptions p_;
  int t_ = 0;
  Weights<double> m_, v_;
};

// Training options; validate() throws icl::InvalidParams naming the field.
struct TrainOptions {
  int d = 2;                  // input dimension, >= 1 (must be the model's token_dim - 1)
  int n_ctx = 50;             // context pairs per prompt, >= 1
  int batch = 64;             // prompts per step, >= 1
  int steps = 1000;           // Adam steps, >= 0
  AdamOptions adam{};         // adam.lr > 0
  double clip = 1.0;          // global gradient-norm clip, >= 0 (0: none)
  // Data: training batches from derive_seed(base_seed, "batches"), the fixed evaluation set
  // from derive_seed(base_seed, "eval").
  std::uint64_t base_seed = 1;
  int eval_every = 100;       // log/evaluate every N steps, >= 1
  int eval_prompts = 128;     // size of the fixed evaluation set, >= 1
  bool track_patch = true;    // also evaluate the patched query-only loss (docs/patch.md §13)
  int threads = 2;            // >= 1; results do not depend on it
  void validate() const;
};
struct TrainLogRow {
  int step = 0;
  double train_loss = 0;          // running mean since the last row
  double eval_loss = 0;           // with context
  double eval_loss_patched = 0;   // query-only model patched from the context
  double patch_max_rel = 0;       // largest relative output difference
};
// status: Converged when every logged loss is finite, NumericalFailure otherwise (message says
// at which step). There is no loss target, so a finished training is never NotConverged.
struct TrainResult {
  numerics::Status status = numerics::Status::Converged;
  std::string message;
  TrainOptions options;           // the options it ran with
  std::vector<TrainLogRow> log;
  double zero_loss = 0;           // mean target^2 on the evaluation set (zero predictor)
  double final_eval_loss = 0;
  double seconds = 0;
  double tokens_per_second = 0;   // training tokens processed per second
};
// Progress: (step, steps, "step") after each logged row.
TrainResult train(Weights<double>& w, const TrainOptions& p, const numerics::Progress& progress = {});

}  // namespace icl::verify::patch
