#include "verify/patch/patch.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "verify/patch/detail/names.hpp"

namespace icl::verify::patch {

std::string to_string(PatchStatus s) {
  return s == PatchStatus::Ok ? "ok" : "degenerate-anchor";
}
namespace {
using M = PatchMode;
constexpr detail::Names<PatchMode, 6> kModes{
    "mode",
    {{{M::Full, "full"}, {M::BiasOnly, "bias-only"}, {M::BiasFree, "bias-free"},
      {M::WeightOnly, "weight-only"}, {M::NormScale, "norm-scale"}, {M::GateOnly, "gate-only"}}}};
}  // namespace

std::string to_string(PatchMode m) { return kModes.name(m); }
PatchMode patch_mode_from_string(const std::string& s) { return kModes.parse(s); }

template <class S>
Rank1Patch<S> rank1_patch(const Mat<S>& W, const Vec<S>& u_full, const Vec<S>& a,
                          double anchor_tol) {
  Rank1Patch<S> p;
  const Vec<S> delta = u_full - a;
  p.db = W * delta;                                     // bias-only: W delta
  p.anchor_norm = a.norm();
  const S scale = std::max(u_full.norm(), p.anchor_norm);
  if (!(p.anchor_norm > S(anchor_tol) * scale) || p.anchor_norm == S(0)) {
    p.status = PatchStatus::DegenerateAnchor;
    p.dW = Mat<S>::Zero(W.rows(), W.cols());
    return p;
  }
  p.dW = p.db * (a.transpose() / a.squaredNorm());      // dW = (W delta) a^T / ||a||^2
  return p;
}

template <class S>
BlockPatch<S> block_patch(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z_full,
                          int pos, const Mat<S>& z_red, int red_pos, PatchMode mode,
                          double anchor_tol) {
  BlockCache<S> kf, kr;
  block_forward(c, w, z_full, &kf);
  block_forward(c, w, z_red, &kr);
  return block_patch(c, w, kf, pos, kr, red_pos, mode, anchor_tol);
}

template <class S>
BlockPatch<S> block_patch(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& kf,
                          int pos, const BlockCache<S>& kr, int red_pos, PatchMode mode,
                          double anchor_tol) {
  const bool post_norm = c.block.kind == BlockKind::PostLn;
  if (mode == PatchMode::NormScale && !post_norm)
    throw InvalidParams("mode", "norm-scale patches the norm after the residual add: post-norm blocks only");
  if (mode == PatchMode::GateOnly && !c.block.gated())
    throw InvalidParams("mode", "gate-only needs a gated MLP (swiglu, geglu)");
  const Vec<S> uC = kf.u.col(pos), u0 = kr.u.col(red_pos);
  Rank1Patch<S> r = rank1_patch<S>(w.W[0], uC, u0, anchor_tol);
  BlockPatch<S> p;
  p.anchor_norm = r.anchor_norm;
  p.status = r.status;
  p.dW1 = Mat<S>::Zero(w.W[0].rows(), w.W[0].cols());
  p.db1 = Mat<S>::Zero(w.b[0].rows(), 1);
  p.dWL = Mat<S>::Zero(w.W.back().rows(), w.W.back().cols());
  p.dbL = Mat<S>::Zero(w.b.back().rows(), 1);
  if (post_norm) p.dg2 = Mat<S>::Zero(w.g2.rows(), 1);
  if (c.block.gated()) {
    // The gate sees the same shifted input as W1 (docs/patch.md §16): the same anchor, its own
    // rank-1 patch (W_g delta) u_0^T / |u_0|^2.
    const Rank1Patch<S> g = rank1_patch<S>(w.Wg, uC, u0, anchor_tol);
    p.dWg = Mat<S>::Zero(w.Wg.rows(), w.Wg.cols());
    p.dbg = Mat<S>::Zero(w.bg.rows(), 1);
    if (mode == PatchMode::BiasOnly) p.dbg.col(0) = g.db;
    else p.dWg = g.dW;
  }
  if (mode == PatchMode::BiasOnly) p.db1.col(0) = r.db;   // always exact, no anchor needed
  else if (mode != PatchMode::GateOnly) p.dW1 = r.dW;
  if (!c.block.residual() || mode == PatchMode::WeightOnly) return p;
  const Vec<S> dH = kf.h.col(pos) - kr.h.col(red_pos);   // H_C - H_0
  if (mode == PatchMode::BiasFree || mode == PatchMode::NormScale) {
    BlockWeights<S> wp = apply_patch(w, p);
    BlockCache<S> kp;
    const Mat<S> m = mlp_forward(c, wp, Mat<S>(kr.u.col(red_pos)), &kp);
    if (mode == PatchMode::BiasFree) {
      // s = input of the last dense layer of the patched MLP at the reduced position.
      const Vec<S> s = kp.mlp_in.back().col(0);
      if (s.squaredNorm() == S(0)) p.status = PatchStatus::DegenerateAnchor;
      else p.dWL = dH * (s.transpose() / s.squaredNorm());  // dW2 = dH s^T / ||s||^2
      return p;
    }
    // Norm-scale patch (docs/patch.md §16): N2 acts on v_0 = H_0 + M'(u_0) instead of
    // v_C = H_C + M(u_C); with xhat the normalized vectors, g2' = g2 * xhat(v_C) / xhat(v_0)
    // gives g2' * xhat(v_0) = g2 * xhat(v_C) coordinate by coordinate.
    LayerNormCache<S> n0;
    const Mat<S> v0 = m + kr.h.col(red_pos);
    norm_forward(c, v0, w.g2, w.be2, &n0);
    const Vec<S> x0 = n0.xhat.col(0), xC = kf.ln2.xhat.col(pos);
    if (!(x0.cwiseAbs().minCoeff() > S(anchor_tol) * x0.cwiseAbs().maxCoeff())) {
      p.status = PatchStatus::DegenerateAnchor;   // a zero coordinate cannot be rescaled
      return p;
    }
    p.dg2.col(0) = (w.g2.col(0).array() * (xC - x0).array() / x0.array()).matrix();
    return p;
  }
  p.dbL.col(0) = dH;                                       // db2 = H_C - H_0
  return p;
}

template <class S>
BlockWeights<S> apply_patch(const BlockWeights<S>& w, const BlockPatch<S>& p) {
  BlockWeights<S> r = w;
  r.W[0] += p.dW1;
  r.b[0] += p.db1;
  r.W.back() += p.dWL;
  r.b.back() += p.dbL;
  if (p.dWg.size() > 0) r.Wg += p.dWg;
  if (p.dbg.size() > 0) r.bg += p.dbg;
  if (p.dg2.size() > 0) r.g2 += p.dg2;
  return r;
}

void Diff::merge(const Diff& o) {
  // A NaN (non-finite outputs) stays NaN: std::max would drop it.
  const auto worst = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); };
  max_abs = worst(max_abs, o.max_abs);
  max_rel = worst(max_rel, o.max_rel);
}

template <class S>
Diff compare(const Mat<S>& ref, const Mat<S>& other) {
  Diff d;
  if (!ref.allFinite() || !other.allFinite()) {   // overflow: no difference to report
    d.max_abs = d.max_rel = std::nan("");
    return d;
  }
  d.max_abs = static_cast<double>((ref - other).cwiseAbs().maxCoeff());
  const double s = static_cast<double>(ref.cwiseAbs().maxCoeff());
  d.max_rel = s > 0 ? d.max_abs / s : d.max_abs;
  return d;
}

template <class S>
RankInfo numerical_rank(const Mat<S>& m, double rel_tol) {
  RankInfo r;
  if (m.size() == 0) return r;
  Eigen::JacobiSVD<Mat<double>> svd(m.template cast<double>());
  const auto& sv = svd.singularValues();
  r.sigma1 = sv(0);
  if (r.sigma1 == 0) return r;
  for (Eigen::Index i = 0; i < sv.size(); ++i)
    if (sv(i) > rel_tol * r.sigma1) ++r.rank;
  r.sigma2_over_sigma1 = sv.size() > 1 ? sv(1) / r.sigma1 : 0.0;
  return r;
}

template <class S>
ChunkCheck<S> chunk_check(const Weights<S>& w, const Mat<S>& tokens, int b, int e, PatchMode mode) {
  const int n = static_cast<int>(tokens.cols());
  if (w.config.layers != 1) throw InvalidParams("layers", "the chunk patch needs a one-block model");
  if (b < 0 || e < b || e > n - 1) throw InvalidParams("chunk", "must lie in the context");
  Mat<S> red(tokens.rows(), n - (e - b));
  red << tokens.leftCols(b), tokens.rightCols(n - e);
  ChunkCheck<S> r;
  const Mat<S> zf = embed(w, tokens), zr = embed(w, red);
  r.patch = block_patch(w.config, w.blocks[0], zf, n - 1, zr, static_cast<int>(red.cols()) - 1, mode);
  r.rank = numerical_rank(r.patch.dW1);
  r.y_full = forward(w, tokens).col(n - 1);
  Weights<S> wp = w;
  wp.blocks[0] = apply_patch(w.blocks[0], r.patch);
  r.y_patched = forward(wp, red).col(red.cols() - 1);
  r.diff = compare(r.y_full, r.y_patched);
  return r;
}

template <class S>
StackCheck<S> stack_check(const Weights<S>& w, const Mat<S>& tokens, int pos, PatchMode mode,
                          int patch_layers) {
  const ModelConfig& c = w.config;
  const int n = static_cast<int>(tokens.cols());
  if (pos < 0 || pos >= n) throw InvalidParams("pos", "position out of range");
  ForwardCache<S> full;
  forward(w, tokens, &full);
  StackCheck<S> r;
  Mat<S> z = embed(w, Mat<S>(tokens.col(n - 1)));   // query-only representation
  for (int l = 0; l < c.layers; ++l) {
    const auto lu = static_cast<std::size_t>(l);
    if (patch_layers < 0 || l < patch_layers) {
      // The full sequence's intermediates of block l are in the cache of the full pass.
      BlockCache<S> red;
      block_forward(c, w.blocks[lu], z, &red);
      BlockPatch<S> p = block_patch(c, w.blocks[lu], full.blocks[lu], pos, red, 0, mode);
      if (p.status != PatchStatus::Ok) ++r.degenerate;
      r.ranks.push_back(numerical_rank(p.dW1));
      if (c.block.gated()) r.ranks_gate.push_back(numerical_rank(p.dWg));
      if (mode == PatchMode::BiasFree && c.block.residual()) r.ranks_last.push_back(numerical_rank(p.dWL));
      z = block_forward(c, apply_patch(w.blocks[lu], p), z);
      r.patches.push_back(std::move(p));
    } else {
      z = block_forward(c, w.blocks[lu], z);
    }
    r.per_layer.push_back(compare(Mat<S>(full.layer_inputs[static_cast<std::size_t>(l) + 1].col(pos)), z));
  }
  r.y_full = full.out.col(pos);
  r.y_patched = readout(w, z);
  r.diff = compare(r.y_full, r.y_patched);
  return r;
}

std::pair<double, double> loglog_fit(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int k = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0 && y[i] > 0)) continue;
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly; ++k;
  }
  if (k < 2) return {0.0, 0.0};
  const double slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);
  return {slope, (sy - slope * sx) / k};
}

ImplicitDynamics implicit_dynamics(const Weights<double>& w, const Mat<double>& tokens, int fit_from) {
  const ModelConfig& c = w.config;
  if (c.layers != 1 || c.block.residual())
    throw InvalidParams("layers", "implicit dynamics needs one plain block (no residual)");
  const int n = static_cast<int>(tokens.cols()) - 1;  // context length
  const auto& bw = w.blocks[0];
  const Mat<double>& W = bw.W[0];
  const Mat<double> z = embed(w, tokens);
  const Vec<double> xq = z.col(n);
  // Prefix outputs A_i = A(c_1..c_i, x), i = 0..n.
  std::vector<Vec<double>> A(static_cast<std::size_t>(n) + 1);
  for (int i = 0; i <= n; ++i) {
    Mat<double> zi(z.rows(), i + 1);
    zi << z.leftCols(i), xq;
    A[static_cast<std::size_t>(i)] = contextual_forward(c, bw, zi).col(i);
  }
  const Vec<double>& A0 = A[0];
  const double h = 1.0 / A0.squaredNorm();
  ImplicitDynamics r;
  Mat<double> dW_gd = Mat<double>::Zero(W.rows(), W.cols());
  Mat<double> dW_prev = dW_gd;
  Weights<double> wp = w;
  const Mat<double> xq_tok = tokens.col(n);
  for (int i = 1; i <= n; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const Mat<double> dW = (W * (A[iu] - A0)) * A0.transpose() * h;        // closed form
    const Mat<double> G = (W * (A[iu - 1] - A[iu])) * A0.transpose();      // grad of tr(G^T W)
    dW_gd -= h * G;                                                        // W_{i} = W_{i-1} - h G
    r.gd_max_rel = std::max(r.gd_max_rel, (dW_gd - dW).cwiseAbs().maxCoeff() /
                                              std::max(dW.cwiseAbs().maxCoeff(), 1e-300));
    r.steps.push_back((dW - dW_prev).norm());
    dW_prev = dW;
    // prefix identity: T_{W + dW_i}(x) = T_W(c_1..c_i, x)
    wp.blocks[0].W[0] = W + dW;
    Mat<double> prefix(tokens.rows(), i + 1);
    prefix << tokens.leftCols(i), xq_tok;
    const Mat<double> yf = forward(w, prefix).col(i);
    const Mat<double> yp = forward(wp, xq_tok);
    r.prefix_max_rel = std::max(r.prefix_max_rel, compare(yf, yp).max_rel);
  }
  r.fit_from = fit_from > 0 ? fit_from : std::max(2, n / 8);
  std::vector<double> xs, ys;
  for (int i = r.fit_from; i <= n; ++i) {
    xs.push_back(i);
    ys.push_back(r.steps[static_cast<std::size_t>(i) - 1]);
  }
  std::tie(r.slope, r.intercept) = loglog_fit(xs, ys);
  return r;
}

#define ICL_PATCH_INSTANTIATE(S)                                                                  \
  template Rank1Patch<S> rank1_patch(const Mat<S>&, const Vec<S>&, const Vec<S>&, double);        \
  template BlockPatch<S> block_patch(const ModelConfig&, const BlockWeights<S>&, const Mat<S>&,   \
                                     int, const Mat<S>&, int, PatchMode, double);                 \
  template BlockPatch<S> block_patch(const ModelConfig&, const BlockWeights<S>&,                  \
                                     const BlockCache<S>&, int, const BlockCache<S>&, int,        \
                                     PatchMode, double);                                          \
  template BlockWeights<S> apply_patch(const BlockWeights<S>&, const BlockPatch<S>&);             \
  template Diff compare(const Mat<S>&, const Mat<S>&);                                            \
  template RankInfo numerical_rank(const Mat<S>&, double);                                        \
  template ChunkCheck<S> chunk_check(const Weights<S>&, const Mat<S>&, int, int, PatchMode);      \
  template StackCheck<S> stack_check(const Weights<S>&, const Mat<S>&, int, PatchMode, int);

ICL_PATCH_INSTANTIATE(double)
ICL_PATCH_INSTANTIATE(float)
#undef ICL_PATCH_INSTANTIATE

}  // namespace icl::verify::patch
