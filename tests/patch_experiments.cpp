// The experiments layer of verify/patch (experiments.hpp): validate() of every Options struct
// names the field, and each run() entry gives the numbers recomputed here from the seed streams
// of docs/patch.md §14.1 and the formulas of §3-§13 (not only the shapes), with the documented
// properties (identities exact, controls O(1), slopes, thought patch exact at m = 1).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "numerics/error.hpp"
#include "numerics/seed.hpp"
#include "patch_test_util.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/serialize.hpp"

using namespace icl::verify::patch;
using icl::InvalidParams;
using icl::numerics::derive_seed;
using icl::numerics::Status;

namespace {

using icl_test::field_of;

// The field named by validate() of a default T changed by `set`.
template <class T, class F>
std::string bad(F set) {
  T o;
  set(o);
  return field_of([&] { o.validate(); });
}

ModelSpec small_spec() { return {.heads = 2, .head_dim = 3, .mlp_hidden = 12}; }

}  // namespace

TEST_CASE("ModelSpec: validate names the field; the width rule") {
  CHECK(bad<ModelSpec>([](auto&) {}) == "");
  CHECK(bad<ModelSpec>([](auto& m) { m.d = 0; }) == "d");
  CHECK(bad<ModelSpec>([](auto& m) { m.width = -1; }) == "width");
  CHECK(bad<ModelSpec>([](auto& m) { m.mlp_depth = 0; }) == "mlp_depth");
  // width 0: d + 1 without embedding for plain blocks, 32 with an embedding for residual ones
  ModelSpec m;
  CHECK(m.config().width == 3);
  CHECK(!m.config().embed);
  m.block.kind = BlockKind::PreLn;
  CHECK(m.config().width == 32);
  CHECK(m.config().embed);
  CHECK(m.config().block == Block{BlockKind::PreLn, Norm::LayerNorm, Mlp::Gelu});
  m.width = 3;  // explicit width d + 1: no embedding even for residual blocks
  CHECK(!m.config().embed);
  ModelSpec wide;
  wide.width = 8;
  CHECK(wide.config().embed);
  CHECK(bad<ModelConfig>([](auto& c) { c.heads = 0; }) == "heads");
  CHECK(bad<ModelConfig>([](auto& c) { c.block.norm = Norm::LayerNorm; }) == "norm");
  CHECK(bad<ModelConfig>([](auto& c) { c.block.norm = Norm::Auto; }) == "norm");
  CHECK(field_of([] { layer_kind_from_string("lstm"); }) == "kind");
  CHECK(field_of([] { mlp_from_string("tanh"); }) == "mlp");
  CHECK(field_of([] { patch_mode_from_string("half"); }) == "mode");
  CHECK(field_of([] { precision_from_string("half"); }) == "precision");
}

TEST_CASE("Options validate(): each bad field is named") {
  CHECK(bad<TrainOptions>([](auto&) {}) == "");
  CHECK(bad<TrainOptions>([](auto& o) { o.batch = 0; }) == "batch");
  CHECK(bad<TrainOptions>([](auto& o) { o.adam.lr = 0; }) == "lr");
  CHECK(bad<TrainOptions>([](auto& o) { o.eval_every = 0; }) == "eval_every");
  CHECK(bad<TrainOptions>([](auto& o) { o.n_ctx = 0; }) == "n_ctx");

  CHECK(bad<CheckOptions>([](auto&) {}) == "");
  CHECK(bad<CheckOptions>([](auto& o) { o.pos = o.context + 1; }) == "pos");
  CHECK(bad<CheckOptions>([](auto& o) { o.chunk_begin = 9; o.chunk_end = 3; }) == "chunk");
  CHECK(bad<CheckOptions>([](auto& o) { o.tol = 0; }) == "tol");
  CHECK(bad<CheckOptions>([](auto& o) { o.prompts = 0; }) == "prompts");
  CHECK(bad<CheckOptions>([](auto& o) { o.patch_layers = -2; }) == "patch_layers");
  CHECK(bad<CheckOptions>([](auto& o) { o.model.spec.heads = 0; }) == "heads");
  CHECK(bad<CheckOptions>([](auto& o) { o.training.steps = 5; }) == "");  // n_ctx 0: the context
  CHECK(bad<CheckOptions>([](auto& o) { o.training.steps = 5; o.training.batch = 0; }) == "batch");
  CHECK(bad<CheckOptions>([](auto& o) { o.training.steps = -1; }) == "train_steps");

  CHECK(bad<DynamicsOptions>([](auto&) {}) == "");
  CHECK(bad<DynamicsOptions>([](auto& o) { o.context = 1; }) == "context");
  CHECK(bad<DynamicsOptions>([](auto& o) { o.tol = 0; }) == "tol");

  CHECK(bad<ThoughtOptions>([](auto&) {}) == "");
  CHECK(bad<ThoughtOptions>([](auto& o) { o.m_values = {}; }) == "m");
  CHECK(bad<ThoughtOptions>([](auto& o) { o.m_values = {1, 0}; }) == "m");
  CHECK(bad<ThoughtOptions>([](auto& o) { o.ridge = 0; }) == "ridge");
  CHECK(bad<ThoughtOptions>([](auto& o) { o.heldout = 0; }) == "heldout");

  CHECK(bad<AlignOptions>([](auto&) {}) == "");
  CHECK(bad<AlignOptions>([](auto& o) { o.steps = {0}; }) == "sgd_steps");
  CHECK(bad<AlignOptions>([](auto& o) { o.lr = -1; }) == "sgd_lr");
  CHECK(bad<AlignOptions>([](auto& o) { o.prompts = 0; }) == "prompts");

  CHECK(bad<TrainRunOptions>([](auto&) {}) == "");
  CHECK(bad<TrainRunOptions>([](auto& o) { o.training.steps = -1; }) == "steps");
}

TEST_CASE("run(CheckOptions): the maximum over prompts of stack_check on the documented streams; identity exact, controls O(1)") {
  CheckOptions o;
  o.model.spec = small_spec();
  o.context = 8;
  o.prompts = 3;
  o.chunk_begin = 2;
  o.chunk_end = 5;
  const CheckResult r = run(o);
  // Recomputed from the streams of docs/patch.md §14.1: the model ("weights"), the prompts
  // ("prompts") and, a plain one-block model showing neither control, the control model of §8
  // ("control-model": Pre-LN, width 32 with an embedding, 4 blocks).
  const Weights<double> w =
      init_weights(o.model.spec.config(), {.seed = derive_seed(o.base_seed, "weights")});
  ModelConfig cc = w.config;
  cc.block = {BlockKind::PreLn, Norm::LayerNorm, Mlp::Gelu};
  cc.embed = true;
  cc.width = 32;
  cc.layers = 4;
  const Weights<double> control = init_weights(cc, {.seed = derive_seed(o.base_seed, "control-model")});
  Diff main, bias_only, bias_free, chunk, weight_only, first_only;
  for (const Prompt& p : make_prompts(2, o.context, o.prompts, derive_seed(o.base_seed, "prompts"))) {
    main.merge(stack_check(w, p.tokens, o.context, PatchMode::Full).diff);
    bias_only.merge(stack_check(w, p.tokens, o.context, PatchMode::BiasOnly).diff);
    bias_free.merge(stack_check(w, p.tokens, o.context, PatchMode::BiasFree).diff);
    chunk.merge(chunk_check(w, p.tokens, 2, 5).diff);
    weight_only.merge(stack_check(control, p.tokens, o.context, PatchMode::WeightOnly).diff);
    first_only.merge(stack_check(control, p.tokens, o.context, PatchMode::Full, 1).diff);
  }
  CHECK(r.model.blocks[0].W[0] == w.blocks[0].W[0]);
  CHECK(r.diff.max_abs == main.max_abs);
  CHECK(r.bias_only.max_rel == bias_only.max_rel);
  CHECK(r.bias_free.max_rel == bias_free.max_rel);
  CHECK(r.chunk.max_rel == chunk.max_rel);
  CHECK(r.weight_only.diff.max_rel == weight_only.max_rel);
  CHECK(r.first_block_only.diff.max_rel == first_only.max_rel);
  CHECK(!r.weight_only.given_model);
  CHECK(r.weight_only.model == "control (Pre-LN, 32 wide, 4 layers)");
  // docs/patch.md §8, §12: the identities to rounding, the controls O(1), float32 about 1e-7.
  CHECK(r.passed());
  CHECK(r.diff.max_rel < 1e-12);
  CHECK(r.chunk.max_rel < 1e-12);
  CHECK(r.rank == 1);
  CHECK(r.weight_only.diff.max_rel > 0.1);
  CHECK(r.first_block_only.diff.max_rel > 0.1);
  CHECK(r.float32.max_rel < 1e-5);
  CHECK(r.float32.max_rel > 1e-10);
  MESSAGE("weight-only " << r.weight_only.diff.max_rel << ", first-block-only "
                         << r.first_block_only.diff.max_rel << ", float32 " << r.float32.max_rel);
  // another base seed, another model; a tolerance below rounding fails, and says so
  o.base_seed = 2;
  CHECK(run(o).model.blocks[0].W[0] != r.model.blocks[0].W[0]);
  o.tol = 1e-30;
  const CheckResult tight = run(o);
  CHECK(tight.status == Status::CheckFailed);
  CHECK(!tight.passed());
  CHECK(tight.message.find("failed") != std::string::npos);
  CHECK(to_json(tight).at("pass") == false);
  // chunk on a stack is refused, naming the field
  CheckOptions stack;
  stack.model.spec = small_spec();
  stack.model.spec.layers = 2;
  stack.context = 6;
  stack.chunk_begin = 0;
  stack.chunk_end = 2;
  CHECK(field_of([&] { run(stack); }) == "chunk");
}

TEST_CASE("load_model: the file is checked against the given flags, naming the field") {
  const std::string path = (std::filesystem::temp_directory_path() / "icl_patch_exp_w.txt").string();
  ModelSpec spec = small_spec();
  spec.layers = 2;
  spec.block.kind = BlockKind::PreLn;
  spec.width = 8;
  {
    std::ofstream os(path);
    save_weights(init_weights(spec.config(), {.seed = 3}), os);
  }
  ModelSource src;
  src.spec = spec;
  src.weights = path;
  CHECK(make_model(src, 1).config == spec.config());
  src.spec.layers = 3;
  CHECK(make_model(src, 1).config.layers == 2);  // not given: the file decides
  src.given_layers = true;
  CHECK(field_of([&] { make_model(src, 1); }) == "layers");
  src.spec.layers = 2;
  src.spec.d = 4;
  src.given_d = true;
  CHECK(field_of([&] { make_model(src, 1); }) == "d");
  src.given_d = false;
  src.spec.heads = 5;
  src.given_heads = true;
  CHECK(field_of([&] { make_model(src, 1); }) == "heads");
  src.weights = path + ".missing";
  CHECK(field_of([&] { make_model(src, 1); }) == "weights");
  std::filesystem::remove(path);
}

TEST_CASE("run(DynamicsOptions): the mean step curve of docs/patch.md §9 from the contextual layer; slopes about -1 (attention) and 0 (RNN)") {
  DynamicsOptions o;
  o.model.spec = small_spec();
  const int n = o.context = 64;
  o.prompts = 3;
  const DynamicsResult r = run(o);
  CHECK(r.status == Status::Converged);
  const auto prompts = make_prompts(2, n, o.prompts, derive_seed(o.base_seed, "prompts"));
  for (const auto& [m, kind] : {std::pair{&r.attention, LayerKind::Softmax}, std::pair{&r.rnn, LayerKind::Rnn}}) {
    CAPTURE(to_string(kind));
    ModelSpec spec = small_spec();
    spec.kind = kind;
    const Weights<double> w = init_weights(spec.config(), {.seed = derive_seed(o.base_seed, "weights")});
    const auto& b = w.blocks[0];
    // s_i = |dW_i - dW_{i-1}|_F = |W (A_i - A_{i-1})| / |A_0|, A_i = A(c_1..c_i, x), mean over
    // prompts (no embedding: width 3).
    std::vector<double> mean(static_cast<std::size_t>(n), 0.0);
    for (const Prompt& p : prompts) {
      const auto A = [&](int i) {
        Mat<double> seq(3, i + 1);
        seq << p.tokens.leftCols(i), p.tokens.col(n);
        return Vec<double>(contextual_forward(w.config, b, seq).col(i));
      };
      const Vec<double> a0 = A(0);
      Vec<double> prev = a0;
      for (int i = 1; i <= n; ++i) {
        const Vec<double> ai = A(i);
        mean[static_cast<std::size_t>(i) - 1] += (b.W[0] * (ai - prev)).norm() / a0.norm() / o.prompts;
        prev = ai;
      }
    }
    // least-squares slope of log s_i on log i over i >= max(2, n/8)
    double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
    for (int i = 1; i <= n; ++i) {
      const double si = mean[static_cast<std::size_t>(i) - 1];
      CHECK(std::abs(m->initial.steps[static_cast<std::size_t>(i) - 1].mean - si) < 1e-10 * si);
      if (i < n / 8) continue;
      const double lx = std::log(double(i)), ly = std::log(si);
      sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, k += 1;
    }
    CHECK(m->initial.fit_from == n / 8);
    CHECK(std::abs(m->initial.slope_of_mean_curve - (k * sxy - sx * sy) / (k * sxx - sx * sx)) < 1e-9);
    CHECK(m->initial.prefix_max_rel < 1e-12);
    MESSAGE(to_string(kind) << ": slope " << m->initial.slope_of_mean_curve);
  }
  // docs/patch.md §9: attention about -1 (the test range (-1.5, -0.6)), the RNN about 0 (|.| < 0.3)
  CHECK(r.attention.initial.slope_of_mean_curve > -1.5);
  CHECK(r.attention.initial.slope_of_mean_curve < -0.6);
  CHECK(std::abs(r.rnn.initial.slope_of_mean_curve) < 0.3);
  CHECK(to_table(r).rows.size() == static_cast<std::size_t>(n));
}

TEST_CASE("run(ThoughtOptions): the no-patch error recomputed from the calibration streams; exact at m = 1, held-out error falls with m") {
  ThoughtOptions o;
  o.model.spec = small_spec();
  o.context = 10;
  o.prompts = 2;
  o.m_values = {1, 4, 16};
  o.heldout = 8;
  const ThoughtResult r = run(o);
  CHECK(r.status == Status::Converged);
  REQUIRE(r.per_prompt.size() == 2);
  const Weights<double> w = init_weights(o.model.spec.config(), {.seed = derive_seed(o.base_seed, "weights")});
  const auto prompts = make_prompts(2, o.context, o.prompts, derive_seed(o.base_seed, "prompts"));
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    // docs/patch.md §10: queries (xi, 0), xi ~ N(0, I_2), of stream ("calibration", k): the 16
    // calibration queries, then the 8 held-out ones; no patch: the MSE between the query-only
    // and the full-context output.
    std::mt19937_64 rng(derive_seed(o.base_seed, "calibration", k));
    std::normal_distribution<double> nd(0.0, 1.0);
    Mat<double> seq = prompts[k].tokens;
    double none = 0;
    for (int j = 0; j < 16 + o.heldout; ++j) {
      for (int i = 0; i < 2; ++i) seq(i, o.context) = nd(rng);
      seq(2, o.context) = 0;
      if (j < 16) continue;
      const Mat<double> alone = forward(w, Mat<double>(seq.col(o.context)));
      none += (alone - forward(w, seq).col(o.context)).squaredNorm() / (3.0 * o.heldout);
    }
    for (const ThoughtRow& row : r.per_prompt[k]) {
      CAPTURE(row.m);
      CHECK(std::abs(row.heldout_none - none) < 1e-12 * none);
    }
    CHECK(r.per_prompt[k][0].train_err < 1e-10 * none);                    // m = 1: exact
    CHECK(r.per_prompt[k][2].heldout_err < r.per_prompt[k][0].heldout_err);  // falls with m
    CHECK(r.per_prompt[k][2].heldout_err < none);
  }
  for (std::size_t i = 0; i < o.m_values.size(); ++i) {  // the summary: the mean over contexts
    CHECK(r.summary[i].m == o.m_values[i]);
    const double mean = (r.per_prompt[0][i].heldout_err + r.per_prompt[1][i].heldout_err) / 2;
    CHECK(std::abs(r.summary[i].heldout_err.mean - mean) <= 1e-15 * mean);
    CHECK(r.summary[i].heldout_err.count == 2);
  }
  // residual blocks: the static db2 (docs/patch.md §5, §10) is reported
  o.model.spec.block.kind = BlockKind::PreLn;
  CHECK(to_json(run(o)).at("mean_over_prompts").at(0).at("db2_norm").get<double>() > 0);
}

TEST_CASE("run(AlignOptions): cos_F per prompt, the mismatched pairing and the summaries recomputed from align_pairs") {
  AlignOptions o;
  o.model.spec = small_spec();
  o.context = 6;
  o.prompts = 3;
  o.steps = {1, 2};
  const AlignResult r = run(o);
  CHECK(r.status == Status::Converged);
  CHECK(!r.trained);
  REQUIRE(r.curves.size() == 4);
  const Weights<double> w = init_weights(o.model.spec.config(), {.seed = derive_seed(o.base_seed, "weights")});
  const auto prompts = make_prompts(2, o.context, o.prompts, derive_seed(o.base_seed, "prompts"));
  const Weights<double> random =
      init_weights(w.config, {.seed = derive_seed(o.base_seed, "random-weights")});
  for (const AlignCurve& c : r.curves) {
    CAPTURE(to_string(c.protocol));
    std::vector<AlignPairs> pairs;
    for (const Prompt& p : prompts) pairs.push_back(align_pairs(w, p, c.protocol, o.steps, o.lr));
    const std::size_t J = c.protocol == AlignProtocol::FullBatch ? 2 : 6;
    REQUIRE(c.x.size() == J);
    double summary = 0;
    for (std::size_t j = 0; j < J; ++j) {
      double mismatched = 0;
      for (std::size_t p = 0; p < 3; ++p) {
        const double cos = cos_frobenius(pairs[p].implicit[j], pairs[p].explicit_[j]);
        CHECK(c.cos[p][j] == cos);
        summary += cos / double(3 * J);
        mismatched += cos_frobenius(pairs[p].implicit[j], pairs[(p + 1) % 3].explicit_[j]) / 3;
      }
      CHECK(std::abs(c.mismatched[j].mean - mismatched) < 1e-15);
    }
    CHECK(std::abs(c.summary.mean - summary) < 1e-15);
    CHECK(c.summary_random.mean == align_curve(random, prompts, c.protocol, o.steps, o.lr).summary.mean);
  }
  CHECK(to_table(r).rows.size() == 2 + 6 + 6 + 6);
}

TEST_CASE("run(TrainRunOptions): train() on the documented streams, bit for bit; the logged losses recomputed") {
  TrainRunOptions o;
  o.model.spec = small_spec();
  o.training = {.n_ctx = 5, .batch = 4, .steps = 3, .eval_every = 1, .eval_prompts = 4, .threads = 1};
  std::size_t calls = 0;
  const TrainRunResult r = run(o, [&](std::size_t, std::size_t total, const std::string&) {
    ++calls;
    CHECK(total == 3);
  });
  CHECK(r.training.status == Status::Converged);
  CHECK(r.training.log.size() == 4);
  CHECK(calls == 4);
  // docs/patch.md §13, §14.1: initial weights of stream "weights", then train() with base seed
  // derive_seed(base_seed, "training")
  Weights<double> w = init_weights(o.model.spec.config(), {.seed = derive_seed(o.base_seed, "weights")});
  TrainOptions t = o.training;
  t.base_seed = derive_seed(o.base_seed, "training");
  const TrainResult direct = train(w, t);
  Weights<double> a = r.weights, b = w, i0 = r.initial;
  const auto pa = parameters(a), pb = parameters(b), pi = parameters(i0);
  for (std::size_t k = 0; k < pa.size(); ++k) {
    CHECK(*pa[k].second == *pb[k].second);
    CHECK(*pa[k].second != *pi[k].second);  // trained
  }
  CHECK(direct.final_eval_loss == r.training.final_eval_loss);
  // the step-0 row: the initial model on the evaluation set of stream "eval"
  double mse = 0, zero = 0;
  for (const Prompt& e : make_prompts(2, 5, 4, derive_seed(t.base_seed, "eval"))) {
    const double err = forward(r.initial, e.tokens)(2, 5) - e.target;
    mse += err * err / 4;
    zero += e.target * e.target / 4;
  }
  CHECK(std::abs(r.training.log[0].eval_loss - mse) < 1e-12 * mse);
  CHECK(std::abs(r.training.zero_loss - zero) < 1e-12 * zero);
  for (const auto& row : r.training.log) {
    CHECK(row.patch_max_rel < 1e-10);
    CHECK(std::abs(row.eval_loss_patched - row.eval_loss) <= 1e-10 * row.eval_loss);
  }
  CHECK(to_table(r.training).rows.size() == 4);
}
