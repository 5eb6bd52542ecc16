// In-context linear regression: prompts, loss, hand-written backprop + Adam training, the
// patched-vs-context loss along training (spec 8 a), and alignment with explicit SGD (spec 7).
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "verify/patch/model.hpp"
#include "verify/patch/patch.hpp"

namespace icl::verify::patch {

// A regression prompt: tokens (x_i, y_i) in R^{d+1}, i = 1..n, then the query (x_q, 0);
// y = w . x with w ~ N(0, I_d), x ~ N(0, I_d). The prediction is the last coordinate of the
// model output at the query (last column).
struct Prompt {
  Mat<double> tokens;  // (d+1) x (n+1)
  double target = 0;   // w . x_q
  Vec<double> w;
};
Prompt make_prompt(int d, int n_ctx, std::mt19937_64& rng);
std::vector<Prompt> make_prompts(int d, int n_ctx, int count, std::uint64_t seed);

// Mean squared error (pred - target)^2 over the prompts; with `grad` (zero-initialised, same
// shapes) ADDS the gradient of that mean. Work is split over `threads` threads.
double batch_loss(const Weights<double>& w, const std::vector<Prompt>& batch,
                  Weights<double>* grad = nullptr, int threads = 1);
// Loss of the query-only model patched block by block from each prompt's context (spec 8 a);
// max_rel receives the largest relative output difference to the full-context model.
double patched_loss(const Weights<double>& w, const std::vector<Prompt>& batch,
                    double* max_rel = nullptr);

// Adam: m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2, W -= lr mhat / (sqrt(vhat) + eps).
struct AdamParams {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};
class Adam {
 public:
  Adam(const Weights<double>& shape, const AdamParams& p);
  void step(Weights<double>& w, Weights<double>& grad);
 private:
  AdamParams p_;
  int t_ = 0;
  Weights<double> m_, v_;
};

struct TrainParams {
  int d = 2;
  int n_ctx = 50;
  int batch = 64;
  int steps = 1000;
  AdamParams adam{};
  double clip = 1.0;          // global gradient-norm clip (0: none)
  std::uint64_t seed = 1;     // data stream
  int eval_every = 100;
  int eval_prompts = 128;     // fixed evaluation set
  bool track_patch = true;    // also evaluate the patched query-only loss (spec 8 a)
  int threads = 2;
};
struct TrainLogRow {
  int step = 0;
  double train_loss = 0;          // running mean since the last row
  double eval_loss = 0;           // with context
  double eval_loss_patched = 0;   // query-only model patched from the context
  double patch_max_rel = 0;       // largest relative output difference
};
struct TrainResult {
  std::vector<TrainLogRow> log;
  double zero_loss = 0;           // mean target^2 on the evaluation set (zero predictor)
  double final_eval_loss = 0;
  double seconds = 0;
  double tokens_per_second = 0;   // training tokens processed per second
};
TrainResult train(Weights<double>& w, const TrainParams& p,
                  const std::function<void(const TrainLogRow&)>& on_log = {});

// Alignment (spec 7): for each prompt, dW_impl = dW(C) (block 0, query-only anchor) and
// dW_ft = W1 after k SGD steps minus W1, where each SGD step is a full-batch gradient step on
// (1/n) sum_i (pred(x_i, 0) - y_i)^2 over the context examples fed one at a time as the token
// (x_i, 0), only W1 of block 0 updated. cos_F = <dW_impl, dW_ft>_F / (|dW_impl| |dW_ft|).
struct AlignParams {
  std::vector<int> steps{1, 2, 5, 10, 20, 50, 100};
  double lr = 0.01;
  int prompts = 16;
  int n_ctx = 50;
  std::uint64_t seed = 3;
};
struct AlignResult {
  std::vector<int> steps;
  std::vector<std::vector<double>> cos;     // [prompt][steps index]
  std::vector<double> mean, sem;            // over prompts
  std::vector<double> mismatched_mean;      // control: dW_impl of prompt p vs dW_ft of p+1
};
AlignResult alignment(const Weights<double>& w, const AlignParams& p);

double cos_frobenius(const Mat<double>& a, const Mat<double>& b);

}  // namespace icl::verify::patch
