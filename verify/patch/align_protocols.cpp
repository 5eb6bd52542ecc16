// The alignment kernels of docs/patch.md §11: the implicit trajectory dW(C_i) and the explicit
// gradient updates on the same context examples, under the fullbatch, online and per-token
// protocols.
#include "verify/patch/align_protocols.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "verify/patch/detail/names.hpp"
#include "verify/patch/patch.hpp"

namespace icl::verify::patch {

namespace {
using A = AlignProtocol;
constexpr detail::Names<AlignProtocol, 4> kProtocols{
    "protocol",
    {{{A::FullBatch, "fullbatch"}, {A::Online, "online"}, {A::PerToken, "per-token"},
      {A::PerTokenContext, "per-token-context"}}}};
}  // namespace

std::string to_string(AlignProtocol p) { return kProtocols.name(p); }
AlignProtocol align_protocol_from_string(const std::string& s) { return kProtocols.parse(s); }

std::vector<AlignProtocol> all_align_protocols() {
  std::vector<AlignProtocol> v;
  for (const auto& [p, name] : kProtocols.names) v.push_back(p);
  return v;
}

std::vector<AlignProtocol> align_protocols_from_strings(const std::vector<std::string>& names) {
  std::vector<AlignProtocol> v;
  for (const std::string& name : names) {
    if (name == "all") {
      const auto all = all_align_protocols();
      v.insert(v.end(), all.begin(), all.end());
    } else {
      v.push_back(align_protocol_from_string(name));
    }
  }
  return v;
}

double cos_frobenius(const Mat<double>& a, const Mat<double>& b) {
  const double na = a.norm(), nb = b.norm();
  if (na == 0 || nb == 0) return 0;
  return (a.array() * b.array()).sum() / (na * nb);
}

namespace {

double cos_vec(const Vec<double>& a, const Vec<double>& b) {
  const double na = a.norm(), nb = b.norm();
  if (na == 0 || nb == 0) return 0;
  return a.dot(b) / (na * nb);
}

// Gradient with respect to W1 of block 0 of l_i = (pred((x_i, 0)) - y_i)^2 (docs/patch.md §11),
// for the context token `example` = (x_i, y_i); `mlp_input` receives the MLP input a_i.
Mat<double> example_gradient(const Weights<double>& w, const Mat<double>& example,
                             Vec<double>* mlp_input = nullptr) {
  const int d = w.config.token_dim - 1;
  Mat<double> tok = example;
  const double y = tok(d, 0);
  tok(d, 0) = 0;  // the example's input, fed as a query token
  ForwardCache<double> cache;
  const Mat<double> out = forward(w, tok, &cache);
  Mat<double> d_out = Mat<double>::Zero(out.rows(), 1);
  d_out(d, 0) = 2 * (out(d, 0) - y);
  Weights<double> g = zeros_like(w);
  backward(w, cache, d_out, g);
  if (mlp_input) *mlp_input = cache.blocks[0].u.col(0);
  return g.blocks[0].W[0];
}

// Gradient with respect to W1 of block 0 of the in-context loss of example i,
// (T_W(c_1..c_{i-1}, (x_i, 0))_pred - y_i)^2 (docs/patch.md §11); `mlp_input` receives the MLP
// input at the example's position (the only column the loss reaches).
Mat<double> in_context_gradient(const Weights<double>& w, const Mat<double>& tokens, int i,
                                Vec<double>* mlp_input) {
  const int d = w.config.token_dim - 1;
  Mat<double> seq = tokens.leftCols(i);
  const double y = seq(d, i - 1);
  seq(d, i - 1) = 0;
  ForwardCache<double> cache;
  const Mat<double> out = forward(w, seq, &cache);
  Mat<double> d_out = Mat<double>::Zero(out.rows(), out.cols());
  d_out(d, i - 1) = 2 * (out(d, i - 1) - y);
  Weights<double> g = zeros_like(w);
  backward(w, cache, d_out, g);
  *mlp_input = cache.blocks[0].u.col(i - 1);
  return g.blocks[0].W[0];
}

// The Full patch of block 0 for the prefix C_i at the query (i >= 1).
BlockPatch<double> prefix_patch(const Weights<double>& w, const Mat<double>& z, int i) {
  const int n = static_cast<int>(z.cols()) - 1;
  Mat<double> zi(z.rows(), i + 1);
  zi << z.leftCols(i), z.col(n);
  return block_patch(w.config, w.blocks[0], zi, i, Mat<double>(z.col(n)), 0, PatchMode::Full);
}

}  // namespace

AlignPairs align_pairs(const Weights<double>& w, const Prompt& prompt, AlignProtocol protocol,
                       const std::vector<int>& steps, double lr) {
  if (w.config.layers != 1) throw InvalidParams("layers", "alignment needs a one-block model");
  const Mat<double>& tokens = prompt.tokens;
  const int n = static_cast<int>(tokens.cols()) - 1;
  const Mat<double> z = embed(w, tokens);
  const Mat<double>& W1 = w.blocks[0].W[0];
  if (n < 1) throw InvalidParams("context", "alignment needs at least one context example");
  AlignPairs r;
  if (protocol == AlignProtocol::FullBatch) {
    if (steps.empty()) throw InvalidParams("sgd_steps", "needs at least one step count");
    const Mat<double> impl = prefix_patch(w, z, n).dW1;
    const int kmax = *std::max_element(steps.begin(), steps.end());
    Weights<double> wt = w;
    std::vector<Mat<double>> snaps(steps.size());
    for (int k = 1; k <= kmax; ++k) {
      Mat<double> g = Mat<double>::Zero(W1.rows(), W1.cols());
      for (int i = 0; i < n; ++i) g += example_gradient(wt, tokens.col(i)) / double(n);
      wt.blocks[0].W[0] -= lr * g;  // gradient step on W1 only
      for (std::size_t s = 0; s < steps.size(); ++s)
        if (steps[s] == k) snaps[s] = wt.blocks[0].W[0] - W1;
    }
    r.implicit.assign(steps.size(), impl);
    r.explicit_ = std::move(snaps);
    return r;
  }
  if (protocol == AlignProtocol::Online) {
    Weights<double> wt = w;
    for (int i = 1; i <= n; ++i) {
      wt.blocks[0].W[0] -= lr * example_gradient(wt, tokens.col(i - 1));
      r.implicit.push_back(prefix_patch(w, z, i).dW1);
      r.explicit_.push_back(wt.blocks[0].W[0] - W1);
    }
    return r;
  }
  // per-token(-context): u_0 is the MLP input of the query-only model (the anchor of every dW(C_i)).
  const bool in_context = protocol == AlignProtocol::PerTokenContext;
  BlockCache<double> q;
  block_forward(w.config, w.blocks[0], Mat<double>(z.col(n)), &q);
  const Vec<double> u0 = q.u.col(0);
  Weights<double> point = w;  // the query-only model patched by P(C_{i-1})
  Mat<double> prev = Mat<double>::Zero(W1.rows(), W1.cols());
  for (int i = 1; i <= n; ++i) {
    const BlockPatch<double> p = prefix_patch(w, z, i);
    const Mat<double> step = p.dW1 - prev;
    Vec<double> a;
    const Mat<double> descent = in_context ? Mat<double>(-in_context_gradient(w, tokens, i, &a))
                                           : Mat<double>(-example_gradient(point, tokens.col(i - 1), &a));
    r.implicit.push_back(step);
    r.explicit_.push_back(descent);
    // left vectors: step u_0 = W1 (u_i - u_{i-1}) and descent a_i / |a_i|^2 = -delta_i
    r.left.push_back(cos_vec(step * u0, descent * a));
    r.right.push_back(cos_vec(u0, a));
    point.blocks[0] = apply_patch(w.blocks[0], p);
    prev = p.dW1;
  }
  return r;
}

AlignCurve align_curve(const Weights<double>& w, const std::vector<Prompt>& prompts,
                       AlignProtocol protocol, const std::vector<int>& steps, double lr) {
  if (prompts.empty()) throw InvalidParams("prompts", "must be >= 1");
  AlignCurve c;
  c.protocol = protocol;
  std::vector<AlignPairs> pairs;
  for (const Prompt& p : prompts) pairs.push_back(align_pairs(w, p, protocol, steps, lr));
  if (protocol == AlignProtocol::FullBatch) {
    c.x_name = "sgd_steps";
    c.x = steps;
  } else {
    c.x_name = "example";
    for (std::size_t i = 1; i <= pairs[0].implicit.size(); ++i) c.x.push_back(static_cast<int>(i));
  }
  const std::size_t P = prompts.size(), J = c.x.size();
  c.cos.assign(P, std::vector<double>(J, 0));
  std::vector<double> mean_same(P, 0), mean_mis(P, 0), mean_left(P, 0), mean_right(P, 0);
  for (std::size_t j = 0; j < J; ++j) {
    std::vector<double> same(P), mis(P);
    for (std::size_t p = 0; p < P; ++p) {
      same[p] = c.cos[p][j] = cos_frobenius(pairs[p].implicit[j], pairs[p].explicit_[j]);
      mis[p] = cos_frobenius(pairs[p].implicit[j], pairs[(p + 1) % P].explicit_[j]);
      mean_same[p] += same[p] / double(J);
      mean_mis[p] += mis[p] / double(J);
      if (!pairs[p].left.empty()) {
        mean_left[p] += pairs[p].left[j] / double(J);
        mean_right[p] += pairs[p].right[j] / double(J);
      }
    }
    c.same.push_back(numerics::estimate(same));
    c.mismatched.push_back(numerics::estimate(mis));
  }
  c.summary = numerics::estimate(mean_same);
  c.summary_mismatched = numerics::estimate(mean_mis);
  if (protocol == AlignProtocol::PerToken || protocol == AlignProtocol::PerTokenContext) {
    c.left = numerics::estimate(mean_left);
    c.right = numerics::estimate(mean_right);
  }
  return c;
}

}  // namespace icl::verify::patch
