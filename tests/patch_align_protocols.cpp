// The alignment protocols of docs/patch.md §11 (fullbatch, online, per-token, per-token-context):
// the explicit gradients against finite differences of the losses as defined there, and
// relations between the protocols that follow from their definitions, on random one-block models.
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/error.hpp"
#include "patch_test_util.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/serialize.hpp"

using namespace icl::verify::patch;

namespace {

// A random one-block model: plain (width 3) or Pre-LN (width 8 with an embedding); 4 heads of 4,
// MLP 32.
Weights<double> one_block(bool residual, std::uint64_t seed) {
  const Block block{residual ? BlockKind::PreLn : BlockKind::Plain};
  return init_weights(
      ModelSpec{.heads = 4, .width = residual ? 8 : 3, .mlp_hidden = 32, .block = block}.config(),
      {.seed = seed});
}

std::string field_of(const AlignOptions& o) {
  return icl_test::field_of([&] { o.validate(); });
}

}  // namespace

TEST_CASE("align per-token: cos_F of the two rank-1 updates is the product of the left and right cosines") {
  // Both per-token updates are rank 1 (docs/patch.md §11), so <u v^T, p q^T>_F = (u.p)(v.q) and
  // cos_F = cos(u, p) cos(v, q); a failure means one of them is not the rank-1 matrix described.
  for (auto [residual, protocol] : {std::pair{false, AlignProtocol::PerToken},
                                    std::pair{true, AlignProtocol::PerToken},
                                    std::pair{false, AlignProtocol::PerTokenContext},
                                    std::pair{true, AlignProtocol::PerTokenContext}}) {
    INFO("residual " << residual << ", " << to_string(protocol));
    const auto w = one_block(residual, 7);
    const auto prompts = make_prompts(2, 12, 2, 8);
    for (const Prompt& p : prompts) {
      const AlignPairs a = align_pairs(w, p, protocol, {}, 0.01);
      REQUIRE(a.implicit.size() == 12);
      REQUIRE(a.left.size() == 12);
      for (std::size_t i = 0; i < a.implicit.size(); ++i) {
        const double c = cos_frobenius(a.implicit[i], a.explicit_[i]);
        // rounding of two O(1) cosines of vectors of size <= 32: far below 1e-12
        CHECK(std::abs(c - a.left[i] * a.right[i]) < 1e-12);
      }
    }
  }
}

TEST_CASE("align: the implicit steps sum to the prefix patches, dW(C_i) of online equals the running sum of per-token steps") {
  const auto w = one_block(false, 11);
  const Prompt p = make_prompts(2, 9, 1, 12)[0];
  const AlignPairs on = align_pairs(w, p, AlignProtocol::Online, {}, 0.01);
  const AlignPairs pt = align_pairs(w, p, AlignProtocol::PerToken, {}, 0.01);
  Mat<double> sum = Mat<double>::Zero(on.implicit[0].rows(), on.implicit[0].cols());
  for (std::size_t i = 0; i < pt.implicit.size(); ++i) {
    sum += pt.implicit[i];
    CHECK((sum - on.implicit[i]).norm() <= 1e-12 * on.implicit[i].norm());
  }
  // The fullbatch implicit update is the whole-context patch, the last point of the trajectory.
  const AlignPairs fb = align_pairs(w, p, AlignProtocol::FullBatch, {1, 4}, 0.01);
  CHECK((fb.implicit[1] - on.implicit.back()).norm() <= 1e-12 * on.implicit.back().norm());
}

TEST_CASE("align: online step 1 and per-token example 1 are the same comparison") {
  // At i = 1 both compare dW(C_1) with -lr grad l_1 at the unpatched W1 (the point P(C_0) is no
  // patch), so the cosines agree to rounding whatever the learning rate.
  const auto w = one_block(false, 21);
  const auto prompts = make_prompts(2, 8, 3, 22);
  const AlignCurve on = align_curve(w, prompts, AlignProtocol::Online, {}, 0.3);
  const AlignCurve pt = align_curve(w, prompts, AlignProtocol::PerToken, {}, 0.3);
  for (std::size_t p = 0; p < prompts.size(); ++p) CHECK(std::abs(on.cos[p][0] - pt.cos[p][0]) < 1e-12);
  // Later steps differ: online accumulates the gradients, per-token compares single steps.
  double diff = 0;
  for (std::size_t p = 0; p < prompts.size(); ++p) diff += std::abs(on.cos[p][7] - pt.cos[p][7]);
  CHECK(diff > 1e-6);
}

TEST_CASE("align per-token protocols: the explicit update is minus the finite-difference gradient of the example's loss as defined") {
  // per-token: l_i at the query-only model patched by P(C_{i-1}) (plain block: W1 + dW(C_{i-1}));
  // per-token-context: the in-context loss (T_W(c_1..c_{i-1}, (x_i, 0))_pred - y_i)^2.
  const auto w = one_block(false, 51);
  const Prompt p = make_prompts(2, 6, 1, 52)[0];
  const int i = 4, d = 2;
  const AlignPairs on = align_pairs(w, p, AlignProtocol::Online, {}, 0.01);
  const Mat<double> point_W1 = w.blocks[0].W[0] + on.implicit[i - 2];  // dW(C_{i-1})
  auto loss = [&](bool in_context, const Mat<double>& W1) {
    Weights<double> m = w;
    m.blocks[0].W[0] = W1;
    Mat<double> seq = in_context ? Mat<double>(p.tokens.leftCols(i)) : Mat<double>(p.tokens.col(i - 1));
    const double y = seq(d, seq.cols() - 1);
    seq(d, seq.cols() - 1) = 0;
    const double pred = forward(m, seq)(d, seq.cols() - 1);
    return (pred - y) * (pred - y);
  };
  for (AlignProtocol protocol : {AlignProtocol::PerToken, AlignProtocol::PerTokenContext}) {
    const bool in_context = protocol == AlignProtocol::PerTokenContext;
    INFO(to_string(protocol));
    const Mat<double> descent = align_pairs(w, p, protocol, {}, 0.01).explicit_[i - 1];
    const Mat<double> base = in_context ? w.blocks[0].W[0] : point_W1;
    const double h = 1e-6;
    for (int r : {0, 5, 17})
      for (int c : {0, 2}) {
        Mat<double> up = base, dn = base;
        up(r, c) += h;
        dn(r, c) -= h;
        const double fd = (loss(in_context, up) - loss(in_context, dn)) / (2 * h);
        // central differences: O(h^2) truncation and O(eps/h) rounding, about 1e-9 here
        CHECK(std::abs(-descent(r, c) - fd) < 1e-7 * std::max(1.0, std::abs(fd)));
      }
  }
}

TEST_CASE("align: per-token and per-token-context agree at example 1 (no preceding context), not later") {
  const auto w = one_block(false, 61);
  const auto prompts = make_prompts(2, 8, 3, 62);
  const AlignCurve pt = align_curve(w, prompts, AlignProtocol::PerToken, {}, 0.01);
  const AlignCurve pc = align_curve(w, prompts, AlignProtocol::PerTokenContext, {}, 0.01);
  double later = 0;
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    CHECK(std::abs(pt.cos[p][0] - pc.cos[p][0]) < 1e-12);
    later += std::abs(pt.cos[p][5] - pc.cos[p][5]);
  }
  CHECK(later > 1e-6);
}

TEST_CASE("align: online SGD at a vanishing learning rate ends on the direction of one fullbatch step") {
  // With lr -> 0 the online update after n examples is -lr sum_i grad l_i(W1) + O(lr^2), the
  // direction of one fullbatch step on (1/n) sum_i l_i. At lr = 1e-7 the O(lr) relative change of
  // the gradients moves the cosine by about 1e-7; 1e-5 leaves a margin.
  const auto w = one_block(false, 31);
  const auto prompts = make_prompts(2, 10, 3, 32);
  const AlignCurve on = align_curve(w, prompts, AlignProtocol::Online, {}, 1e-7);
  const AlignCurve fb = align_curve(w, prompts, AlignProtocol::FullBatch, {1}, 1e-7);
  for (std::size_t p = 0; p < prompts.size(); ++p)
    CHECK(std::abs(on.cos[p].back() - fb.cos[p][0]) < 1e-5);
}

TEST_CASE("align fullbatch: one prompt is its own mismatch, and one step is learning-rate free") {
  const auto w = one_block(false, 43);
  const auto prompts = make_prompts(2, 10, 3, 44);
  const AlignCurve one = align_curve(w, {prompts[0]}, AlignProtocol::FullBatch, {1, 3}, 0.01);
  for (std::size_t s = 0; s < 2; ++s) CHECK(one.mismatched[s].mean == one.same[s].mean);
  const AlignCurve a1 = align_curve(w, prompts, AlignProtocol::FullBatch, {1, 3}, 0.01);
  const AlignCurve a2 = align_curve(w, prompts, AlignProtocol::FullBatch, {1, 3}, 0.1);
  REQUIRE(a1.cos.size() == 3);
  for (std::size_t p = 0; p < 3; ++p) {
    CHECK(std::abs(a1.cos[p][0] - a2.cos[p][0]) < 1e-12);
    // three steps at lr 0.1 turn the update away from the first gradient
    CHECK(std::abs(a1.cos[p][1] - a2.cos[p][1]) > 1e-9);
  }
}

TEST_CASE("align fullbatch, one step: cos_F of the formula of docs/patch.md §3 and minus the finite-difference gradient of the mean example loss") {
  // Computed here without the library's patch or gradients: the implicit update
  // dW(C) = W1 (A(C, x) - A(x)) A(x)^T / |A(x)|^2 of a plain block from its contextual layer, the
  // explicit one step -lr grad (1/n) sum_i l_i by central differences of that loss, entry by
  // entry; the cosine does not depend on lr.
  const auto w = one_block(false, 71);
  const int d = 2, n = 8;
  const auto prompts = make_prompts(d, n, 3, 72);
  const AlignCurve fb = align_curve(w, prompts, AlignProtocol::FullBatch, {1}, 0.01);
  const auto& b = w.blocks[0];
  const ModelConfig& c = w.config;
  for (std::size_t p = 0; p < prompts.size(); ++p) {
    const Mat<double>& z = prompts[p].tokens;  // no embedding: width = token_dim
    const Vec<double> a_full = contextual_forward(c, b, z).col(n);
    const Vec<double> a0 = contextual_forward(c, b, Mat<double>(z.col(n))).col(0);
    const Mat<double> implicit = b.W[0] * (a_full - a0) * a0.transpose() / a0.squaredNorm();
    auto mean_loss = [&](const Mat<double>& W1) {
      Weights<double> m = w;
      m.blocks[0].W[0] = W1;
      double s = 0;
      for (int i = 0; i < n; ++i) {
        Mat<double> tok = z.col(i);
        const double y = tok(d, 0);
        tok(d, 0) = 0;  // the example's input as a query token
        const double e = forward(m, tok)(d, 0) - y;
        s += e * e / n;
      }
      return s;
    };
    Mat<double> descent(b.W[0].rows(), b.W[0].cols());
    const double h = 1e-6;
    for (Eigen::Index i = 0; i < descent.size(); ++i) {
      Mat<double> up = b.W[0], dn = b.W[0];
      up.data()[i] += h;
      dn.data()[i] -= h;
      descent.data()[i] = -(mean_loss(up) - mean_loss(dn)) / (2 * h);
    }
    // central differences: O(h^2) truncation and O(eps/h) rounding, about 1e-9 relative per
    // entry; the cosine moves by as much, far below 1e-6.
    CAPTURE(p);
    CHECK(std::abs(fb.cos[p][0] - cos_frobenius(implicit, descent)) < 1e-6);
  }
}

TEST_CASE("the alignment verdict of docs/patch.md §11: fullbatch, online and per-token above both controls, none near 1; per-token-context not aligned") {
  // The test setting of docs/patch.md §11: the default one-block model (d = 2, 8 heads of 4,
  // MLP 128) trained 300 Adam steps (batch 32, context 20, base seed 1), 256 prompts of 20
  // examples, one fullbatch step. Claim: the summary cos_F of fullbatch, online and per-token
  // is more than k = 3 standard errors above the mismatched-prompt and the random-weight
  // controls (s.e. of the difference sqrt(se^2 + se_control^2); with no context-specific
  // alignment that z is about N(0, 1), so z > 3 has probability 0.13%; measured over base
  // seeds 1-5: z 4.4-16.6), and below 0.3 (measured 0.03-0.15: real, not high); per-token-context
  // is not 3 s.e. above its mismatched control (measured z -1.3..2.9) and lies 3 s.e. below
  // per-token.
  TrainRunOptions t;
  t.training = {.n_ctx = 20, .batch = 32, .steps = 300, .eval_every = 300, .eval_prompts = 16,
                .track_patch = false};
  const TrainRunResult trained = run(t);
  REQUIRE(trained.training.final_eval_loss < 0.5 * trained.training.zero_loss);  // it learned
  AlignOptions a;
  a.context = 20;
  a.prompts = 256;
  a.steps = {1};
  const AlignResult r = run(trained.weights, a);
  REQUIRE(r.status == icl::numerics::Status::Converged);
  const auto z = [](const icl::numerics::Estimate& x, const icl::numerics::Estimate& y) {
    return (x.mean - y.mean) / std::sqrt(x.sem * x.sem + y.sem * y.sem);
  };
  const AlignCurve* per_token = nullptr;
  for (const AlignCurve& c : r.curves) {
    CAPTURE(to_string(c.protocol));
    MESSAGE(to_string(c.protocol) << ": cos_F " << c.summary.mean << " +- " << c.summary.sem
                                  << ", z against mismatched " << z(c.summary, c.summary_mismatched)
                                  << ", against random weights " << z(c.summary, c.summary_random));
    REQUIRE(c.summary.count == 256);
    if (c.protocol == AlignProtocol::PerToken) per_token = &c;
    if (c.protocol == AlignProtocol::PerTokenContext) {
      CHECK(z(c.summary, c.summary_mismatched) < 3);
      continue;
    }
    CHECK(z(c.summary, c.summary_mismatched) > 3);
    CHECK(z(c.summary, c.summary_random) > 3);
    CHECK(c.summary.mean < 0.3);
  }
  REQUIRE(per_token != nullptr);
  CHECK(z(per_token->summary, r.curves.back().summary) > 3);  // per-token-context is last
}

TEST_CASE("run(AlignOptions): protocols in the given order with the random-weight control; bad protocols name the field") {
  AlignOptions o;
  o.model.spec.heads = 2;
  o.model.spec.mlp_hidden = 16;
  o.context = 5;
  o.prompts = 3;
  o.steps = {1};
  o.protocols = {AlignProtocol::PerToken, AlignProtocol::Online};
  const AlignResult r = run(o);
  CHECK(r.status == icl::numerics::Status::Converged);
  REQUIRE(r.curves.size() == 2);
  CHECK(r.curves[0].protocol == AlignProtocol::PerToken);
  CHECK(r.curves[1].x.size() == 5);
  CHECK(r.curves[0].random.size() == 5);
  CHECK(std::isfinite(r.curves[0].summary_random.mean));
  CHECK(r.curves[0].summary.count == 3);
  const Json j = to_json(r);
  CHECK(j.at("protocols").at(0).at("protocol") == "per-token");
  CHECK(j.at("protocols").at(0).contains("left"));
  CHECK(!j.at("protocols").at(1).contains("left"));
  o.random_control = false;
  const AlignResult nr = run(o);
  CHECK(nr.curves[0].random.empty());
  CHECK(std::isnan(to_table(nr).rows[0][6]));

  AlignOptions bad;
  bad.protocols = {};
  CHECK(field_of(bad) == "protocol");
  bad.protocols = {AlignProtocol::Online, AlignProtocol::Online};
  CHECK(field_of(bad) == "protocol");
  CHECK(align_protocol_from_string("per-token") == AlignProtocol::PerToken);
  CHECK_THROWS_AS(align_protocol_from_string("sgd"), icl::InvalidParams);
}
