// The MLP of a block (docs/patch.md §2.2, §16.2): dense layers with GELU, ReLU or SiLU between
// them, or a gated first hidden layer (SwiGLU, GeGLU); forward and backward.
#include <cmath>
#include <type_traits>

#include "verify/patch/model/detail/products.hpp"
#include "verify/patch/model/detail/vmath.hpp"
#include "verify/patch/model/layers.hpp"

namespace icl::verify::patch {
namespace {

using detail::affine;

constexpr double kSqrt1_2 = 0.70710678118654752440;   // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

// f of every entry: for double the vectorized kernel `vec` of detail/vmath.hpp (docs/patch.md
// §2.6), for float `g` of the matrix (the float model's values of earlier versions: Eigen's exp,
// std::erf).
template <class S, class G>
Mat<S> elementwise(Mat<S> t, void (*vec)(double*, std::size_t), G g) {
  if constexpr (std::is_same_v<S, double>)
    vec(t.data(), static_cast<std::size_t>(t.size()));
  else
    t = g(t);
  return t;
}
template <class S>
Mat<S> exp_of(Mat<S> t) {
  return elementwise(std::move(t), detail::exp_inplace,
                     [](const Mat<S>& m) -> Mat<S> { return m.array().exp().matrix(); });
}
template <class S>
Mat<S> erf_of(Mat<S> t) {
  return elementwise(std::move(t), detail::erf_inplace, [](const Mat<S>& m) -> Mat<S> {
    return m.unaryExpr([](S v) { return std::erf(v); });
  });
}

// f(x) elementwise. GELU x Phi(x) (exact erf form), ReLU, SiLU x sigma(x).
template <class S>
Mat<S> activate(Activation act, const Mat<S>& x) {
  switch (act) {
    case Activation::Gelu:
      return (x.array() * (S(0.5) + S(0.5) * erf_of<S>(x * S(kSqrt1_2)).array())).matrix();
    case Activation::Relu: return x.cwiseMax(S(0));
    case Activation::Silu: return (x.array() / (S(1) + exp_of<S>(-x).array())).matrix();
  }
  return x;
}
// f'(x) elementwise: GELU Phi(x) + x phi(x); ReLU 1[x > 0]; SiLU sigma(x) (1 + x (1 - sigma(x))).
template <class S>
Mat<S> activate_grad(Activation act, const Mat<S>& x) {
  switch (act) {
    case Activation::Gelu: {
      const Mat<S> phi = exp_of<S>(x.array().square().matrix() * S(-0.5)) * S(kInvSqrt2Pi);
      return (S(0.5) + S(0.5) * erf_of<S>(x * S(kSqrt1_2)).array() + x.array() * phi.array())
          .matrix();
    }
    case Activation::Relu: return (x.array() > S(0)).template cast<S>().matrix();
    case Activation::Silu: {
      const auto sig = (S(1) / (S(1) + exp_of<S>(-x).array())).eval();
      return (sig * (S(1) + x.array() * (S(1) - sig))).matrix();
    }
  }
  return x;
}

}  // namespace

template <class S>
Mat<S> mlp_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& u,
                   BlockCache<S>* cache) {
  Mat<S> a = u;
  if (cache) { cache->mlp_in.clear(); cache->mlp_pre.clear(); }
  const std::size_t L = w.W.size();
  for (std::size_t i = 0; i < L; ++i) {
    Mat<S> pre = affine(w.W[i], a, w.b[i]);
    if (cache) cache->mlp_in.push_back(a);
    if (i == 0 && c.block.gated()) {
      // gated hidden layer f(W_g u + b_g) * (W_1 u + b_1) (docs/patch.md §16)
      Mat<S> gp = affine(w.Wg, a, w.bg);
      Mat<S> ga = activate(c.block.activation(), gp);
      a = (ga.array() * pre.array()).matrix();
      if (cache) { cache->gate_pre = std::move(gp); cache->gate_act = std::move(ga); }
    } else if (i + 1 < L) {
      a = activate(c.block.activation(), pre);
    } else {
      a = pre;
    }
    if (cache) cache->mlp_pre.push_back(std::move(pre));
  }
  return a;
}

template <class S>
Mat<S> mlp_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                    const Mat<S>& dy, BlockWeights<S>& g) {
  using detail::multiply;
  constexpr auto N = detail::Transpose::No, T = detail::Transpose::Yes;
  Mat<S> da = dy;
  const std::size_t L = w.W.size();
  for (std::size_t i = L; i-- > 0;) {
    Mat<S> dpre;
    if (i == 0 && c.block.gated()) {
      // a = f(gp) * up: d up = da * f(gp), d gp = da * up * f'(gp)
      dpre = (da.array() * k.gate_act.array()).matrix();
      const Mat<S> dgp = (da.array() * k.mlp_pre[0].array() *
                          activate_grad(c.block.activation(), k.gate_pre).array())
                             .matrix();
      multiply(N, T, dgp, k.mlp_in[0], g.Wg, true);
      g.bg.col(0) += dgp.rowwise().sum();
      multiply(N, T, dpre, k.mlp_in[0], g.W[0], true);
      g.b[0].col(0) += dpre.rowwise().sum();
      da.resize(w.W[0].cols(), dpre.cols());
      multiply(T, N, w.W[0], dpre, da);
      multiply(T, N, w.Wg, dgp, da, true);
      continue;
    }
    if (i + 1 < L)
      dpre = (da.array() * activate_grad(c.block.activation(), k.mlp_pre[i]).array()).matrix();
    else dpre = da;
    multiply(N, T, dpre, k.mlp_in[i], g.W[i], true);
    g.b[i].col(0) += dpre.rowwise().sum();
    da.resize(w.W[i].cols(), dpre.cols());
    multiply(T, N, w.W[i], dpre, da);
  }
  return da;
}

#define ICL_PATCH_INSTANTIATE(S)                                                                   \
  template Mat<S> mlp_forward(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,           \
                              BlockCache<S>*);                                                     \
  template Mat<S> mlp_backward(const ModelConfig&, const BlockWeights<S>&, const BlockCache<S>&,   \
                               const Mat<S>&, BlockWeights<S>&);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

}  // namespace icl::verify::patch
