// The three layers of a block (docs/patch.md §2.1, §2.2), each with its backward pass:
//   - the contextual layer A (contextual.cpp): multi-head softmax or linear attention,
//       Q = W_Q Z + b_Q, K = W_K Z + b_K, V = W_V Z + b_V     (heads stacked in rows)
//       S_h = K_h^T Q_h / sqrt(d_k)                            (key i, query j)
//       softmax: P_h(:, j) = softmax over allowed keys of S_h(:, j)
//       linear:  P_h(i, j) = S_h(i, j) / #allowed keys of j
//       A(Z) = W_O [V_1 P_1; ...; V_H P_H] + b_O,
//     or an Elman RNN h_t = tanh(W_h h_{t-1} + W_x z_t + b), h_{-1} = 0, A(Z)_t = h_t;
//   - the MLP (mlp.cpp) M(u) = W_K f(... f(W_1 u + b_1) ...) + b_K; gated (§16.2): the first
//     hidden layer is f(W_g u + b_g) * (W_1 u + b_1);
//   - the norms (norm.cpp) LN(z) = g * (z - mean(z)) / sqrt(var(z) + eps) + beta and
//     RMS(z) = g * z / sqrt(mean(z^2) + eps), per column.
// A sequence is a matrix with one token per COLUMN. Each forward fills `cache` when given; each
// backward ADDS dLoss/dparams into `g` and returns dLoss/dinput, from the cache of the forward.
#pragma once
#include "verify/patch/model/cache.hpp"

namespace icl::verify::patch {

// The contextual layer A on a sequence (one output column per position).
template <class S>
Mat<S> contextual_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                          BlockCache<S>* cache = nullptr);
// Given dA, from the cache (input k.u1, output k.a, attention k.q, k.k, k.v, k.P, k.o).
template <class S>
Mat<S> contextual_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                           const Mat<S>& dA, BlockWeights<S>& g);

// The MLP on each column.
template <class S>
Mat<S> mlp_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& u,
                   BlockCache<S>* cache = nullptr);
template <class S>
Mat<S> mlp_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                    const Mat<S>& dy, BlockWeights<S>& g);

// LayerNorm on each column.
template <class S>
Mat<S> layernorm_forward(const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta, double eps,
                         LayerNormCache<S>* cache = nullptr);
// RMSNorm on each column: g * z / sqrt(mean(z^2) + eps).
template <class S>
Mat<S> rmsnorm_forward(const Mat<S>& z, const Mat<S>& g, double eps,
                       LayerNormCache<S>* cache = nullptr);
// The block's norm (c.block.norm) with gain g and shift beta (LayerNorm only).
template <class S>
Mat<S> norm_forward(const ModelConfig& c, const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta,
                    LayerNormCache<S>* cache = nullptr);
// Given dy, adds into dg (and dbeta for LayerNorm) and returns dz.
template <class S>
Mat<S> norm_backward(const ModelConfig& c, const Mat<S>& g, const LayerNormCache<S>& k,
                     const Mat<S>& dy, Mat<S>& dg, Mat<S>& dbeta);

}  // namespace icl::verify::patch
