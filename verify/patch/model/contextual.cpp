// The contextual layer A of a block (docs/patch.md §2.1): multi-head softmax or linear
// attention, or an Elman RNN; forward and backward.
#include <cmath>
#include <type_traits>

#include "verify/patch/model/detail/products.hpp"
#include "verify/patch/model/detail/vmath.hpp"
#include "verify/patch/model/layers.hpp"

namespace icl::verify::patch {
namespace {

using detail::affine;
using detail::Transpose;

// Number of keys query j attends to.
inline int allowed_keys(bool causal, int j, int n) { return causal ? j + 1 : n; }

}  // namespace

template <class S>
Mat<S> contextual_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                          BlockCache<S>* cache) {
  const Eigen::Index n = z.cols();
  if (c.kind == LayerKind::Rnn) {
    // h_t = tanh(W_h h_{t-1} + W_x z_t + b), h_{-1} = 0
    Mat<S> H(w.Wh.rows(), n);
    Vec<S> h = Vec<S>::Zero(w.Wh.rows());
    for (Eigen::Index t = 0; t < n; ++t) {
      h = (w.Wh * h + w.Wx * z.col(t) + w.brnn.col(0)).array().tanh().matrix();
      H.col(t) = h;
    }
    if (cache) cache->a = H;
    return H;
  }
  const int dk = c.head_dim;
  const S scale = S(1) / std::sqrt(S(dk));
  Mat<S> Q = affine(w.Wq, z, w.bq);
  Mat<S> K = affine(w.Wk, z, w.bk);
  Mat<S> V = affine(w.Wv, z, w.bv);
  Mat<S> O(Q.rows(), n);
  std::vector<Mat<S>> Ps;
  // Allowed keys per query: the causal mask keeps keys i <= j (the upper triangle of the
  // keys x queries matrix); linear attention divides by their number.
  Eigen::Array<S, 1, Eigen::Dynamic> count(n);
  for (Eigen::Index j = 0; j < n; ++j)
    count(j) = S(allowed_keys(c.causal, static_cast<int>(j), static_cast<int>(n)));
  Mat<S> scratch;
  if (cache) Ps.resize(static_cast<std::size_t>(c.heads));
  for (int h = 0; h < c.heads; ++h) {
    Mat<S>& P = cache ? Ps[static_cast<std::size_t>(h)] : scratch;
    // S_h = K_h^T Q_h / sqrt(d_k): rows are keys, columns queries
    detail::product(true, scale, K.middleRows(h * dk, dk), Q.middleRows(h * dk, dk), P);
    if (c.kind == LayerKind::Softmax) {
      // Column by column over the allowed keys only (half the exps with the causal mask), in
      // place on contiguous column segments (no temporaries). exp: for double the vectorized
      // kernel of detail/vmath.hpp (docs/patch.md §2.6), for float std::exp.
      for (Eigen::Index j = 0; j < n; ++j) {
        const Eigen::Index m = static_cast<Eigen::Index>(count(j));
        auto col = P.col(j).head(m).array();
        col -= col.maxCoeff();
        if constexpr (std::is_same_v<S, double>)
          detail::exp_inplace(P.col(j).data(), static_cast<std::size_t>(m));
        else
          col = col.unaryExpr([](S v) { return std::exp(v); });
        col /= col.sum();
        P.col(j).tail(n - m).setZero();
      }
    } else {
      if (c.causal) P.template triangularView<Eigen::StrictlyLower>().setZero();
      P.array().rowwise() /= count;
    }
    detail::multiply(Transpose::No, Transpose::No, V.middleRows(h * dk, dk), P,
                     O.middleRows(h * dk, dk));
  }
  Mat<S> A = affine(w.Wo, O, w.bo);
  if (cache) {
    cache->q = std::move(Q); cache->k = std::move(K); cache->v = std::move(V);
    cache->P = std::move(Ps); cache->o = std::move(O); cache->a = A;
  }
  return A;
}

template <class S>
Mat<S> contextual_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                           const Mat<S>& dA, BlockWeights<S>& g) {
  const Mat<S>& z = k.u1;
  const Eigen::Index n = z.cols();
  if (c.kind == LayerKind::Rnn) {
    // BPTT: dpre_t = (dA_t + W_h^T dpre_{t+1}) * (1 - h_t^2)
    Mat<S> dz(z.rows(), n);
    Vec<S> dnext = Vec<S>::Zero(w.Wh.rows());
    for (Eigen::Index t = n - 1; t >= 0; --t) {
      Vec<S> dpre = ((dA.col(t) + dnext).array() * (S(1) - k.a.col(t).array().square())).matrix();
      if (t > 0) g.Wh.noalias() += dpre * k.a.col(t - 1).transpose();
      g.Wx.noalias() += dpre * z.col(t).transpose();
      g.brnn.col(0) += dpre;
      dz.col(t) = w.Wx.transpose() * dpre;
      dnext = w.Wh.transpose() * dpre;
    }
    return dz;
  }
  const int dk = c.head_dim;
  const S scale = S(1) / std::sqrt(S(dk));
  using detail::multiply;
  constexpr auto N = Transpose::No, T = Transpose::Yes;
  multiply(N, T, dA, k.o, g.Wo, true);
  g.bo.col(0) += dA.rowwise().sum();
  Mat<S> dO(w.Wo.cols(), n);
  multiply(T, N, w.Wo, dA, dO);
  Mat<S> dQ(k.q.rows(), n), dK(k.k.rows(), n), dV(k.v.rows(), n);
  Eigen::Array<S, 1, Eigen::Dynamic> count(n);
  for (Eigen::Index j = 0; j < n; ++j)
    count(j) = S(allowed_keys(c.causal, static_cast<int>(j), static_cast<int>(n)));
  Mat<S> dP(n, n), dS(n, n);
  for (int h = 0; h < c.heads; ++h) {
    const Mat<S>& P = k.P[static_cast<std::size_t>(h)];
    auto dOh = dO.middleRows(h * dk, dk);
    multiply(N, T, dOh, P, dV.middleRows(h * dk, dk));
    multiply(T, N, k.v.middleRows(h * dk, dk), dOh, dP);  // keys x queries
    if (c.kind == LayerKind::Softmax) {
      // softmax Jacobian per query: dS = P * (dP - <P, dP>); masked keys have P = 0
      const auto s = (P.array() * dP.array()).colwise().sum().eval();
      dS = (P.array() * (dP.array().rowwise() - s)).matrix();
    } else {
      dS = (dP.array().rowwise() / count).matrix();
      if (c.causal) dS.template triangularView<Eigen::StrictlyLower>().setZero();
    }
    dS *= scale;
    multiply(N, N, k.k.middleRows(h * dk, dk), dS, dQ.middleRows(h * dk, dk));
    multiply(N, T, k.q.middleRows(h * dk, dk), dS, dK.middleRows(h * dk, dk));
  }
  multiply(N, T, dQ, z, g.Wq, true); g.bq.col(0) += dQ.rowwise().sum();
  multiply(N, T, dK, z, g.Wk, true); g.bk.col(0) += dK.rowwise().sum();
  multiply(N, T, dV, z, g.Wv, true); g.bv.col(0) += dV.rowwise().sum();
  Mat<S> dz(z.rows(), n);
  multiply(T, N, w.Wq, dQ, dz);
  multiply(T, N, w.Wk, dK, dz, true);
  multiply(T, N, w.Wv, dV, dz, true);
  return dz;
}


#define ICL_PATCH_INSTANTIATE(S)                                                                   \
  template Mat<S> contextual_forward(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,    \
                                     BlockCache<S>*);                                              \
  template Mat<S> contextual_backward(const ModelConfig&, const BlockWeights<S>&,                  \
                                      const BlockCache<S>&, const Mat<S>&, BlockWeights<S>&);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

}  // namespace icl::verify::patch
