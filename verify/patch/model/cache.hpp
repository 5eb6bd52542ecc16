// The intermediates of a forward pass (docs/patch.md §2), kept for backward() and for the patch
// computations (the MLP input u and the stream h of every block at every position).
#pragma once
#include <vector>

#include "verify/patch/model/weights.hpp"

namespace icl::verify::patch {

template <class S>
struct LayerNormCache {   // LayerNorm or RMSNorm
  Mat<S> xhat;   // normalised input
  Vec<S> rstd;   // 1 / sqrt(var + eps) (RMSNorm: 1 / sqrt(mean square + eps)) per column
};

template <class S>
struct BlockCache {
  Mat<S> z;             // block input
  Mat<S> u1;            // input of the contextual layer (N1(z) or z)
  LayerNormCache<S> ln1, ln2;   // post-norm: N1 of z + a, N2 of h + M(h)
  Mat<S> q, k, v;       // attention projections
  std::vector<Mat<S>> P;  // attention weights per head (keys x queries)
  Mat<S> o;             // concatenated head outputs
  Mat<S> a;             // contextual layer output A(.)
  Mat<S> h;             // residual stream before the MLP (z + a; post-norm: N1(z + a);
                        // parallel: z + a); equals a for plain blocks
  Mat<S> u;             // MLP input (a, h, N2(h); post-norm: h; parallel: u1)
  std::vector<Mat<S>> mlp_in;   // input of each dense layer (mlp_in[0] = u)
  std::vector<Mat<S>> mlp_pre;  // pre-activation of each dense layer (gated: of the up matrix W1)
  Mat<S> gate_pre, gate_act;    // gated MLP: W_g u + b_g and f of it
  Mat<S> y;             // block output
};

template <class S>
struct ForwardCache {
  Mat<S> tokens;
  std::vector<Mat<S>> layer_inputs;  // sequence entering block l (size L + 1: last = final)
  std::vector<BlockCache<S>> blocks;
  Mat<S> out;
};

}  // namespace icl::verify::patch
