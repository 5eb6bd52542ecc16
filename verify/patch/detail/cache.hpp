// Per-block intermediates of a forward pass (internal to verify/patch: model.cpp, patch.cpp,
// thought_align.cpp); the public entry is ForwardCache in verify/patch/model.hpp, which
// includes this file after defining Mat and Vec (include model.hpp, not this file).
#pragma once
#include <vector>

namespace icl::verify::patch {

template <class S>
struct LayerNormCache {
  Mat<S> xhat;   // normalised input
  Vec<S> rstd;   // 1 / sqrt(var + eps) per column
};

template <class S>
struct BlockCache {
  Mat<S> z;             // block input
  Mat<S> u1;            // input of the contextual layer (LN1(z) or z)
  LayerNormCache<S> ln1, ln2;
  Mat<S> q, k, v;       // attention projections
  std::vector<Mat<S>> P;  // attention weights per head (keys x queries)
  Mat<S> o;             // concatenated head outputs
  Mat<S> a;             // contextual layer output A(.)
  Mat<S> h;             // residual stream before the MLP (z + a); equals a for plain blocks
  Mat<S> u;             // MLP input (a, h or LN2(h))
  std::vector<Mat<S>> mlp_in;   // input of each dense layer (mlp_in[0] = u)
  std::vector<Mat<S>> mlp_pre;  // pre-activation of each dense layer
  Mat<S> y;             // block output
};

}  // namespace icl::verify::patch
