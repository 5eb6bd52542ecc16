#include "verify/patch/model/weights.hpp"

#include <cmath>
#include <random>

namespace icl::verify::patch {

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
    if (c.block.normalized()) {
      const bool shift = c.block.norm == Norm::LayerNorm, second = c.block.kind != BlockKind::Parallel;
      b.g1 = Mat<S>::Zero(D, 1);
      if (shift) b.be1 = Mat<S>::Zero(D, 1);
      if (second) b.g2 = Mat<S>::Zero(D, 1);
      if (shift && second) b.be2 = Mat<S>::Zero(D, 1);
    }
    if (c.block.gated()) {
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

#define ICL_PATCH_INSTANTIATE(S)                                                                 \
  template std::vector<std::pair<std::string, Mat<S>*>> parameters(Weights<S>&);                  \
  template std::vector<std::pair<std::string, Mat<S>*>> parameters(BlockWeights<S>&);             \
  template Weights<S> zeros<S>(const ModelConfig&);                                               \
  template Weights<S> zeros_like(const Weights<S>&);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

template Weights<float> cast_weights<float, double>(const Weights<double>&);
template Weights<double> cast_weights<double, double>(const Weights<double>&);
template Weights<double> cast_weights<double, float>(const Weights<float>&);
template BlockWeights<float> cast_block<float, double>(const BlockWeights<double>&);
template BlockWeights<double> cast_block<double, double>(const BlockWeights<double>&);

}  // namespace icl::verify::patch
