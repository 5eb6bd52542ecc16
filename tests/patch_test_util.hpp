// Shared by the patch tests: seeded random matrices; the field an InvalidParams names;
// backpropagation against central finite differences; training with the patched-loss claim.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "numerics/error.hpp"
#include "verify/patch/model.hpp"
#include "verify/patch/train.hpp"

namespace icl_test {

inline icl::verify::patch::Mat<double> random_mat(int r, int c, std::uint64_t seed, double s = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, s);
  icl::verify::patch::Mat<double> m(r, c);
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) m(i, j) = nd(rng);
  return m;
}

// The field named by the icl::InvalidParams that f throws ("" if none is thrown).
template <class F>
std::string field_of(F&& f) {
  try {
    f();
  } catch (const icl::InvalidParams& e) {
    return e.field();
  }
  return "";
}

// Trains `w` (docs/patch.md §13) and checks the paper's first claim at every logged step: the
// query-only model patched block by block from each prompt's context has the loss of the model
// with the context (largest relative output difference below 1e-10; measured about 1e-15).
inline icl::verify::patch::TrainResult train_checked(icl::verify::patch::Weights<double>& w,
                                                     const icl::verify::patch::TrainOptions& t) {
  const auto r = icl::verify::patch::train(w, t);
  REQUIRE(r.status == icl::numerics::Status::Converged);
  REQUIRE(r.log.size() >= 2);
  for (const auto& row : r.log) {
    CHECK(row.patch_max_rel < 1e-10);
    CHECK(std::abs(row.eval_loss_patched - row.eval_loss) <= 1e-10 * row.eval_loss);
  }
  return r;
}

// The hand-written backward() of a random model of `config` (biases N(0, 0.3^2), 6 tokens)
// against central finite differences of loss = sum(R .* out), R random: every parameter and
// the tokens, relative error below 1e-6. (A central difference with step 1e-6 has truncation
// error O(1e-12) and rounding error O(1e-10) relative to O(1) derivatives: 1e-6 is far above
// both and far below any real mistake.)
inline void check_gradients(const icl::verify::patch::ModelConfig& config, std::uint64_t seed) {
  using namespace icl::verify::patch;
  using M = Mat<double>;
  auto w = init_weights(config, {.seed = seed, .bias_std = 0.3});
  const int T = config.token_dim;
  const M tokens = random_mat(T, 6, 77);
  const M R = random_mat(T, 6, 78);  // loss = sum(R .* out)
  auto loss = [&](const Weights<double>& ww) { return (forward(ww, tokens).array() * R.array()).sum(); };
  ForwardCache<double> cache;
  forward(w, tokens, &cache);
  Weights<double> g = zeros_like(w);
  const M dtok = backward(w, cache, R, g);
  auto pw = parameters(w);
  auto pg = parameters(g);
  const double eps = 1e-6;
  for (std::size_t k = 0; k < pw.size(); ++k) {
    M& m = *pw[k].second;
    M fd(m.rows(), m.cols());
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      const double old = m.data()[i];
      m.data()[i] = old + eps;
      const double lp = loss(w);
      m.data()[i] = old - eps;
      const double lm = loss(w);
      m.data()[i] = old;
      fd.data()[i] = (lp - lm) / (2 * eps);
    }
    const M& an = *pg[k].second;
    const double rel = (an - fd).norm() / std::max({an.norm(), fd.norm(), 1e-300});
    CAPTURE(pw[k].first);
    // Exactly-zero gradients (e.g. the softmax key bias: adding a constant to every score of
    // a query changes nothing) are compared in absolute terms.
    if (an.norm() < 1e-9 && fd.norm() < 1e-8) continue;
    CHECK(rel < 1e-6);
  }
  // gradient with respect to the tokens
  M t2 = tokens, fdt(tokens.rows(), tokens.cols());
  for (Eigen::Index i = 0; i < t2.size(); ++i) {
    const double old = t2.data()[i];
    t2.data()[i] = old + eps;
    const double lp = (forward(w, t2).array() * R.array()).sum();
    t2.data()[i] = old - eps;
    const double lm = (forward(w, t2).array() * R.array()).sum();
    t2.data()[i] = old;
    fdt.data()[i] = (lp - lm) / (2 * eps);
  }
  CHECK((dtok - fdt).norm() / fdt.norm() < 1e-6);
}

}  // namespace icl_test
