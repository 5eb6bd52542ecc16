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
std::string to_string(Activation a) { return a == Activation::Gelu ? "gelu" : "relu"; }
LayerKind layer_kind_from_string(const std::string& s) {
  if (s == "softmax") return LayerKind::Softmax;
  if (s == "linear") return LayerKind::Linear;
  if (s == "rnn") return LayerKind::Rnn;
  throw InvalidParams("kind", "must be softmax, linear or rnn, got '" + s + "'");
}
Activation activation_from_string(const std::string& s) {
  if (s == "gelu") return Activation::Gelu;
  if (s == "relu") return Activation::Relu;
  throw InvalidParams("act", "must be gelu or relu, got '" + s + "'");
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
      b.g1 = Mat<S>::Zero(D, 1); b.be1 = Mat<S>::Zero(D, 1);
      b.g2 = Mat<S>::Zero(D, 1); b.be2 = Mat<S>::Zero(D, 1);
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

template <class S>
S gelu(S x) {  // x Phi(x)
  return x * S(0.5) * (S(1) + std::erf(x / std::sqrt(S(2))));
}
template <class S>
S gelu_grad(S x) {  // Phi(x) + x phi(x)
  const S phi = std::exp(-x * x / S(2)) / std::sqrt(S(2) * S(3.14159265358979323846));
  return S(0.5) * (S(1) + std::erf(x / std::sqrt(S(2)))) + x * phi;
}

// Number of keys query j attends to.
inline int allowed_keys(bool causal, int j, int n) { return causal ? j + 1 : n; }

}  // namespace

template <class S>
Mat<S> layernorm_forward(const Mat<S>& z, const Mat<S>& g, const Mat<S>& beta, double eps,
                         LayerNormCache<S>* cache) {
  const Eigen::Index D = z.rows(), n = z.cols();
  Mat<S> xhat(D, n);
  Vec<S> rstd(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const S mu = z.col(j).mean();
    const auto c = (z.col(j).array() - mu).matrix();
    const S var = c.squaredNorm() / S(D);
    rstd(j) = S(1) / std::sqrt(var + S(eps));
    xhat.col(j) = c * rstd(j);
  }
  Mat<S> y = (xhat.array().colwise() * g.col(0).array()).matrix();
  y.colwise() += beta.col(0);
  if (cache) {
    cache->xhat = xhat;
    cache->rstd = rstd;
  }
  return y;
}

namespace {

// dLN: given dy, adds into dg, dbeta and returns dz.
//   dxhat = dy * g;  dz = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
template <class S>
Mat<S> layernorm_backward(const Mat<S>& g, const LayerNormCache<S>& c, const Mat<S>& dy,
                          Mat<S>& dg, Mat<S>& dbeta) {
  const Eigen::Index D = dy.rows(), n = dy.cols();
  dg.col(0) += (dy.array() * c.xhat.array()).rowwise().sum().matrix();
  dbeta.col(0) += dy.rowwise().sum();
  Mat<S> dz(D, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    Vec<S> dx = (dy.col(j).array() * g.col(0).array()).matrix();
    const S m1 = dx.mean();
    const S m2 = dx.dot(c.xhat.col(j)) / S(D);
    dz.col(j) = c.rstd(j) * (dx.array() - m1 - c.xhat.col(j).array() * m2).matrix();
  }
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
  Mat<S> Q = w.Wq * z; Q.colwise() += w.bq.col(0);
  Mat<S> K = w.Wk * z; K.colwise() += w.bk.col(0);
  Mat<S> V = w.Wv * z; V.colwise() += w.bv.col(0);
  Mat<S> O(Q.rows(), n);
  std::vector<Mat<S>> Ps;
  for (int h = 0; h < c.heads; ++h) {
    // S_h = K_h^T Q_h / sqrt(d_k): rows are keys, columns queries
    Mat<S> P = (K.middleRows(h * dk, dk).transpose() * Q.middleRows(h * dk, dk)) * scale;
    for (Eigen::Index j = 0; j < n; ++j) {
      const int m = allowed_keys(c.causal, static_cast<int>(j), static_cast<int>(n));
      if (c.kind == LayerKind::Softmax) {
        const S mx = P.col(j).head(m).maxCoeff();
        P.col(j).head(m) = (P.col(j).head(m).array() - mx).exp().matrix();
        P.col(j).head(m) /= P.col(j).head(m).sum();
      } else {
        P.col(j).head(m) /= S(m);
      }
      P.col(j).tail(n - m).setZero();
    }
    O.middleRows(h * dk, dk) = V.middleRows(h * dk, dk) * P;
    if (cache) Ps.push_back(std::move(P));
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
  for (int h = 0; h < c.heads; ++h) {
    const Mat<S>& P = k.P[static_cast<std::size_t>(h)];
    auto dOh = dO.middleRows(h * dk, dk);
    dV.middleRows(h * dk, dk).noalias() = dOh * P.transpose();
    Mat<S> dP = k.v.middleRows(h * dk, dk).transpose() * dOh;  // keys x queries
    Mat<S> dS(n, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      const int m = allowed_keys(c.causal, static_cast<int>(j), static_cast<int>(n));
      if (c.kind == LayerKind::Softmax) {
        // softmax Jacobian: dS = P * (dP - <P, dP>)
        const S s = P.col(j).head(m).dot(dP.col(j).head(m));
        dS.col(j).head(m) = (P.col(j).head(m).array() * (dP.col(j).head(m).array() - s)).matrix();
      } else {
        dS.col(j).head(m) = dP.col(j).head(m) / S(m);
      }
      dS.col(j).tail(n - m).setZero();
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
    Mat<S> pre = w.W[i] * a;
    pre.colwise() += w.b[i].col(0);
    if (cache) cache->mlp_in.push_back(a);
    if (i + 1 < L) {
      if (c.act == Activation::Gelu) a = pre.unaryExpr([](S x) { return gelu(x); });
      else a = pre.cwiseMax(S(0));
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
    if (i + 1 < L) {
      const Mat<S>& pre = k.mlp_pre[i];
      if (c.act == Activation::Gelu)
        dpre = (da.array() * pre.unaryExpr([](S x) { return gelu_grad(x); }).array()).matrix();
      else
        dpre = (da.array() * (pre.array() > S(0)).template cast<S>()).matrix();
    } else {
      dpre = da;
    }
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
  Mat<S> u1 = c.layernorm ? layernorm_forward(z, w.g1, w.be1, c.ln_eps, cache ? &cache->ln1 : nullptr)
                          : z;
  Mat<S> a = contextual_forward(c, w, u1, cache);
  Mat<S> h = c.residual ? Mat<S>(z + a) : a;                       // H = Z + A
  Mat<S> u = c.layernorm ? layernorm_forward(h, w.g2, w.be2, c.ln_eps, cache ? &cache->ln2 : nullptr)
                         : h;                                      // MLP input
  Mat<S> y = mlp_forward(c, w, u, cache);
  if (c.residual) y += h;                                          // Y = H + MLP
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
  Mat<S> du = mlp_backward(c, w, k, d_y, g);
  Mat<S> dh = c.layernorm ? layernorm_backward(w.g2, k.ln2, du, g.g2, g.be2) : du;
  if (c.residual) dh += d_y;
  Mat<S> du1 = contextual_backward(c, w, k, dh, g);
  Mat<S> dz = c.layernorm ? layernorm_backward(w.g1, k.ln1, du1, g.g1, g.be1) : du1;
  if (c.residual) dz += dh;
  return dz;
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
     << ' ' << int(c.layernorm) << ' ' << c.ln_eps << '\n';
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
  try {
    c.kind = layer_kind_from_string(kind);
    c.act = activation_from_string(act);
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
