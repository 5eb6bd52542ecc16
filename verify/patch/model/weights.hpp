// The weights of a patch model (docs/patch.md §2.4): every parameter by its stable name, zero
// and random initialisation, precision conversions. Everything is templated on the scalar
// (double, float: the float32 study); explicit instantiations in weights.cpp.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "verify/patch/model/config.hpp"

namespace icl::verify::patch {

template <class S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <class S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;

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

// Zero weights with the shapes of `config` (validated).
template <class S>
Weights<S> zeros(const ModelConfig& config);
template <class S>
Weights<S> zeros_like(const Weights<S>& w);

// Number of scalar parameters.
std::size_t parameter_count(const ModelConfig& config);

// Random initialisation (docs/patch.md §2.4): dense matrices N(0, gain^2 / fan_in), biases
// N(0, bias_std^2), norm gains 1 and shifts 0; the RNN recurrent matrix is scaled to spectral
// radius about `rnn_radius` (fading memory when < 1). `seed` seeds the one stream of the
// initialisation; the experiments pass derive_seed(base_seed, "weights") (docs/patch.md §14.1).
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

}  // namespace icl::verify::patch
