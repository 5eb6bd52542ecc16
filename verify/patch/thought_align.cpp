// The two per-model kernels of docs/patch.md §10 (thought patch) and §11 (alignment).
#include <algorithm>
#include <cmath>
#include <random>

#include "numerics/error.hpp"
#include "verify/patch/experiments.hpp"

namespace icl::verify::patch {

std::vector<ThoughtRow> thought_patch(const Weights<double>& w, const Mat<double>& context,
                                      const ThoughtOptions& p, std::uint64_t query_seed) {
  const ModelConfig& c = w.config;
  if (c.layers != 1) throw InvalidParams("layers", "the thought patch needs a one-block model");
  const int T = c.token_dim, d = T - 1, n = static_cast<int>(context.cols());
  std::mt19937_64 rng(query_seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  const int mmax = *std::max_element(p.m_values.begin(), p.m_values.end());
  const int total = mmax + p.heldout;
  // Queries (x, 0); per query: anchor u_0(x), target MLP input u_C(x), residual-stream gap
  // H_C - H_0 (residual blocks), full output.
  Mat<double> ac(c.width, total), uc(c.width, total), dh(c.width, total), yfull(T, total),
      xtok(T, total);
  const auto& bw = w.blocks[0];
  Mat<double> seq(T, n + 1);
  seq.leftCols(n) = context;
  for (int j = 0; j < total; ++j) {
    Vec<double> x = Vec<double>::Zero(T);
    for (int k = 0; k < d; ++k) x(k) = nd(rng);
    xtok.col(j) = x;
    seq.col(n) = x;
    const Mat<double> z = embed(w, seq);
    BlockCache<double> kf, kr;
    block_forward(c, bw, z, &kf);
    block_forward(c, bw, Mat<double>(z.col(n)), &kr);
    uc.col(j) = kf.u.col(n);
    ac.col(j) = kr.u.col(0);
    dh.col(j) = kf.h.col(n) - kr.h.col(0);
    yfull.col(j) = forward(w, seq).col(n);
  }
  const Mat<double>& W = bw.W[0];
  const Mat<double> R = W * (uc - ac);   // r_j = W (u_C(x_j) - u_0(x_j))
  // Error of the query-only model with dW on W1 and db on the last MLP bias, queries [j0, j0 + cnt).
  auto err = [&](const Mat<double>& dW, const Vec<double>& db, int j0, int cnt) {
    Weights<double> wp = w;
    wp.blocks[0].W[0] = W + dW;
    wp.blocks[0].b.back().col(0) += db;
    double s = 0;  // each query is its own one-token sequence
    for (int j = j0; j < j0 + cnt; ++j) {
      const Mat<double> yj = forward(wp, Mat<double>(xtok.col(j)));
      s += (yj - yfull.col(j)).squaredNorm();
    }
    return s / (double(cnt) * T);
  };
  const Vec<double> no_db = Vec<double>::Zero(w.blocks[0].b.back().rows());
  std::vector<ThoughtRow> rows;
  const double none = err(Mat<double>::Zero(W.rows(), W.cols()), no_db, mmax, p.heldout);
  for (int m : p.m_values) {
    ThoughtRow row;
    row.m = m;
    const Mat<double> Ac = ac.leftCols(m), Rm = R.leftCols(m);
    Mat<double> G = Ac * Ac.transpose();
    const double lam = p.ridge * G.trace() / c.width;
    G.diagonal().array() += lam;
    // dW* = R Ac^T (Ac Ac^T + lam I)^{-1}: solve (G) X = Ac R^T, dW* = X^T (G symmetric)
    const Mat<double> dWs = G.ldlt().solve(Ac * Rm.transpose()).transpose();
    Mat<double> avg = Mat<double>::Zero(W.rows(), W.cols());
    for (int j = 0; j < m; ++j) avg += Rm.col(j) * ac.col(j).transpose() / ac.col(j).squaredNorm();
    avg /= m;
    // Static db2 = mean_j (H_C(x_j) - H_0(x_j)) for residual blocks (docs/patch.md §5, §10).
    const Vec<double> db2 = c.residual ? Vec<double>(dh.leftCols(m).rowwise().mean()) : no_db;
    row.db2_norm = db2.norm();
    row.train_err = err(dWs, db2, 0, m);
    row.heldout_err = err(dWs, db2, mmax, p.heldout);
    row.train_avg = err(avg, db2, 0, m);
    row.heldout_avg = err(avg, db2, mmax, p.heldout);
    if (c.residual) {
      row.train_no_db2 = err(dWs, no_db, 0, m);
      row.heldout_no_db2 = err(dWs, no_db, mmax, p.heldout);
    } else {
      row.train_no_db2 = row.train_err;
      row.heldout_no_db2 = row.heldout_err;
    }
    row.heldout_none = none;
    rows.push_back(row);
  }
  return rows;
}

double cos_frobenius(const Mat<double>& a, const Mat<double>& b) {
  const double na = a.norm(), nb = b.norm();
  if (na == 0 || nb == 0) return 0;
  return (a.array() * b.array()).sum() / (na * nb);
}

Alignment alignment(const Weights<double>& w, const std::vector<Prompt>& prompts,
                    const std::vector<int>& steps, double lr) {
  if (w.config.layers != 1) throw InvalidParams("layers", "alignment needs a one-block model");
  if (prompts.empty()) throw InvalidParams("prompts", "must be >= 1");
  if (steps.empty()) throw InvalidParams("steps", "must not be empty");
  const int T = w.config.token_dim, d = T - 1;
  Alignment r;
  r.steps = steps;
  std::vector<int> sorted = steps;
  std::sort(sorted.begin(), sorted.end());
  const int kmax = sorted.back();
  std::vector<Mat<double>> impl;
  std::vector<std::vector<Mat<double>>> ft;   // [prompt][steps index]
  for (const Prompt& pr : prompts) {
    const int n = static_cast<int>(pr.tokens.cols()) - 1;
    impl.push_back(stack_check(w, pr.tokens, n, PatchMode::Full).patches[0].dW1);
    Weights<double> wt = w;
    std::vector<Mat<double>> snaps(steps.size());
    ForwardCache<double> cache;
    for (int k = 1; k <= kmax; ++k) {
      Weights<double> g = zeros_like(w);
      for (int i = 0; i < n; ++i) {
        Mat<double> tok = pr.tokens.col(i);
        const double y = tok(d, 0);
        tok(d, 0) = 0;                                   // fed as (x_i, 0)
        const Mat<double> out = forward(wt, tok, &cache);
        Mat<double> d_out = Mat<double>::Zero(T, 1);
        d_out(d, 0) = 2 * (out(d, 0) - y) / n;           // d/dpred of (1/n) (pred - y)^2
        backward(wt, cache, d_out, g);
      }
      wt.blocks[0].W[0] -= lr * g.blocks[0].W[0];     // SGD on W1 only
      for (std::size_t s = 0; s < steps.size(); ++s)
        if (steps[s] == k) snaps[s] = wt.blocks[0].W[0] - w.blocks[0].W[0];
    }
    ft.push_back(std::move(snaps));
  }
  const std::size_t P = prompts.size(), K = steps.size();
  r.cos.assign(P, std::vector<double>(K, 0));
  r.mean.assign(K, 0);
  r.sem.assign(K, 0);
  r.mismatched_mean.assign(K, 0);
  for (std::size_t s = 0; s < K; ++s) {
    for (std::size_t i = 0; i < P; ++i) {
      r.cos[i][s] = cos_frobenius(impl[i], ft[i][s]);
      r.mean[s] += r.cos[i][s] / double(P);
      r.mismatched_mean[s] += cos_frobenius(impl[i], ft[(i + 1) % P][s]) / double(P);
    }
    double v = 0;
    for (std::size_t i = 0; i < P; ++i) v += (r.cos[i][s] - r.mean[s]) * (r.cos[i][s] - r.mean[s]);
    r.sem[s] = P > 1 ? std::sqrt(v / double(P - 1) / double(P)) : 0;
  }
  return r;
}

}  // namespace icl::verify::patch
