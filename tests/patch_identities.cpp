// The rank-1 patch identities (docs/patch.md §3-§13) at fast sizes.
// Each exact identity is checked by comparing two different computations (full-context forward
// pass vs patched reduced forward pass); formulas are recomputed here independently where
// docs/patch.md gives them (minimum norm via a Kronecker least-squares solve, the no-LN residual
// patch of §5).
#include <doctest/doctest.h>

#include "patch_test_util.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "verify/patch/experiments.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/train.hpp"

using namespace icl::verify::patch;
using M = Mat<double>;

namespace {

using icl_test::random_mat;

// Tokens in R^3, 4 heads of 4, MLP 32; width 3 (no embedding) or `width` with an embedding.
ModelConfig cfg(LayerKind kind, BlockKind block, int layers, int width = 3) {
  return ModelSpec{.layers = layers, .kind = kind, .heads = 4, .width = width, .mlp_hidden = 32,
                   .block = {block}}
      .config();
}

}  // namespace

TEST_CASE("rank-1 patch: exact, rank 1, minimum Frobenius norm, bias-only variant") {
  const M W = random_mat(6, 4, 1);
  const Vec<double> u = random_mat(4, 1, 2), a = random_mat(4, 1, 3);
  auto p = rank1_patch<double>(W, u, a);
  REQUIRE(p.status == PatchStatus::Ok);
  CHECK(((W + p.dW) * a - W * u).norm() < 1e-13 * (W * u).norm());
  CHECK(numerical_rank(p.dW).rank == 1);
  // Minimum-norm solution of M a = W(u - a), computed independently: vec(M a) = (a^T kron I) vec(M).
  M K(6, 24);
  for (int j = 0; j < 4; ++j) K.block(0, 6 * j, 6, 6) = a(j) * M::Identity(6, 6);
  const Vec<double> rhs = W * (u - a);
  const Vec<double> vecM = K.completeOrthogonalDecomposition().solve(rhs);
  const M Mmin = Eigen::Map<const M>(vecM.data(), 6, 4);
  CHECK((Mmin - p.dW).norm() < 1e-12 * p.dW.norm());
  // Any other solution is larger: add N with N a = 0.
  M N = random_mat(6, 4, 4);
  N -= (N * a) * a.transpose() / a.squaredNorm();
  CHECK((p.dW + N).norm() > p.dW.norm());
  // Bias-only: W a + db = W u.
  CHECK((W * a + p.db - W * u).norm() < 1e-13 * (W * u).norm());
  // Guard: a = 0 is reported, not divided by.
  auto z = rank1_patch<double>(W, u, Vec<double>::Zero(4));
  CHECK(z.status == PatchStatus::DegenerateAnchor);
  CHECK(z.dW.norm() == 0.0);
  auto tiny = rank1_patch<double>(W, u, Vec<double>(a * 1e-12));
  CHECK(tiny.status == PatchStatus::DegenerateAnchor);
}

TEST_CASE("chunk patch T_W(C, x) = T_{W+dW}(C\\Y, x) for softmax, linear attention and RNN") {
  const auto tokens = make_prompts(2, 12, 1, 5)[0].tokens;
  for (LayerKind kind : {LayerKind::Softmax, LayerKind::Linear, LayerKind::Rnn}) {
    for (bool emb : {false, true}) {
      auto w = init_weights(cfg(kind, BlockKind::Plain, 1, emb ? 8 : 3), {.seed = 9});
      for (auto [b, e] : {std::pair{0, 12}, std::pair{3, 7}, std::pair{11, 12}, std::pair{0, 1}}) {
        CAPTURE(to_string(kind));
        CAPTURE(b);
        CAPTURE(e);
        for (PatchMode mode : {PatchMode::Full, PatchMode::BiasOnly}) {
          auto r = chunk_check(w, tokens, b, e, mode);
          CHECK(r.patch.status == PatchStatus::Ok);
          CHECK(r.diff.max_rel < 1e-12);
          if (mode == PatchMode::Full) CHECK(r.rank.rank == 1);
        }
        // Sanity: without the patch the outputs differ (far above rounding; the fading-memory
        // RNN barely notices the removal of early tokens).
        Weights<double> w0 = w;
        auto r = chunk_check(w, tokens, b, e, PatchMode::Full);
        Mat<double> red(3, 13 - (e - b));
        red << tokens.leftCols(b), tokens.rightCols(13 - e);
        CHECK(compare(r.y_full, Mat<double>(forward(w0, red).col(red.cols() - 1))).max_rel > 1e-7);
      }
    }
  }
}

TEST_CASE("degenerate anchor is reported: A(x) = 0") {
  auto w = init_weights(cfg(LayerKind::Softmax, BlockKind::Plain, 1), {.seed = 2});
  w.blocks[0].Wo.setZero();
  w.blocks[0].bo.setZero();
  w.blocks[0].bv.setConstant(1.0);  // A(C, x) still 0 too, but check status path
  const auto tokens = random_mat(3, 6, 3);
  auto r = chunk_check(w, tokens, 0, 5);
  CHECK(r.patch.status == PatchStatus::DegenerateAnchor);
}

TEST_CASE("residual block without LayerNorm: the closed form of docs/patch.md §5") {
  auto c = cfg(LayerKind::Softmax, BlockKind::Residual, 1);
  auto w = init_weights(c, {.seed = 13});
  const M z = random_mat(3, 9, 14);
  const auto& b = w.blocks[0];
  const M A = contextual_forward(c, b, z);
  const M x = z.col(8);
  const M Ax = contextual_forward(c, b, x);
  for (int i : {0, 4, 8}) {
    // dW_i = W (dA_i + dz_i)(A(x) + x)^T / ||A(x) + x||^2,  db2 = dA_i + dz_i
    const Vec<double> dA = A.col(i) - Ax.col(0), dz = z.col(i) - x.col(0);
    const Vec<double> anchor = Ax.col(0) + x.col(0);
    const M dW = b.W[0] * (dA + dz) * anchor.transpose() / anchor.squaredNorm();
    auto p = block_patch(c, b, z, i, x, 0, PatchMode::Full);
    CHECK((p.dW1 - dW).norm() < 1e-12 * dW.norm());
    CHECK((p.dbL.col(0) - (dA + dz)).norm() < 1e-12 * (dA + dz).norm());
    const M y = block_forward(c, b, z).col(i);
    const M yp = block_forward(c, apply_patch(b, p), x);
    CHECK(compare(y, yp).max_rel < 1e-12);
  }
}

TEST_CASE("Pre-LN block: (dW, db2) and bias-free (dW, dW2) exact at every position; weight-only fails O(1)") {
  for (LayerKind kind : {LayerKind::Softmax, LayerKind::Rnn}) {
    auto c = cfg(kind, BlockKind::PreLn, 1, 8);
    auto w = init_weights(c, {.seed = 17});
    const auto tokens = make_prompts(2, 10, 1, 3)[0].tokens;
    double worst_weight_only = 1e300, mean_weight_only = 0;
    for (int pos = 0; pos < 11; ++pos) {
      CAPTURE(pos);
      for (PatchMode mode : {PatchMode::Full, PatchMode::BiasFree, PatchMode::BiasOnly}) {
        auto r = stack_check(w, tokens, pos, mode);
        CHECK(r.diff.max_rel < 1e-12);
      }
      auto wo = stack_check(w, tokens, pos, PatchMode::WeightOnly);
      worst_weight_only = std::min(worst_weight_only, wo.diff.max_rel);
      mean_weight_only += wo.diff.max_rel / 11;
    }
    MESSAGE(to_string(kind) << ": weight-only rel error min " << worst_weight_only << " mean "
                            << mean_weight_only);
    // Weight-only misses H_C - H_0 carried by the skip connection: an O(1) relative error.
    CHECK(worst_weight_only > 0.01);
    CHECK(mean_weight_only > 0.1);
  }
}

TEST_CASE("stack of Pre-LN blocks: block-by-block patch exact, first-block-only fails") {
  auto c = cfg(LayerKind::Softmax, BlockKind::PreLn, 4, 8);
  auto w = init_weights(c, {.seed = 23});
  const auto tokens = make_prompts(2, 15, 1, 4)[0].tokens;
  for (int pos : {0, 7, 15}) {
    auto r = stack_check(w, tokens, pos, PatchMode::Full);
    CHECK(r.degenerate == 0);
    CHECK(r.diff.max_rel < 1e-12);
    REQUIRE(r.per_layer.size() == 4);
    for (auto& d : r.per_layer) CHECK(d.max_rel < 1e-12);
    for (auto& k : r.ranks) CHECK(k.rank <= 1);
    // Negative control. (At pos 0 a causal block sees only token 0, so there every later block
    // agrees trivially; the control is meaningful at pos > 0.)
    if (pos == 0) continue;
    auto first = stack_check(w, tokens, pos, PatchMode::Full, 1);
    CHECK(first.per_layer[0].max_rel < 1e-12);   // exact after the patched block ...
    CHECK(first.diff.max_rel > 1e-3);            // ... but not at the output
  }
}

TEST_CASE("float64 agreement to 1e-12, float32 about 1e-6") {
  auto c = cfg(LayerKind::Softmax, BlockKind::PreLn, 3, 8);
  auto w = init_weights(c, {.seed = 29});
  const auto tokens = make_prompts(2, 20, 1, 5)[0].tokens;
  auto rd = stack_check(w, tokens, 20, PatchMode::Full);
  auto wf = cast_weights<float>(w);
  auto rf = stack_check(wf, Mat<float>(tokens.cast<float>()), 20, PatchMode::Full);
  MESSAGE("float64 max rel " << rd.diff.max_rel << ", float32 max rel " << rf.diff.max_rel);
  CHECK(rd.diff.max_rel < 1e-12);
  CHECK(rf.diff.max_rel < 1e-5);
  CHECK(rf.diff.max_rel > 1e-10);  // genuinely single precision
}

TEST_CASE("implicit dynamics: prefix patches, online-GD form, step-norm slopes") {
  auto ca = cfg(LayerKind::Softmax, BlockKind::Plain, 1, 8);
  auto cr = cfg(LayerKind::Rnn, BlockKind::Plain, 1, 8);
  const auto tokens = make_prompts(2, 200, 1, 6)[0].tokens;
  auto da = implicit_dynamics(init_weights(ca, {.seed = 31}), tokens);
  auto dr = implicit_dynamics(init_weights(cr, {.seed = 31}), tokens);
  MESSAGE("slope attention " << da.slope << ", rnn " << dr.slope);
  CHECK(da.prefix_max_rel < 1e-12);
  CHECK(dr.prefix_max_rel < 1e-12);
  CHECK(da.gd_max_rel < 1e-10);
  CHECK(dr.gd_max_rel < 1e-10);
  CHECK(da.steps.size() == 200);
  CHECK(da.slope < -0.6);
  CHECK(da.slope > -1.5);
  CHECK(std::abs(dr.slope) < 0.3);
  // independent check of one step norm: ||W (A_i - A_{i-1})|| / ||A_0||
  const auto& b = init_weights(ca, {.seed = 31});
  const M z = embed(b, tokens);
  auto Aat = [&](int i) {
    M s(z.rows(), i + 1);
    s << z.leftCols(i), z.col(200);
    return Vec<double>(contextual_forward(ca, b.blocks[0], s).col(i));
  };
  const double s10 = (b.blocks[0].W[0] * (Aat(10) - Aat(9))).norm() / Aat(0).norm();
  CHECK(std::abs(s10 - da.steps[9]) < 1e-12 * s10);
}

TEST_CASE("thought patch: m = 1 is exact on its query, held-out error falls with m") {
  auto c = cfg(LayerKind::Softmax, BlockKind::Plain, 1, 8);
  auto w = init_weights(c, {.seed = 37});
  const M ctx = make_prompts(2, 30, 1, 8)[0].tokens.leftCols(30);  // a copy, not a view
  ThoughtOptions tp;
  tp.m_values = {1, 4, 64};
  tp.heldout = 64;
  auto rows = thought_patch(w, ctx, tp, 7);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].train_err < 1e-6 * rows[0].heldout_none);
  CHECK(rows[2].heldout_err < rows[0].heldout_err);
  CHECK(rows[2].heldout_err < rows[2].heldout_none);
}

TEST_CASE("thought patch, residual blocks: m = 1 exact with db2 and not without, on every seed") {
  // docs/patch.md §5, §10: for m = 1 the ridge patch (dW*, db2 = H_C - H_0 of the one calibration
  // query) is the exact per-query patch (up to the 1e-6 ridge), while dW* alone misses the
  // residual-stream gap H_C - H_0, which reaches the output through the skip connection.
  for (int sd = 53; sd <= 58; ++sd) {
    for (bool ln : {true, false}) {
      CAPTURE(sd);
      CAPTURE(ln);
      auto c = cfg(LayerKind::Softmax, ln ? BlockKind::PreLn : BlockKind::Residual, 1, 8);
      auto w = init_weights(c, {.seed = static_cast<std::uint64_t>(sd)});
      const M ctx = make_prompts(2, 30, 1, static_cast<std::uint64_t>(sd))[0].tokens.leftCols(30);
      ThoughtOptions tp;
      tp.m_values = {1};
      tp.heldout = 16;
      auto rows = thought_patch(w, ctx, tp, static_cast<std::uint64_t>(sd));
      REQUIRE(rows.size() == 1);
      CHECK(rows[0].db2_norm > 0);
      CHECK(rows[0].train_err < 1e-10 * rows[0].heldout_none);      // exact with db2
      CHECK(rows[0].train_no_db2 > 1e-3 * rows[0].heldout_none);    // not exact without
    }
  }
}

TEST_CASE("training: beats the zero predictor, and the context loss equals the patched loss at every step") {
  auto w = init_weights(ModelSpec{.mlp_hidden = 64}.config(), {.seed = 41});
  const auto r = icl_test::train_checked(w, {.d = 2, .n_ctx = 20, .batch = 32, .steps = 300,
                                             .adam = {.lr = 3e-3}, .eval_every = 100, .eval_prompts = 64});
  MESSAGE("zero loss " << r.zero_loss << ", final " << r.final_eval_loss << ", " << r.seconds << " s");
  CHECK(r.final_eval_loss < 0.7 * r.zero_loss);
}

TEST_CASE("training: the trained weights are bit-identical for 1, 2 and 3 threads") {
  const ModelConfig c = ModelSpec{.heads = 2, .mlp_hidden = 16}.config();
  std::vector<Weights<double>> trained;
  for (int threads : {1, 2, 3}) {
    auto w = init_weights(c, {.seed = 5});
    // batch 13: not a multiple of the thread counts
    train(w, {.d = 2, .n_ctx = 6, .batch = 13, .steps = 20, .eval_every = 10, .eval_prompts = 8,
              .threads = threads});
    trained.push_back(w);
  }
  for (std::size_t k = 1; k < trained.size(); ++k) {
    auto a = parameters(trained[0]);
    auto b = parameters(trained[k]);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO(a[i].first);
      CHECK((*a[i].second - *b[i].second).cwiseAbs().maxCoeff() == 0.0);
    }
  }
}

TEST_CASE("cos_F: exact values, symmetric, scale-free, 0 against a zero matrix") {
  const M a = random_mat(4, 3, 1), b = random_mat(4, 3, 2);
  CHECK(cos_frobenius(a, a) == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(cos_frobenius(a, M(-2.5 * a)) == doctest::Approx(-1.0).epsilon(1e-14));
  CHECK(cos_frobenius(a, b) == doctest::Approx(cos_frobenius(b, a)).epsilon(1e-14));
  CHECK(cos_frobenius(M(3.0 * a), b) == doctest::Approx(cos_frobenius(a, b)).epsilon(1e-14));
  M e1 = M::Zero(2, 2), e12 = M::Zero(2, 2);
  e1(0, 0) = 1;
  e12(0, 0) = e12(0, 1) = 1;
  CHECK(cos_frobenius(e1, e12) == doctest::Approx(1 / std::sqrt(2.0)).epsilon(1e-14));
  M off = M::Zero(2, 2);
  off(1, 0) = 1;
  CHECK(cos_frobenius(e1, off) == 0.0);
  CHECK(cos_frobenius(e1, M::Zero(2, 2)) == 0.0);
}
