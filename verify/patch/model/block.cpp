// Blocks, embedding, readout and the whole model, forward and backward (docs/patch.md §2.3,
// §2.4).
#include "verify/patch/model/block.hpp"

#include "numerics/error.hpp"
#include "verify/patch/model/detail/products.hpp"

namespace icl::verify::patch {

template <class S>
Mat<S> block_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                     BlockCache<S>* cache) {
  if (cache) cache->z = z;
  LayerNormCache<S>* ln1 = cache ? &cache->ln1 : nullptr;
  LayerNormCache<S>* ln2 = cache ? &cache->ln2 : nullptr;
  const BlockKind kind = c.block.kind;
  const bool residual = c.block.residual(), normalized = c.block.normalized();
  // N1 before the attention (pre-norm and parallel blocks; post-norm: after the residual add)
  Mat<S> u1 = normalized && kind != BlockKind::PostLn ? norm_forward(c, z, w.g1, w.be1, ln1) : z;
  Mat<S> a = contextual_forward(c, w, u1, cache);
  Mat<S> h, u, y;
  switch (kind) {
    case BlockKind::Plain:
    case BlockKind::Residual:
    case BlockKind::PreLn:                                                 // attention, then MLP
      h = residual ? Mat<S>(z + a) : a;                                    // H = Z + A
      u = normalized ? norm_forward(c, h, w.g2, w.be2, ln2) : h;          // MLP input
      y = mlp_forward(c, w, u, cache);
      if (residual) y += h;                                                // Y = H + MLP
      break;
    case BlockKind::PostLn:
      h = norm_forward(c, Mat<S>(z + a), w.g1, w.be1, ln1);               // H = N1(Z + A)
      u = h;
      y = norm_forward(c, Mat<S>(h + mlp_forward(c, w, u, cache)), w.g2, w.be2, ln2);  // N2(H + M)
      break;
    case BlockKind::Parallel:
      h = z + a;
      u = u1;                                                              // same input as A
      y = h + mlp_forward(c, w, u, cache);                                 // Z + A(U) + M(U)
      break;
  }
  if (cache) {
    cache->u1 = std::move(u1);
    cache->h = std::move(h);
    cache->u = std::move(u);
    cache->y = y;
  }
  return y;
}

template <class S>
Mat<S> block_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                      const Mat<S>& d_y, BlockWeights<S>& g) {
  const bool residual = c.block.residual(), normalized = c.block.normalized();
  switch (c.block.kind) {
    case BlockKind::Plain:
    case BlockKind::Residual:
    case BlockKind::PreLn: {
      Mat<S> du = mlp_backward(c, w, k, d_y, g);
      Mat<S> dh = normalized ? norm_backward(c, w.g2, k.ln2, du, g.g2, g.be2) : du;
      if (residual) dh += d_y;
      Mat<S> du1 = contextual_backward(c, w, k, dh, g);
      Mat<S> dz = normalized ? norm_backward(c, w.g1, k.ln1, du1, g.g1, g.be1) : du1;
      if (residual) dz += dh;
      return dz;
    }
    case BlockKind::PostLn: {
      const Mat<S> dv = norm_backward(c, w.g2, k.ln2, d_y, g.g2, g.be2);  // v = H + M(H)
      const Mat<S> dh = dv + mlp_backward(c, w, k, dv, g);
      const Mat<S> dr = norm_backward(c, w.g1, k.ln1, dh, g.g1, g.be1);  // r = Z + A(Z)
      return dr + contextual_backward(c, w, k, dr, g);
    }
    case BlockKind::Parallel: {
      Mat<S> du = mlp_backward(c, w, k, d_y, g);
      du += contextual_backward(c, w, k, d_y, g);
      Mat<S> dz = normalized ? norm_backward(c, w.g1, k.ln1, du, g.g1, g.be1) : du;
      return dz + d_y;
    }
  }
  return d_y;
}

template <class S>
Mat<S> embed(const Weights<S>& w, const Mat<S>& tokens) {
  return w.config.embed ? detail::affine(w.We, tokens, w.bE) : tokens;
}

template <class S>
Mat<S> readout(const Weights<S>& w, const Mat<S>& y) {
  return w.config.embed ? detail::affine(w.Wr, y, w.br) : y;
}

template <class S>
Mat<S> forward(const Weights<S>& w, const Mat<S>& tokens, ForwardCache<S>* cache) {
  if (tokens.rows() != w.config.token_dim)
    throw InvalidParams("tokens", "have " + std::to_string(tokens.rows()) +
                                      " rows, the model expects token_dim " +
                                      std::to_string(w.config.token_dim));
  Mat<S> z = embed(w, tokens);
  if (cache) {
    cache->tokens = tokens;
    cache->layer_inputs.assign(1, z);
    cache->blocks.assign(w.blocks.size(), BlockCache<S>{});
  }
  for (std::size_t l = 0; l < w.blocks.size(); ++l) {
    z = block_forward(w.config, w.blocks[l], z, cache ? &cache->blocks[l] : nullptr);
    if (cache) cache->layer_inputs.push_back(z);
  }
  Mat<S> out = readout(w, z);
  if (cache) cache->out = out;
  return out;
}

template <class S>
Mat<S> backward(const Weights<S>& w, const ForwardCache<S>& cache, const Mat<S>& d_out,
                Weights<S>& grad) {
  const ModelConfig& c = w.config;
  Mat<S> dz = d_out;
  using detail::multiply;
  constexpr auto N = detail::Transpose::No, T = detail::Transpose::Yes;
  if (c.embed) {
    multiply(N, T, d_out, cache.layer_inputs.back(), grad.Wr, true);
    grad.br.col(0) += d_out.rowwise().sum();
    dz.resize(w.Wr.cols(), d_out.cols());
    multiply(T, N, w.Wr, d_out, dz);
  }
  for (std::size_t l = w.blocks.size(); l-- > 0;)
    dz = block_backward(c, w.blocks[l], cache.blocks[l], dz, grad.blocks[l]);
  if (c.embed) {
    multiply(N, T, dz, cache.tokens, grad.We, true);
    grad.bE.col(0) += dz.rowwise().sum();
    Mat<S> d_tokens(w.We.cols(), dz.cols());
    multiply(T, N, w.We, dz, d_tokens);
    dz = std::move(d_tokens);
  }
  return dz;
}

#define ICL_PATCH_INSTANTIATE(S)                                                                   \
  template Mat<S> block_forward(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,         \
                                BlockCache<S>*);                                                   \
  template Mat<S> block_backward(const ModelConfig&, const BlockWeights<S>&, const BlockCache<S>&, \
                                 const Mat<S>&, BlockWeights<S>&);                                 \
  template Mat<S> embed(const Weights<S>&, const Mat<S>&);                                         \
  template Mat<S> readout(const Weights<S>&, const Mat<S>&);                                       \
  template Mat<S> forward(const Weights<S>&, const Mat<S>&, ForwardCache<S>*);                     \
  template Mat<S> backward(const Weights<S>&, const ForwardCache<S>&, const Mat<S>&, Weights<S>&);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

}  // namespace icl::verify::patch
