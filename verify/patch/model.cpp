#include "verify/patch/model.hpp"

#include "numerics/error.hpp"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>

namespace icl::verify::patch {

std::string to_string(LayerKind k) {
  switch (k) {
    case LayerKind::Softmax: return "softmax";
    case LayerKind::Linear: return "linear";
    case LayerKind::Rnn: return "rnn";
  }
  return "?";
}
std::string to_string(Activation a) {
  switch (a) {
    case Activation::Gelu: return "gelu";
    case Activation::Relu: return "relu";
    case Activation::Silu: return "silu";
  }
  return "?";
}
std::string to_string(Norm n) { return n == Norm::LayerNorm ? "layernorm" : "rmsnorm"; }
std::string to_string(BlockLayout l) {
  switch (l) {
    case BlockLayout::Sequential: return "sequential";
    case BlockLayout::PostNorm: return "postnorm";
    case BlockLayout::Parallel: return "parallel";
  }
  return "?";
}
std::string to_string(BlockKind b) {
  switch (b) {
    case BlockKind::Plain: return "plain";
    case BlockKind::Residual: return "residual";
    case BlockKind::PreNorm: return "preln";
    case BlockKind::PostNorm: return "postln";
    case BlockKind::Parallel: return "parallel";
  }
  return "?";
}
LayerKind layer_kind_from_string(const std::string& s) {
  if (s == "softmax") return LayerKind::Softmax;
  if (s == "linear") return LayerKind::Linear;
  if (s == "rnn") return LayerKind::Rnn;
  throw InvalidParams("kind", "must be softmax, linear or rnn, got '" + s + "'");
}
Activation activation_from_string(const std::string& s) {
  if (s == "gelu") return Activation::Gelu;
  if (s == "relu") return Activation::Relu;
  if (s == "silu") return Activation::Silu;
  throw InvalidParams("act", "must be gelu, relu or silu, got '" + s + "'");
}
Norm norm_from_string(const std::string& s) {
  if (s == "layernorm") return Norm::LayerNorm;
  if (s == "rmsnorm") return Norm::RmsNorm;
  throw InvalidParams("norm", "must be layernorm or rmsnorm, got '" + s + "'");
}
BlockLayout layout_from_string(const std::string& s) {
  if (s == "sequential") return BlockLayout::Sequential;
  if (s == "postnorm") return BlockLayout::PostNorm;
  if (s == "parallel") return BlockLayout::Parallel;
  throw InvalidParams("layout", "must be sequential, postnorm or parallel, got '" + s + "'");
}
BlockKind block_kind_from_string(const std::string& s) {
  for (BlockKind b : {BlockKind::Plain, BlockKind::Residual, BlockKind::PreNorm,
                      BlockKind::PostNorm, BlockKind::Parallel})
    if (s == to_string(b)) return b;
  throw InvalidParams("block", "must be plain, residual, preln, postln or parallel, got '" + s + "'");
}

BlockKind block_kind(const ModelConfig& c) {
  if (!c.residual) return BlockKind::Plain;
  if (c.layout == BlockLayout::Parallel) return BlockKind::Parallel;
  if (c.layout == BlockLayout::PostNorm) return BlockKind::PostNorm;
  return c.layernorm ? BlockKind::PreNorm : BlockKind::Residual;
}

void set_block(ModelConfig& c, BlockKind b, bool normalized) {
  const bool needs = b == BlockKind::PreNorm || b == BlockKind::PostNorm;
  const bool none = b == BlockKind::Plain || b == BlockKind::Residual;
  if (needs && !normalized) throw InvalidParams("norm", to_string(b) + " blocks need a norm (layernorm or rmsnorm)");
  if (none && normalized) throw InvalidParams("norm", to_string(b) + " blocks have no norm (use --norm none)");
  c.residual = b != BlockKind::Plain;
  c.layernorm = normalized;
  c.layout = b == BlockKind::PostNorm ? BlockLayout::PostNorm
             : b == BlockKind::Parallel ? BlockLayout::Parallel
                                         : BlockLayout::Sequential;
}

std::string mlp_name(const ModelConfig& c) {
  if (!c.gated) return to_string(c.act);
  return c.act == Activation::Silu ? "swiglu" : c.act == Activation::Gelu ? "geglu" : "reglu";
}

void set_mlp(ModelConfig& c, const std::string& name) {
  if (name == "swiglu" || name == "geglu") {
    c.gated = true;
    c.act = name == "swiglu" ? Activation::Silu : Activation::Gelu;
    return;
  }
  if (name != "gelu" && name != "relu" && name != "silu")
    throw InvalidParams("mlp", "must be gelu, relu, swiglu or geglu (or a hidden width), got '" + name + "'");
  c.gated = false;
  c.act = activation_from_string(name);
}

void ModelConfig::validate() const {
  auto fail = [](const char* field, const std::string& m) { throw InvalidParams(field, m); };
  if (token_dim < 1) fail("token_dim", "must be >= 1");
  if (width < 1) fail("width", "must be >= 1");
  if (!embed && width != token_dim)
    fail("width", "(" + std::to_string(width) + ") must equal token_dim (" +
                      std::to_string(token_dim) + ") without an embedding");
  if (layers < 1) fail("layers", "must be >= 1");
  if (kind != LayerKind::Rnn && heads < 1) fail("heads", "must be >= 1");
  if (kind != LayerKind::Rnn && head_dim < 1) fail("head_dim", "must be >= 1");
  if (mlp_hidden < 1) fail("mlp_hidden", "must be >= 1");
  if (mlp_depth < 1) fail("mlp_depth", "must be >= 1");
  if (layernorm && !residual) fail("layernorm", "requires residual (Pre-LN blocks, docs/patch.md §6)");
  if (layout == BlockLayout::PostNorm && !layernorm)
    fail("layout", "post-norm blocks need a norm (docs/patch.md §16)");
  if (layout != BlockLayout::Sequential && !residual)
    fail("layout", to_string(layout) + " blocks are residual (docs/patch.md §16)");
  if (gated && mlp_depth < 2)
    fail("mlp_depth", "a gated MLP needs depth >= 2 (gated hidden layer, then the down matrix)");
  if (!(ln_eps > 0)) fail("ln_eps", "must be > 0");
}

// ---- parameters ----------------------------------------------------------------------------

template <class S>
std::vector<std::pair<std::string, Mat<S>*>> parameters(BlockWeights<S>& w) {
  std::vector<std::pair<std::string, Mat<S>*>> p;
  auto add = [&](const char* n, Mat<S>& m) {
    if (m.size() > 0) p.emplace_back(n, &m);
  };
  add("Wq", w.Wq); add("bq", w.bq); add("Wk", w.Wk); add("bk", w.bk);
  add("Wv", w.Wv); add("bv", w.bv); add("Wo", w.Wo); add("bo", w.bo);
  add("Wh", w.Wh); add("Wx", w.Wx); add("brnn", w.brnn);
  add("g1", w.g1); add("be1", w.be1); add("g2", w.g2); add("be2", w.be2);
  add("Wg", w.Wg); add("bg", w.bg);
  for (std::size_t i = 0; i < w.W.size(); ++i) {
    std::string wn = "W", bn = "b";  // (appending avoids a GCC 12 -Wrestrict false positive)
    wn.append(std::to_string(i + 1));
    bn.append(std::to_string(i + 1));
    p.emplace_back(wn, &w.W[i]);
    p.emplace_back(bn, &w.b[i]);
  }
  return p;
}

template <class S>
std::vector<std::pair<std::string, Mat<S>*>> parameters(Weights<S>& w) {
  std::vector<std::pair<std::string, Mat<S>*>> p;
  if (w.config.embed) {
    p.emplace_back("We", &w.We);
    p.emplace_back("bE", &w.bE);
  }
  for (std::size_t l = 0; l < w.blocks.size(); ++l)
    for (auto& [n, m] : parameters(w.blocks[l]))
      p.emplace_back("block" + std::to_string(l) + "." + n, m);
  if (w.config.embed) {
    p.emplace_back("Wr", &w.Wr);
    p.emplace_back("br", &w.br);
  }
  return p;
}

template <class S>
Weights<S> zeros(const ModelConfig& c) {
  c.validate();
  Weights<S> w;
  w.config = c;
  const int D = c.width, T = c.token_dim;
  if (c.embed) {
    w.We = Mat<S>::Zero(D, T); w.bE = Mat<S>::Zero(D, 1);
    w.Wr = Mat<S>::Zero(T, D); w.br = Mat<S>::Zero(T, 1);
  }
  for (int l = 0; l < c.layers; ++l) {
    BlockWeights<S> b;
    if (c.kind == LayerKind::Rnn) {
      b.Wh = Mat<S>::Zero(D, D); b.Wx = Mat<S>::Zero(D, D); b.brnn = Mat<S>::Zero(D, 1);
    } else {
      const int I = c.heads * c.head_dim;
      b.Wq = Mat<S>::Zero(I, D); b.bq = Mat<S>::Zero(I, 1);
      b.Wk = Mat<S>::Zero(I, D); b.bk = Mat<S>::Zero(I, 1);
      b.Wv = Mat<S>::Zero(I, D); b.bv = Mat<S>::Zero(I, 1);
      b.Wo = Mat<S>::Zero(D, I); b.bo = Mat<S>::Zero(D, 1);
    }
    if (c.layernorm) {
      const bool shift = c.norm == Norm::LayerNorm, second = c.layout != BlockLayout::Parallel;
      b.g1 = Mat<S>::Zero(D, 1);
      if (shift) b.be1 = Mat<S>::Zero(D, 1);
      if (second) b.g2 = Mat<S>::Zero(D, 1);
      if (shift && second) b.be2 = Mat<S>::Zero(D, 1);
    }
    if (c.gated) {
      b.Wg = Mat<S>::Zero(c.mlp_hidden, D);
      b.bg = Mat<S>::Zero(c.mlp_hidden, 1);
    }
    int in = D;
    for (int i = 0; i < c.mlp_depth; ++i) {
      const int out = (i + 1 == c.mlp_depth) ? D : c.mlp_hidden;
      b.W.push_back(Mat<S>::Zero(out, in));
      b.b.push_back(Mat<S>::Zero(out, 1));
      in = out;
    }
    w.blocks.push_back(std::move(b));
  }
  return w;
}

template <class S>
Weights<S> zeros_like(const Weights<S>& w) {
  return zeros<S>(w.config);
}

std::size_t parameter_count(const ModelConfig& c) {
  auto w = zeros<double>(c);
  std::size_t n = 0;
  for (auto& [name, m] : parameters(w)) n += static_cast<std::size_t>(m->size());
  return n;
}

Weights<double> init_weights(const ModelConfig& c, const InitOptions& p) {
  Weights<double> w = zeros<double>(c);
  std::mt19937_64 rng(p.seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  auto dense = [&](Mat<double>& m) {
    const double s = p.gain / std::sqrt(static_cast<double>(m.cols()));
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = s * nd(rng);
  };
  auto bias = [&](Mat<double>& m) {
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = p.bias_std * nd(rng);
  };
  for (auto& [name, m] : parameters(w)) {
    const std::string leaf = name.substr(name.rfind('.') + 1);
    if (leaf == "g1" || leaf == "g2") m->setOnes();
    else if (leaf == "be1" || leaf == "be2") m->setZero();
    else if (m->cols() == 1 && leaf[0] == 'b') bias(*m);
    else dense(*m);
    if (leaf == "Wh") {
      // Scale the recurrent matrix: a Gaussian D x D matrix with entries N(0, 1/D) has
      // spectral radius about 1, so multiply by rnn_radius.
      *m *= p.rnn_radius;
    }
  }
  return w;
}

template <class T, class S>
BlockWeights<T> cast_block(const BlockWeights<S>& w) {
  BlockWeights<T> r;
  r.Wq = w.Wq.template cast<T>(); r.bq = w.bq.template cast<T>();
  r.Wk = w.Wk.template cast<T>(); r.bk = w.bk.template cast<T>();
  r.Wv = w.Wv.template cast<T>(); r.bv = w.bv.template cast<T>();
  r.Wo = w.Wo.template cast<T>(); r.bo = w.bo.template cast<T>();
  r.Wh = w.Wh.template cast<T>(); r.Wx = w.Wx.template cast<T>(); r.brnn = w.brnn.template cast<T>();
  r.g1 = w.g1.template cast<T>(); r.be1 = w.be1.template cast<T>();
  r.g2 = w.g2.template cast<T>(); r.be2 = w.be2.template cast<T>();
  r.Wg = w.Wg.template cast<T>(); r.bg = w.bg.template cast<T>();
  for (auto& m : w.W) r.W.push_back(m.template cast<T>());
  for (auto& m : w.b) r.b.push_back(m.template cast<T>());
  return r;
}

template <class T, class S>
Weights<T> cast_weights(const Weights<S>& w) {
  Weights<T> r;
  r.config = w.config;
  r.We = w.We.template cast<T>(); r.bE = w.bE.template cast<T>();
  r.Wr = w.Wr.template cast<T>(); r.br = w.br.template cast<T>();
  for (auto& b : w.blocks) r.blocks.push_back(cast_block<T>(b));
  return r;
}

// ---- layers --------------------------------------------------------------------------------

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;   // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

// f(x) elementwise. GELU x Phi(x) (exact erf form), ReLU, SiLU x sigma(x). Whole-matrix array
// expressions (Eigen vectorizes exp; erf is scalar).
template <class S>
Mat<S> activate(Activation act, const Mat<S>& x) {
  switch (act) {
    case Activation::Gelu:
      return (x.array() * (S(0.5) + S(0.5) * (x.array() * S(kSqrt1_2)).unaryExpr(
                                                 [](S v) { return std::erf(v); })))
          .matrix();
    case Activation::Relu: return x.cwiseMax(S(0));
    case Activation::Silu: return (x.array() / (S(1) + (-x.array()).exp())).matrix();
  }
  return x;
}
// f'(x) elementwise: GELU Phi(x) + x phi(x); ReLU 1[x > 0]; SiLU sigma(x) (1 + x (1 - sigma(x))).
template <class S>
Mat<S> activate_grad(Activation act, const Mat<S>& x) {
  switch (act) {
    case Activation::Gelu: {
      const auto phi = (x.array().square() * S(-0.5)).exp() * S(kInvSqrt2Pi);
      return (S(0.5) + S(0.5) * (x.array() * S(kSqrt1_2)).unaryExpr([](S v) { return std::erf(v); }) +
              x.array() * phi)
          .matrix();
    }
    case Activation::Relu: return (x.array() > S(0)).template cast<S>().matrix();
    case Activation::Silu: {
      const auto sig = (S(1) / (S(1) + (-x.array()).exp())).eval();
      return (sig * (S(1) + x.array() * (S(1) - sig))).matrix();
    }
  }
  return x;
}

// W x + b for every column of x. With a small inner dimension (the token width 3 of the paper's
// plain model) a coefficient-wise product beats the packed GEMM, whose packing dominates.
template <class S>
Mat<S> affine(const Mat<S>& W, const Mat<S>& x, const Mat<S>& b) {
  constexpr Eigen::Index kSmallInner = 8;
  Mat<S> y(W.rows(), x.cols());
  if (W.cols() <= kSmallInner) y.noalias() = W.lazyProduct(x);
  else y.noalias() = W * x;
  y.colwise() += b.col(0);
  return y;
}

// Number of keys query j attends to.
inline int allowed_keys(bool causal, int j, int n) { return causal ? j + 1 : n; }

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

namespace {

// The block's normalization (c.norm) with gain g and shift beta (LayerNorm only).
template <class S>
Mat<S> norm_forward(const ModelConfig& c, const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta,
                    LayerNormCache<S>* cache) {
  return c.norm == Norm::LayerNorm ? layernorm_forward(z, g, beta, c.ln_eps, cache)
                                   : rmsnorm_forward(z, g, c.ln_eps, cache);
}

// dNorm: given dy, adds into dg (and dbeta for LayerNorm) and returns dz.
//   dxhat = dy * g;  LayerNorm: dz = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
//                    RMSNorm:   dz = rstd * (dxhat - xhat * mean(dxhat * xhat))
template <class S>
Mat<S> norm_backward(const ModelConfig& c, const Mat<S>& g, const LayerNormCache<S>& k,
                     const Mat<S>& dy, Mat<S>& dg, Mat<S>& dbeta) {
  const S D = S(dy.rows());
  dg.col(0) += (dy.array() * k.xhat.array()).rowwise().sum().matrix();
  if (c.norm == Norm::LayerNorm) dbeta.col(0) += dy.rowwise().sum();
  Mat<S> dx = (dy.array().colwise() * g.col(0).array()).matrix();
  const auto m2 = ((dx.array() * k.xhat.array()).colwise().sum() / D).eval();
  Mat<S> dz = dx - (k.xhat.array().rowwise() * m2).matrix();
  if (c.norm == Norm::LayerNorm) dz.rowwise() -= dx.colwise().mean();
  dz.array().rowwise() *= k.rstd.array().transpose();
  return dz;
}

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
    P.noalias() = K.middleRows(h * dk, dk).transpose() * Q.middleRows(h * dk, dk);
    P *= scale;
    if (c.kind == LayerKind::Softmax) {
      // Column by column over the allowed keys only (half the exps with the causal mask), in
      // place on contiguous column segments (no temporaries). std::exp: on SSE2 Eigen's packet
      // exp for double is no faster (measured), and std::exp keeps the values of earlier versions.
      for (Eigen::Index j = 0; j < n; ++j) {
        const Eigen::Index m = static_cast<Eigen::Index>(count(j));
        auto col = P.col(j).head(m).array();
        col -= col.maxCoeff();
        col = col.unaryExpr([](S v) { return std::exp(v); });
        col /= col.sum();
        P.col(j).tail(n - m).setZero();
      }
    } else {
      if (c.causal) P.template triangularView<Eigen::StrictlyLower>().setZero();
      P.array().rowwise() /= count;
    }
    O.middleRows(h * dk, dk).noalias() = V.middleRows(h * dk, dk) * P;
  }
  Mat<S> A = w.Wo * O;
  A.colwise() += w.bo.col(0);
  if (cache) {
    cache->q = std::move(Q); cache->k = std::move(K); cache->v = std::move(V);
    cache->P = std::move(Ps); cache->o = std::move(O); cache->a = A;
  }
  return A;
}

namespace {

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
  g.Wo.noalias() += dA * k.o.transpose();
  g.bo.col(0) += dA.rowwise().sum();
  Mat<S> dO = w.Wo.transpose() * dA;
  Mat<S> dQ(k.q.rows(), n), dK(k.k.rows(), n), dV(k.v.rows(), n);
  Eigen::Array<S, 1, Eigen::Dynamic> count(n);
  for (Eigen::Index j = 0; j < n; ++j)
    count(j) = S(allowed_keys(c.causal, static_cast<int>(j), static_cast<int>(n)));
  Mat<S> dP(n, n), dS(n, n);
  for (int h = 0; h < c.heads; ++h) {
    const Mat<S>& P = k.P[static_cast<std::size_t>(h)];
    auto dOh = dO.middleRows(h * dk, dk);
    dV.middleRows(h * dk, dk).noalias() = dOh * P.transpose();
    dP.noalias() = k.v.middleRows(h * dk, dk).transpose() * dOh;  // keys x queries
    if (c.kind == LayerKind::Softmax) {
      // softmax Jacobian per query: dS = P * (dP - <P, dP>); masked keys have P = 0
      const auto s = (P.array() * dP.array()).colwise().sum().eval();
      dS = (P.array() * (dP.array().rowwise() - s)).matrix();
    } else {
      dS = (dP.array().rowwise() / count).matrix();
      if (c.causal) dS.template triangularView<Eigen::StrictlyLower>().setZero();
    }
    dS *= scale;
    dQ.middleRows(h * dk, dk).noalias() = k.k.middleRows(h * dk, dk) * dS;
    dK.middleRows(h * dk, dk).noalias() = k.q.middleRows(h * dk, dk) * dS.transpose();
  }
  g.Wq.noalias() += dQ * z.transpose(); g.bq.col(0) += dQ.rowwise().sum();
  g.Wk.noalias() += dK * z.transpose(); g.bk.col(0) += dK.rowwise().sum();
  g.Wv.noalias() += dV * z.transpose(); g.bv.col(0) += dV.rowwise().sum();
  Mat<S> dz = w.Wq.transpose() * dQ;
  dz.noalias() += w.Wk.transpose() * dK;
  dz.noalias() += w.Wv.transpose() * dV;
  return dz;
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
    if (i == 0 && c.gated) {
      // gated hidden layer f(W_g u + b_g) * (W_1 u + b_1) (docs/patch.md §16)
      Mat<S> gp = affine(w.Wg, a, w.bg);
      Mat<S> ga = activate(c.act, gp);
      a = (ga.array() * pre.array()).matrix();
      if (cache) { cache->gate_pre = std::move(gp); cache->gate_act = std::move(ga); }
    } else if (i + 1 < L) {
      a = activate(c.act, pre);
    } else {
      a = pre;
    }
    if (cache) cache->mlp_pre.push_back(std::move(pre));
  }
  return a;
}

namespace {

template <class S>
Mat<S> mlp_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                    const Mat<S>& dy, BlockWeights<S>& g) {
  Mat<S> da = dy;
  const std::size_t L = w.W.size();
  for (std::size_t i = L; i-- > 0;) {
    Mat<S> dpre;
    if (i == 0 && c.gated) {
      // a = f(gp) * up: d up = da * f(gp), d gp = da * up * f'(gp)
      dpre = (da.array() * k.gate_act.array()).matrix();
      const Mat<S> dgp =
          (da.array() * k.mlp_pre[0].array() * activate_grad(c.act, k.gate_pre).array()).matrix();
      g.Wg.noalias() += dgp * k.mlp_in[0].transpose();
      g.bg.col(0) += dgp.rowwise().sum();
      g.W[0].noalias() += dpre * k.mlp_in[0].transpose();
      g.b[0].col(0) += dpre.rowwise().sum();
      da = w.W[0].transpose() * dpre;
      da.noalias() += w.Wg.transpose() * dgp;
      continue;
    }
    if (i + 1 < L) dpre = (da.array() * activate_grad(c.act, k.mlp_pre[i]).array()).matrix();
    else dpre = da;
    g.W[i].noalias() += dpre * k.mlp_in[i].transpose();
    g.b[i].col(0) += dpre.rowwise().sum();
    da = w.W[i].transpose() * dpre;
  }
  return da;
}

}  // namespace

template <class S>
Mat<S> block_forward(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z,
                     BlockCache<S>* cache) {
  if (cache) cache->z = z;
  LayerNormCache<S>* ln1 = cache ? &cache->ln1 : nullptr;
  LayerNormCache<S>* ln2 = cache ? &cache->ln2 : nullptr;
  const bool pre_norm = c.layernorm && c.layout != BlockLayout::PostNorm;
  Mat<S> u1 = pre_norm ? norm_forward(c, z, w.g1, w.be1, ln1) : z;   // attention input
  Mat<S> a = contextual_forward(c, w, u1, cache);
  Mat<S> h, u, y;
  switch (c.layout) {
    case BlockLayout::Sequential:
      h = c.residual ? Mat<S>(z + a) : a;                                  // H = Z + A
      u = c.layernorm ? norm_forward(c, h, w.g2, w.be2, ln2) : h;         // MLP input
      y = mlp_forward(c, w, u, cache);
      if (c.residual) y += h;                                              // Y = H + MLP
      break;
    case BlockLayout::PostNorm:
      h = norm_forward(c, Mat<S>(z + a), w.g1, w.be1, ln1);               // H = N1(Z + A)
      u = h;
      y = norm_forward(c, Mat<S>(h + mlp_forward(c, w, u, cache)), w.g2, w.be2, ln2);  // N2(H + M)
      break;
    case BlockLayout::Parallel:
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

namespace {

// Backpropagation through one block: adds dLoss/dparams into g, returns dLoss/dz.
template <class S>
Mat<S> block_backward(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& k,
                      const Mat<S>& d_y, BlockWeights<S>& g) {
  switch (c.layout) {
    case BlockLayout::Sequential: {
      Mat<S> du = mlp_backward(c, w, k, d_y, g);
      Mat<S> dh = c.layernorm ? norm_backward(c, w.g2, k.ln2, du, g.g2, g.be2) : du;
      if (c.residual) dh += d_y;
      Mat<S> du1 = contextual_backward(c, w, k, dh, g);
      Mat<S> dz = c.layernorm ? norm_backward(c, w.g1, k.ln1, du1, g.g1, g.be1) : du1;
      if (c.residual) dz += dh;
      return dz;
    }
    case BlockLayout::PostNorm: {
      const Mat<S> dv = norm_backward(c, w.g2, k.ln2, d_y, g.g2, g.be2);  // v = H + M(H)
      const Mat<S> dh = dv + mlp_backward(c, w, k, dv, g);
      const Mat<S> dr = norm_backward(c, w.g1, k.ln1, dh, g.g1, g.be1);  // r = Z + A(Z)
      return dr + contextual_backward(c, w, k, dr, g);
    }
    case BlockLayout::Parallel: {
      Mat<S> du = mlp_backward(c, w, k, d_y, g);
      du += contextual_backward(c, w, k, d_y, g);
      Mat<S> dz = c.layernorm ? norm_backward(c, w.g1, k.ln1, du, g.g1, g.be1) : du;
      return dz + d_y;
    }
  }
  return d_y;
}

}  // namespace

template <class S>
Mat<S> embed(const Weights<S>& w, const Mat<S>& tokens) {
  if (!w.config.embed) return tokens;
  Mat<S> e = w.We * tokens;
  e.colwise() += w.bE.col(0);
  return e;
}

template <class S>
Mat<S> readout(const Weights<S>& w, const Mat<S>& y) {
  if (!w.config.embed) return y;
  Mat<S> r = w.Wr * y;
  r.colwise() += w.br.col(0);
  return r;
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
  if (c.embed) {
    grad.Wr.noalias() += d_out * cache.layer_inputs.back().transpose();
    grad.br.col(0) += d_out.rowwise().sum();
    dz = w.Wr.transpose() * d_out;
  }
  for (std::size_t l = w.blocks.size(); l-- > 0;)
    dz = block_backward(c, w.blocks[l], cache.blocks[l], dz, grad.blocks[l]);
  if (c.embed) {
    grad.We.noalias() += dz * cache.tokens.transpose();
    grad.bE.col(0) += dz.rowwise().sum();
    dz = w.We.transpose() * dz;
  }
  return dz;
}

// ---- save / load ---------------------------------------------------------------------------

void save_weights(const Weights<double>& w0, std::ostream& os) {
  Weights<double> w = w0;
  const ModelConfig& c = w.config;
  os << "icl-patch-weights 1\n";
  os << std::setprecision(std::numeric_limits<double>::max_digits10);
  os << "config " << c.token_dim << ' ' << int(c.embed) << ' ' << c.width << ' ' << c.layers << ' '
     << to_string(c.kind) << ' ' << c.heads << ' ' << c.head_dim << ' ' << int(c.causal) << ' '
     << c.mlp_hidden << ' ' << c.mlp_depth << ' ' << to_string(c.act) << ' ' << int(c.residual)
     << ' ' << int(c.layernorm) << ' ' << c.ln_eps << ' ' << int(c.gated) << ' '
     << to_string(c.norm) << ' ' << to_string(c.layout) << '\n';
  for (auto& [name, m] : parameters(w)) {
    os << name << ' ' << m->rows() << ' ' << m->cols() << '\n';
    for (Eigen::Index i = 0; i < m->size(); ++i) os << m->data()[i] << (i + 1 == m->size() ? '\n' : ' ');
  }
  if (!os) throw std::runtime_error("failed to write weights");
}

Weights<double> load_weights(std::istream& is) {
  std::string magic, tag;
  int version = 0;
  if (!(is >> magic >> version) || magic != "icl-patch-weights" || version != 1)
    throw std::runtime_error("not an icl-patch-weights v1 file");
  ModelConfig c;
  int embed = 0, causal = 0, residual = 0, ln = 0;
  std::string kind, act;
  if (!(is >> tag) || tag != "config" ||
      !(is >> c.token_dim >> embed >> c.width >> c.layers >> kind >> c.heads >> c.head_dim >>
        causal >> c.mlp_hidden >> c.mlp_depth >> act >> residual >> ln >> c.ln_eps))
    throw std::runtime_error("weights file: malformed config line");
  c.embed = embed != 0; c.causal = causal != 0; c.residual = residual != 0; c.layernorm = ln != 0;
  // Optional trailing fields (absent in files written before gated MLPs, RMSNorm and the
  // post-norm/parallel layouts): <gated 0|1> <norm> <layout>.
  std::string rest, norm = "layernorm", layout = "sequential";
  std::getline(is, rest);
  std::istringstream extra(rest);
  int gated = 0;
  if (extra >> gated && !(extra >> norm >> layout))
    throw std::runtime_error("weights file: malformed config line (gated, norm, layout)");
  c.gated = gated != 0;
  try {
    c.kind = layer_kind_from_string(kind);
    c.act = activation_from_string(act);
    c.norm = norm_from_string(norm);
    c.layout = layout_from_string(layout);
    c.validate();
  } catch (const InvalidParams& e) {
    throw std::runtime_error(std::string("weights file: ") + e.what());
  }
  Weights<double> w = zeros<double>(c);
  for (auto& [name, m] : parameters(w)) {
    std::string n;
    Eigen::Index r = 0, cc = 0;
    if (!(is >> n >> r >> cc) || n != name || r != m->rows() || cc != m->cols())
      throw std::runtime_error("weights file: expected parameter " + name + " " +
                               std::to_string(m->rows()) + "x" + std::to_string(m->cols()) +
                               ", got '" + n + "'");
    for (Eigen::Index i = 0; i < m->size(); ++i)
      if (!(is >> m->data()[i])) throw std::runtime_error("weights file: truncated at " + name);
  }
  return w;
}

Weights<double> load_weights_file(const std::string& path) {
  std::ifstream is(path);
  if (!is) throw std::runtime_error("cannot open weights file '" + path + "'");
  return load_weights(is);
}

// ---- explicit instantiations ------------------------------------------------------------------

#define ICL_PATCH_INSTANTIATE(S)                                                                   \
  template std::vector<std::pair<std::string, Mat<S>*>> parameters(Weights<S>&);                   \
  template std::vector<std::pair<std::string, Mat<S>*>> parameters(BlockWeights<S>&);              \
  template Weights<S> zeros<S>(const ModelConfig&);                                                \
  template Weights<S> zeros_like(const Weights<S>&);                                               \
  template Mat<S> contextual_forward(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,    \
                                     BlockCache<S>*);                                              \
  template Mat<S> mlp_forward(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,           \
                              BlockCache<S>*);                                                     \
  template Mat<S> layernorm_forward(const Mat<S>&, const Mat<S>&, const Mat<S>&, double,           \
                                    LayerNormCache<S>*);                                           \
  template Mat<S> rmsnorm_forward(const Mat<S>&, const Mat<S>&, double, LayerNormCache<S>*);       \
  template Mat<S> block_forward(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,         \
                                BlockCache<S>*);                                                   \
  template Mat<S> embed(const Weights<S>&, const Mat<S>&);                                         \
  template Mat<S> readout(const Weights<S>&, const Mat<S>&);                                       \
  template Mat<S> forward(const Weights<S>&, const Mat<S>&, ForwardCache<S>*);                     \
  template Mat<S> backward(const Weights<S>&, const ForwardCache<S>&, const Mat<S>&, Weights<S>&);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

template Weights<float> cast_weights<float, double>(const Weights<double>&);
template Weights<double> cast_weights<double, double>(const Weights<double>&);
template Weights<double> cast_weights<double, float>(const Weights<float>&);
template BlockWeights<float> cast_block<float, double>(const BlockWeights<double>&);
template BlockWeights<double> cast_block<double, double>(const BlockWeights<double>&);

}  // namespace icl::verify::patch
