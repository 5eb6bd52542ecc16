// A block and the whole model, forward and backward (docs/patch.md §2.3, §2.4): one block of
// kind plain | residual | preln | postln | parallel (model/config.hpp) built from the layers of
// model/layers.hpp; the model is the embedding, L blocks, the readout.
#pragma once
#include "verify/patch/model/layers.hpp"

namespace icl::verify::patch {

// One block on a sequence (one column per token). `cache` (optional) receives every
// intermediate (the MLP input u and the stream h are what the patch reads).
template <class S>
Mat<S> block_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                     BlockCache<S>* cache = nullptr);
// Backpropagation through one block: adds dLoss/dparams into g, returns dLoss/dz.
template <class S>
Mat<S> block_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                      const Mat<S>& d_y, BlockWeights<S>& g);

// Embedding of tokens (identity without config.embed).
template <class S>
Mat<S> embed(const Weights<S>& w, const Mat<S>& tokens);
// Readout (identity without config.embed).
template <class S>
Mat<S> readout(const Weights<S>& w, const Mat<S>& y);
// Whole model: tokens (token_dim x n) -> outputs (token_dim x n). InvalidParams("tokens") when
// the tokens do not have token_dim rows.
template <class S>
Mat<S> forward(const Weights<S>& w, const Mat<S>& tokens, ForwardCache<S>* cache = nullptr);

// Backpropagation: given dLoss/dOut, ADDS dLoss/dparams into `grad` (same shapes as `w`) and
// returns dLoss/dtokens. Requires the cache of the forward pass.
template <class S>
Mat<S> backward(const Weights<S>& w, const ForwardCache<S>& cache, const Mat<S>& d_out,
                Weights<S>& grad);

}  // namespace icl::verify::patch
