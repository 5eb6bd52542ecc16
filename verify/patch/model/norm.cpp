// The norms of a block (docs/patch.md §2.2, §16.1): LayerNorm and RMSNorm per column, forward
// and backward.
#include "verify/patch/model/layers.hpp"

namespace icl::verify::patch {
namespace {

// LayerNorm (centre = true) or RMSNorm (centre = false) of each column, before the gain:
// xhat = (z - centre * mean(z)) * rstd, rstd = 1 / sqrt(mean((z - centre * mean)^2) + eps).
template <class S>
Mat<S> normalize_columns(const Mat<S>& z, bool centre, double eps, Vec<S>& rstd) {
  const S D = S(z.rows());
  Mat<S> xhat = z;
  if (centre) xhat.rowwise() -= z.colwise().mean();
  rstd = ((xhat.colwise().squaredNorm().array() / D + S(eps)).rsqrt()).transpose();
  xhat.array().rowwise() *= rstd.array().transpose();
  return xhat;
}

template <class S>
Mat<S> scale_shift(const Mat<S>& xhat, const Mat<S>& g, const Mat<S>& beta) {
  Mat<S> y = (xhat.array().colwise() * g.col(0).array()).matrix();
  if (beta.size() > 0) y.colwise() += beta.col(0);
  return y;
}

}  // namespace

template <class S>
Mat<S> layernorm_forward(const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta, double eps,
                         LayerNormCache<S>* cache) {
  Vec<S> rstd;
  Mat<S> xhat = normalize_columns(z, true, eps, rstd);
  Mat<S> y = scale_shift(xhat, g, beta);
  if (cache) {
    cache->xhat = std::move(xhat);
    cache->rstd = std::move(rstd);
  }
  return y;
}

template <class S>
Mat<S> rmsnorm_forward(const Mat<S>& z, const Mat<S>& g, double eps, LayerNormCache<S>* cache) {
  Vec<S> rstd;
  Mat<S> xhat = normalize_columns(z, false, eps, rstd);
  Mat<S> y = scale_shift(xhat, g, Mat<S>());
  if (cache) {
    cache->xhat = std::move(xhat);
    cache->rstd = std::move(rstd);
  }
  return y;
}

template <class S>
Mat<S> norm_forward(const ModelConfig& c, const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta,
                    LayerNormCache<S>* cache) {
  return c.block.norm == Norm::LayerNorm ? layernorm_forward(z, g, beta, c.ln_eps, cache)
                                   : rmsnorm_forward(z, g, c.ln_eps, cache);
}

// dxhat = dy * g;  LayerNorm: dz = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
//                    RMSNorm:   dz = rstd * (dxhat - xhat * mean(dxhat * xhat))
template <class S>
Mat<S> norm_backward(const ModelConfig& c, const Mat<S>& g, const LayerNormCache<S>& k,
                     const Mat<S>& dy, Mat<S>& dg, Mat<S>& dbeta) {
  const S D = S(dy.rows());
  dg.col(0) += (dy.array() * k.xhat.array()).rowwise().sum().matrix();
  if (c.block.norm == Norm::LayerNorm) dbeta.col(0) += dy.rowwise().sum();
  Mat<S> dx = (dy.array().colwise() * g.col(0).array()).matrix();
  const auto m2 = ((dx.array() * k.xhat.array()).colwise().sum() / D).eval();
  Mat<S> dz = dx - (k.xhat.array().rowwise() * m2).matrix();
  if (c.block.norm == Norm::LayerNorm) dz.rowwise() -= dx.colwise().mean();
  dz.array().rowwise() *= k.rstd.array().transpose();
  return dz;
}

#define ICL_PATCH_INSTANTIATE(S)                                                                   \
  template Mat<S> layernorm_forward(const Mat<S>&, const Mat<S>&, const Mat<S>&, double,           \
                                    LayerNormCache<S>*);                                           \
  template Mat<S> rmsnorm_forward(const Mat<S>&, const Mat<S>&, double, LayerNormCache<S>*);       \
  template Mat<S> norm_forward(const ModelConfig&, const Mat<S>&, const Mat<S>&, const Mat<S>&,    \
                               LayerNormCache<S>*);                                                \
  template Mat<S> norm_backward(const ModelConfig&, const Mat<S>&, const LayerNormCache<S>&,       \
                                const Mat<S>&, Mat<S>&, Mat<S>&);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

}  // namespace icl::verify::patch
