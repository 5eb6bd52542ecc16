// The per-model kernel of docs/patch.md §10 (the thought patch); the alignment kernels of §11
// are in align_protocols.cpp.
#include <algorithm>
#include <cmath>
#include <random>

#include "numerics/dense_decompositions.hpp"
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
    Mat<double> X;
    (void)numerics::ldlt_solve(G, Ac * Rm.transpose(), X);  // G is positive definite (lam > 0)
    const Mat<double> dWs = X.transpose();
    Mat<double> avg = Mat<double>::Zero(W.rows(), W.cols());
    for (int j = 0; j < m; ++j) avg += Rm.col(j) * ac.col(j).transpose() / ac.col(j).squaredNorm();
    avg /= m;
    // Static db2 = mean_j (H_C(x_j) - H_0(x_j)) for residual blocks (docs/patch.md §5, §10).
    const Vec<double> db2 = c.block.residual() ? Vec<double>(dh.leftCols(m).rowwise().mean()) : no_db;
    row.db2_norm = db2.norm();
    row.train_err = err(dWs, db2, 0, m);
    row.heldout_err = err(dWs, db2, mmax, p.heldout);
    row.train_avg = err(avg, db2, 0, m);
    row.heldout_avg = err(avg, db2, mmax, p.heldout);
    if (c.block.residual()) {
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

}  // namespace icl::verify::patch
