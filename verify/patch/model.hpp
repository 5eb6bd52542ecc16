// Contextual blocks for the rank-1 patch study (docs/patch.md §2).
//
// A sequence is a matrix with one token per COLUMN (dim x n). Layers:
//   - multi-head softmax self-attention (causal or not) and linear attention:
//       Q = W_Q Z + b_Q, K = W_K Z + b_K, V = W_V Z + b_V     (heads stacked in rows)
//       S_h = K_h^T Q_h / sqrt(d_k)                            (key i, query j)
//       softmax: P_h(:, j) = softmax over allowed keys of S_h(:, j)
//       linear:  P_h(i, j) = S_h(i, j) / #allowed keys of j
//       A(Z) = W_O [V_1 P_1; ...; V_H P_H] + b_O
//   - Elman RNN: h_t = tanh(W_h h_{t-1} + W_x z_t + b), h_{-1} = 0, A(Z)_t = h_t
//   - MLP  M(u) = W_K f(... f(W_1 u + b_1) ...) + b_K, f = GELU (x Phi(x)), ReLU or SiLU;
//     gated (SwiGLU: f = SiLU, GeGLU: f = GELU): the first hidden layer is
//     f(W_g u + b_g) * (W_1 u + b_1)                                   (docs/patch.md §16)
//   - LayerNorm  LN(z) = g * (z - mean(z)) / sqrt(var(z) + eps) + beta
//   - RMSNorm    RMS(z) = g * z / sqrt(mean(z^2) + eps)                   (docs/patch.md §16)
// Blocks (N = the normalization, LayerNorm or RMSNorm):
//   plain (no skips):     Y = M(A(Z))                    (docs/patch.md §2: T_W(C, x) = M_W(A(C, x)))
//   residual, no norm:    H = Z + A(Z),     Y = H + M(H)                 (docs/patch.md §5)
//   pre-norm residual:    H = Z + A(N1(Z)), Y = H + M(N2(H))           (docs/patch.md §6)
//   post-norm residual:   H = N1(Z + A(Z)), Y = N2(H + M(H))           (docs/patch.md §16)
//   parallel:             U = N1(Z) (or Z), Y = Z + A(U) + M(U)        (docs/patch.md §16)
// Model: optional linear embedding (token -> width) and readout (width -> token), L blocks.
// Everything is templated on the scalar (float, double); explicit instantiations in model.cpp.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <iosfwd>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace icl::verify::patch {

template <class S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <class S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;

}  // namespace icl::verify::patch

#include "verify/patch/detail/cache.hpp"

namespace icl::verify::patch {

enum class LayerKind { Softmax, Linear, Rnn };
enum class Activation { Gelu, Relu, Silu };
enum class Norm { LayerNorm, RmsNorm };
// Where the residual block puts its parts (docs/patch.md §16): sequential (attention then MLP,
// norms before each when ModelConfig::layernorm: Pre-LN), post-norm (norms after each residual
// add), parallel (attention and MLP read the same normalized input).
enum class BlockLayout { Sequential, PostNorm, Parallel };
// The block names of the command line: plain | residual | preln | postln | parallel.
enum class BlockKind { Plain, Residual, PreNorm, PostNorm, Parallel };

std::string to_string(LayerKind k);
std::string to_string(Activation a);
std::string to_string(Norm n);          // layernorm | rmsnorm
std::string to_string(BlockLayout l);   // sequential | postnorm | parallel
std::string to_string(BlockKind b);     // plain | residual | preln | postln | parallel
// Each throws icl::InvalidParams("kind" / "act" / "norm" / "layout" / "block", ...) for an
// unknown name.
LayerKind layer_kind_from_string(const std::string& s);
Activation activation_from_string(const std::string& s);   // gelu | relu | silu
Norm norm_from_string(const std::string& s);
BlockLayout layout_from_string(const std::string& s);
BlockKind block_kind_from_string(const std::string& s);

// Shape of a model. validate() throws icl::InvalidParams naming the field.
struct ModelConfig {
  int token_dim = 3;       // d + 1 for in-context regression tokens (x, y)
  bool embed = false;      // linear embedding token_dim -> width and readout width -> token_dim
  int width = 3;           // model width (must equal token_dim when embed is false)
  int layers = 1;          // number of blocks L
  LayerKind kind = LayerKind::Softmax;
  int heads = 8;           // attention heads
  int head_dim = 4;        // size of each head
  bool causal = true;      // causal mask (the query is last, so its output is the same either way)
  int mlp_hidden = 128;    // hidden width of the MLP
  int mlp_depth = 2;       // number of dense layers in the MLP (>= 1)
  Activation act = Activation::Gelu;
  bool gated = false;      // gated first MLP layer (SwiGLU / GeGLU with act silu / gelu); depth >= 2
  bool residual = false;   // skip connections
  bool layernorm = false;  // normalization (kind: `norm`) in the residual block (requires residual)
  Norm norm = Norm::LayerNorm;
  BlockLayout layout = BlockLayout::Sequential;  // PostNorm needs layernorm; Parallel needs residual
  double ln_eps = 1e-5;
  void validate() const;
  bool operator==(const ModelConfig&) const = default;
};

// The block kind of a configuration, and the configuration of a block kind: plain (no skips),
// residual (no norm), preln (sequential with norm), postln, parallel (with or without norm).
BlockKind block_kind(const ModelConfig& c);
// Sets residual, layernorm and layout; `normalized` = false is allowed for parallel only
// (plain and residual have no norm; preln/postln need one: InvalidParams("norm", ...)).
void set_block(ModelConfig& c, BlockKind b, bool normalized);
// The MLP names of the command line: gelu | relu (plain MLP), swiglu | geglu (gated).
std::string mlp_name(const ModelConfig& c);
void set_mlp(ModelConfig& c, const std::string& name);  // InvalidParams("mlp", ...) if unknown

// Weights of one block. Biases are stored as (n x 1) matrices so that every parameter is a Mat.
template <class S>
struct BlockWeights {
  // attention (softmax/linear)
  Mat<S> Wq, bq, Wk, bk, Wv, bv, Wo, bo;
  // RNN
  Mat<S> Wh, Wx, brnn;
  // norm gains/shifts (normalized blocks; shifts be1/be2 for LayerNorm only, g2/be2 not for
  // parallel blocks)
  Mat<S> g1, be1, g2, be2;
  // gate matrix and bias of a gated MLP (empty otherwise): first hidden f(Wg u + bg) * (W1 u + b1)
  Mat<S> Wg, bg;
  // MLP dense layers: W[0] is the patched "W" of docs/patch.md §3, b.back() is "b2" (last bias)
  std::vector<Mat<S>> W, b;
};

template <class S>
struct Weights {
  ModelConfig config;
  Mat<S> We, bE;  // embedding (width x token_dim), only with config.embed
  Mat<S> Wr, br;  // readout (token_dim x width), only with config.embed
  std::vector<BlockWeights<S>> blocks;
};

// Every parameter, with a stable name, in a fixed order (used by Adam, save/load, tests).
template <class S>
std::vector<std::pair<std::string, Mat<S>*>> parameters(Weights<S>& w);
template <class S>
std::vector<std::pair<std::string, Mat<S>*>> parameters(BlockWeights<S>& w);

// Zero weights with the shapes of `config`.
template <class S>
Weights<S> zeros(const ModelConfig& config);
template <class S>
Weights<S> zeros_like(const Weights<S>& w);

// Random initialisation: dense matrices N(0, gain^2 / fan_in), biases N(0, bias_std^2),
// LayerNorm gains 1 and shifts 0. The RNN recurrent matrix is scaled to spectral radius
// about `rnn_radius` (fading memory when < 1).
struct InitOptions {
  std::uint64_t seed = 1;
  double gain = 1.0;
  double bias_std = 0.1;
  double rnn_radius = 0.5;
};
Weights<double> init_weights(const ModelConfig& config, const InitOptions& p);

// Precision conversions (float32 study).
template <class T, class S>
Weights<T> cast_weights(const Weights<S>& w);
template <class T, class S>
BlockWeights<T> cast_block(const BlockWeights<S>& w);

// Number of scalar parameters.
std::size_t parameter_count(const ModelConfig& config);

// ---- forward / backward ------------------------------------------------------------------

// Intermediates of a forward pass (LayerNormCache, BlockCache: verify/patch/detail/cache.hpp),
// kept for backward() and for the patch computations.
template <class S>
struct ForwardCache {
  Mat<S> tokens;
  std::vector<Mat<S>> layer_inputs;  // sequence entering block l (size L + 1: last = final)
  std::vector<BlockCache<S>> blocks;
  Mat<S> out;
};

// The contextual layer A on a sequence (one output column per position).
template <class S>
Mat<S> contextual_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                          BlockCache<S>* cache = nullptr);
// The MLP on each column.
template <class S>
Mat<S> mlp_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& u,
                   BlockCache<S>* cache = nullptr);
// LayerNorm on each column.
template <class S>
Mat<S> layernorm_forward(const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta, double eps,
                         LayerNormCache<S>* cache = nullptr);
// RMSNorm on each column: g * z / sqrt(mean(z^2) + eps).
template <class S>
Mat<S> rmsnorm_forward(const Mat<S>& z, const Mat<S>& g, double eps,
                       LayerNormCache<S>* cache = nullptr);
// One block. `cache` (optional) receives every intermediate.
template <class S>
Mat<S> block_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                     BlockCache<S>* cache = nullptr);
// Embedding of tokens (identity without config.embed).
template <class S>
Mat<S> embed(const Weights<S>& w, const Mat<S>& tokens);
// Readout (identity without config.embed).
template <class S>
Mat<S> readout(const Weights<S>& w, const Mat<S>& y);
// Whole model: tokens (token_dim x n) -> outputs (token_dim x n).
template <class S>
Mat<S> forward(const Weights<S>& w, const Mat<S>& tokens, ForwardCache<S>* cache = nullptr);

// Backpropagation: given dLoss/dOut, ADDS dLoss/dparams into `grad` (same shapes as `w`) and
// returns dLoss/dtokens. Requires the cache of the forward pass.
template <class S>
Mat<S> backward(const Weights<S>& w, const ForwardCache<S>& cache, const Mat<S>& d_out,
                Weights<S>& grad);

// ---- save / load -----------------------------------------------------------------------
// Text format, one item per line:
//   icl-patch-weights 1
//   config <token_dim> <embed 0|1> <width> <layers> <kind> <heads> <head_dim> <causal 0|1>
//          <mlp_hidden> <mlp_depth> <act> <residual 0|1> <layernorm 0|1> <ln_eps>
//          <gated 0|1> <norm> <layout>       (files written before these three were added omit
//                                             them: defaults 0 layernorm sequential)
//   then for every parameter in parameters() order:  <name> <rows> <cols>
//   followed by rows*cols numbers (column-major, %.17g), whitespace separated.
// load_weights throws std::runtime_error with a clear message on any mismatch.
// (Loading with the command-line consistency checks: load_model in verify/patch/model_spec.hpp.)
void save_weights(const Weights<double>& w, std::ostream& os);
Weights<double> load_weights(std::istream& is);
Weights<double> load_weights_file(const std::string& path);

}  // namespace icl::verify::patch
