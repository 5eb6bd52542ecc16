// Softmax-attention check of the low-rank theory (docs/softmax.md): one softmax self-attention
// layer trained by Adam on the same pretraining data as the linear model. This header holds the
// pieces (data, model, gradient, training); the experiment entries (options, typed results,
// run()) are in verify/softmax/experiment.hpp, their serializers in verify/softmax/serialize.hpp.
//
// Model (docs/softmax.md §2, the authors' code): tokens t_l = (x_l, y_l) in R^{D+1} for the L context pairs, then
// the query token (x_q, 0); T = L + 1 tokens. W_Q, W_K: (D+1) -> d (attention dimension, 4 in
// the paper), W_V: (D+1) -> (D+1); no biases, output matrix, positional encoding or MLP. Only the
// last token queries:
//
//   a = softmax_i(t_i . u / sqrt(d)),  u = W_K^T W_Q t_last  (i over all T tokens, query included)
//   prediction = last coordinate of W_V sum_i a_i t_i = v . sum_i a_i t_i,  v = last row of W_V.
//
// Only the last row v of W_V reaches the prediction (the other rows get zero gradient and keep
// their initial values under Adam), so the model stores (W_Q, W_K, v). The forward and backward
// pass go through u and v: O(T D + d D) per sequence. The training dynamics are the authors'
// (same parameterization, same Adam update), in double precision (the authors used float32).
//
// Data (docs/softmax.md §1): exactly the linear model's generator conventions (docs/model.md §1,
// docs/simulation.md §13.2; verify/lowrank):
// x ~ N(0, I/D), A (D x r) Haar, r = round(rho D), M0 = round(kappa D) tasks w = sqrt(D/r) A v,
// N = round(tau D^2) sequences each with a task drawn uniformly with replacement (or cyclic),
// L = round(alpha D) context pairs, y = w.x + sigma eps (query label too). The subspace A, the
// tasks W and the task assignment are drawn from the seed's stream in the same order and by the
// same algorithm as verify::lowrank::generate, so for the same seed they are identical to the linear
// simulator's; the sequences themselves are drawn token by token (the linear simulator only
// needs the context estimate s).
//
// Everything is seeded (std::mt19937_64); seed k of a run is numerics::derive_seed(base, k), so
// results do not depend on the number of threads.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "numerics/status.hpp"
#include "numerics/normal_sampler.hpp"
#include "theory/params.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::verify::softmax {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using verify::lowrank::Rng;
using numerics::NormalSampler;  // the simulators' one sampler: A and W agree for the same seed

// A batch of prompts. Tokens are the columns of Z ((D+1) x count*T); prompt n occupies columns
// n*T .. n*T + T - 1, the last of them the query token (x_q, 0). y(n) is the query's label.
struct Prompts {
  int D = 0;  // token dimension (tokens have D + 1 coordinates)
  int T = 0;  // tokens per prompt, L + 1
  MatrixXd Z;
  VectorXd y;
  int count() const { return int(y.size()); }
};

// Prompts for the tasks given as columns of `tasks` (D x count): L context pairs with label
// noise std sigma and a query with a noisy label. Per prompt, token by token (context, then
// query): D normals for x (scaled by 1/sqrt(D)), then one for the noise.
Prompts draw_prompts(const MatrixXd& tasks, int L, double sigma, Rng& rng);

// One seed's pretraining data.
struct TrainingData {
  verify::lowrank::Sizes n;
  MatrixXd A;              // D x r, orthonormal columns
  MatrixXd W;              // D x M0 tasks
  std::vector<int> task;   // task of each sequence
  Prompts prompts;         // N prompts with L context pairs, noise sigma
};
// Throws InvalidParams("task_spectrum") for a general task covariance (not in the paper).
TrainingData generate(const theory::Params& p, int dim, Rng& rng,
                      verify::lowrank::Assignment assignment = verify::lowrank::Assignment::Random);

// The trainable parameters: W_Q, W_K (d x (D+1)) and v, the last row of W_V.
struct Model {
  MatrixXd WQ, WK;
  VectorXd v;
  int attn_dim() const { return int(WQ.rows()); }
  int token_dim() const { return int(WQ.cols()); }  // D + 1
};
// Initialization of the three weight matrices (all uniform, no biases):
//   Glorot: Flux's Dense default glorot_uniform, U(-b, b) with b = sqrt(6 / (fan_in + fan_out)),
//           i.e. sqrt(6/(D+1+d)) for W_Q, W_K and sqrt(3/(D+1)) for W_V. The authors' code is
//           Julia/Flux (nonlinear_attention.jl: Dense(in_dim, d_attn, bias=false)), so this is
//           the framework default they used, and the default here.
//   Torch:  PyTorch nn.Linear's default (kaiming_uniform with a = sqrt(5)), b = 1/sqrt(D+1).
// Draw order: W_Q, W_K, W_V, each row-major; of W_V only the last row is kept.
enum class Init { Glorot, Torch };
const char* to_string(Init i);                  // "glorot" | "torch"
Init init_from_string(const std::string& s);    // InvalidParams("init") otherwise
Model init_model(int D, int attn_dim, Rng& rng, Init init = Init::Glorot);

struct Gradient {
  MatrixXd WQ, WK;
  VectorXd v;
};

// Predictions for every prompt.
VectorXd predict(const Model& m, const Prompts& data);
// Mean squared error over the prompts (the training loss).
double loss(const Model& m, const Prompts& data);
// The same loss and its gradient with respect to (W_Q, W_K, v).
double loss_and_gradient(const Model& m, const Prompts& data, Gradient& g);

// Training (docs/softmax.md §4).
struct TrainOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam (PyTorch defaults)
  int max_epochs = 3000;
  // Stop after the first epoch whose training loss differs from the previous epoch's by less
  // than tol (the loss of epoch e is the full-batch MSE at the parameters before its update).
  double tol = 1e-5;
  bool keep_history = false;
};
// How a training ended (the authors' stopping rule, in the project's convergence vocabulary):
//   Converged         the rule was met: |loss change| < tol at the last epoch;
//   NotConverged      the epoch cap was hit first; residual_norm is the last |loss change|;
//   NumericalFailure  the loss became non-finite.
// residual_norm is the last |loss change| (NaN when fewer than two epochs ran or on failure).
struct TrainLog {
  int epochs = 0;             // Adam steps taken
  numerics::Status status = numerics::Status::NotConverged;
  double residual_norm = std::numeric_limits<double>::quiet_NaN();
  std::string message;
  double initial_loss = 0;    // at the initialization
  double final_loss = 0;      // at the returned parameters
  double seconds = 0;
  std::vector<double> history;  // loss of every epoch (keep_history)
  bool converged() const { return status == numerics::Status::Converged; }
};
// Full-batch Adam on the MSE, in place.
TrainLog train_adam(Model& m, const Prompts& data, const TrainOptions& o);

}  // namespace icl::verify::softmax
