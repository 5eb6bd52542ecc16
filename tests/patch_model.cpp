// Building blocks of verify/patch: forward passes against naive loop references written here,
// backpropagation against central finite differences, save/load round trip.
#include <doctest/doctest.h>

#include "patch_test_util.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "verify/patch/model.hpp"

using namespace icl::verify::patch;
using M = Mat<double>;

namespace {

using icl_test::random_mat;

// Naive multi-head attention, written with explicit loops (independent of the library).
M naive_attention(const ModelConfig& c, const BlockWeights<double>& w, const M& z) {
  const int n = static_cast<int>(z.cols()), dk = c.head_dim, D = static_cast<int>(w.Wo.rows());
  M concat = M::Zero(c.heads * dk, n);
  for (int h = 0; h < c.heads; ++h) {
    for (int j = 0; j < n; ++j) {
      const int m = c.causal ? j + 1 : n;
      std::vector<double> s(static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) {
        double dot = 0;
        for (int r = 0; r < dk; ++r) {
          const int row = h * dk + r;
          double q = w.bq(row, 0), k = w.bk(row, 0);
          for (int t = 0; t < z.rows(); ++t) {
            q += w.Wq(row, t) * z(t, j);
            k += w.Wk(row, t) * z(t, i);
          }
          dot += q * k;
        }
        s[static_cast<std::size_t>(i)] = dot / std::sqrt(double(dk));
      }
      if (c.kind == LayerKind::Softmax) {
        double mx = -1e300, tot = 0;
        for (double v : s) mx = std::max(mx, v);
        for (double& v : s) { v = std::exp(v - mx); tot += v; }
        for (double& v : s) v /= tot;
      } else {
        for (double& v : s) v /= m;
      }
      for (int r = 0; r < dk; ++r) {
        const int row = h * dk + r;
        for (int i = 0; i < m; ++i) {
          double v = w.bv(row, 0);
          for (int t = 0; t < z.rows(); ++t) v += w.Wv(row, t) * z(t, i);
          concat(row, j) += s[static_cast<std::size_t>(i)] * v;
        }
      }
    }
  }
  M out(D, n);
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < D; ++r) {
      double v = w.bo(r, 0);
      for (int t = 0; t < concat.rows(); ++t) v += w.Wo(r, t) * concat(t, j);
      out(r, j) = v;
    }
  return out;
}

// Tokens in R^3; width 3 (no embedding) or 5 (with one); 2 heads of 3, MLP 7 x 7, depth 3.
ModelConfig small_config(LayerKind kind, BlockKind block, int width, int layers) {
  return ModelSpec{.layers = layers, .kind = kind, .heads = 2, .head_dim = 3, .width = width,
                   .mlp_hidden = 7, .mlp_depth = 3, .block = {block}}
      .config();
}

}  // namespace

TEST_CASE("attention forward matches a naive loop implementation") {
  for (LayerKind kind : {LayerKind::Softmax, LayerKind::Linear}) {
    for (bool causal : {true, false}) {
      ModelConfig c = small_config(kind, BlockKind::Plain, 3, 1);
      c.causal = causal;
      auto w = init_weights(c, {.seed = 11});
      const M z = random_mat(3, 7, 5);
      const M a = contextual_forward(c, w.blocks[0], z);
      const M ref = naive_attention(c, w.blocks[0], z);
      CHECK((a - ref).cwiseAbs().maxCoeff() < 1e-12 * (1 + ref.cwiseAbs().maxCoeff()));
    }
  }
}

TEST_CASE("single-token softmax attention is affine: A(x) = W_O (W_V x + b_V) + b_O") {
  ModelConfig c = small_config(LayerKind::Softmax, BlockKind::Plain, 3, 1);
  auto w = init_weights(c, {.seed = 3});
  const M x = random_mat(3, 1, 9);
  const auto& b = w.blocks[0];
  const M ref = b.Wo * (b.Wv * x + b.bv) + b.bo;
  CHECK((contextual_forward(c, b, x) - ref).norm() < 1e-13);
}

TEST_CASE("Elman RNN and LayerNorm match direct formulas") {
  ModelConfig c = small_config(LayerKind::Rnn, BlockKind::Plain, 3, 1);
  auto w = init_weights(c, {.seed = 4});
  const M z = random_mat(3, 5, 8);
  const auto& b = w.blocks[0];
  Vec<double> h = Vec<double>::Zero(3);
  const M H = contextual_forward(c, b, z);
  for (int t = 0; t < 5; ++t) {
    Vec<double> pre = b.Wh * h + b.Wx * z.col(t) + b.brnn.col(0);
    for (int i = 0; i < 3; ++i) h(i) = std::tanh(pre(i));
    CHECK((H.col(t) - h).norm() < 1e-14);
  }
  const M g = M::Constant(4, 1, 1.0), be = M::Zero(4, 1);
  const M y = layernorm_forward(random_mat(4, 6, 2, 3.0), g, be, 1e-12);
  for (int j = 0; j < 6; ++j) {
    CHECK(std::abs(y.col(j).mean()) < 1e-12);
    CHECK(std::abs(y.col(j).squaredNorm() / 4 - 1) < 1e-9);
  }
}

TEST_CASE("backpropagation matches central finite differences (rel err < 1e-6)") {
  struct Case { std::string name; ModelConfig c; };
  std::vector<Case> cases{
      {"plain softmax", small_config(LayerKind::Softmax, BlockKind::Plain, 3, 1)},
      {"plain linear", small_config(LayerKind::Linear, BlockKind::Plain, 3, 1)},
      {"plain rnn", small_config(LayerKind::Rnn, BlockKind::Plain, 3, 1)},
      {"residual softmax", small_config(LayerKind::Softmax, BlockKind::Residual, 3, 1)},
      {"pre-ln softmax x2 embed", small_config(LayerKind::Softmax, BlockKind::PreLn, 5, 2)},
      {"pre-ln rnn embed", small_config(LayerKind::Rnn, BlockKind::PreLn, 5, 1)},
  };
  cases[1].c.causal = false;
  cases.push_back({"relu mlp", small_config(LayerKind::Softmax, BlockKind::PreLn, 5, 1)});
  cases.back().c.block.mlp = Mlp::Relu;
  for (auto& cs : cases) {
    CAPTURE(cs.name);
    icl_test::check_gradients(cs.c, 21);
  }
}

TEST_CASE("weights save/load round trip is exact and mismatches are reported") {
  ModelConfig c = small_config(LayerKind::Softmax, BlockKind::PreLn, 5, 2);
  auto w = init_weights(c, {.seed = 5});
  std::stringstream ss;
  save_weights(w, ss);
  auto w2 = load_weights(ss);
  CHECK(w2.config == c);
  auto p1 = parameters(w);
  auto p2 = parameters(w2);
  REQUIRE(p1.size() == p2.size());
  for (std::size_t i = 0; i < p1.size(); ++i) CHECK((*p1[i].second - *p2[i].second).norm() == 0.0);
  std::stringstream bad("icl-patch-weights 1\nconfig 3 0 4 1 softmax 8 4 1 128 2 gelu 0 0 1e-5\n");
  CHECK_THROWS_AS(load_weights(bad), std::runtime_error);
  std::stringstream trunc(ss.str().substr(0, ss.str().size() / 2));
  CHECK_THROWS_AS(load_weights(trunc), std::runtime_error);
  ModelConfig z = c;
  z.heads = 0;
  CHECK_THROWS_AS(z.validate(), std::invalid_argument);
}
