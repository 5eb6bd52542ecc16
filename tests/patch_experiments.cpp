// The experiments layer of verify/patch (experiments.hpp): validate() of every Options struct
// names the field, and each run_* entry at small sizes returns the status its checks imply.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "numerics/error.hpp"
#include "patch_test_util.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/serialize.hpp"

using namespace icl::verify::patch;
using icl::InvalidParams;
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

ModelSpec small_spec() {
  ModelSpec m;
  m.heads = 2;
  m.head_dim = 3;
  m.mlp_hidden = 12;
  return m;
}

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

TEST_CASE("run_check: identity Converged, controls fail, a tiny tolerance is CheckFailed") {
  CheckOptions o;
  o.model.spec = small_spec();
  o.context = 8;
  o.prompts = 2;
  o.chunk_begin = 2;
  o.chunk_end = 5;
  const CheckResult r = run(o);
  CHECK(r.status == Status::Converged);
  CHECK(r.passed());
  CHECK(r.diff.max_rel < 1e-12);
  CHECK(r.chunk.max_rel < 1e-12);
  CHECK(r.bias_only.max_rel < 1e-12);
  CHECK(r.rank == 1);
  // a plain one-block model cannot show the controls: they run on the control model
  CHECK(!r.weight_only.given_model);
  CHECK(!r.first_block_only.given_model);
  CHECK(r.weight_only.diff.max_rel > 1e-3);
  CHECK(r.first_block_only.diff.max_rel > 1e-3);
  CHECK(r.per_layer_first_only_max.size() == 4);
  // deterministic in its seed, different for another seed
  const CheckResult again = run(o);
  CHECK(again.diff.max_abs == r.diff.max_abs);
  CHECK(again.model.blocks[0].W[0] == r.model.blocks[0].W[0]);
  o.base_seed = 2;
  CHECK(run(o).model.blocks[0].W[0] != r.model.blocks[0].W[0]);
  o.tol = 1e-30;
  const CheckResult tight = run(o);
  CHECK(tight.status == Status::CheckFailed);
  CHECK(!tight.passed());
  CHECK(tight.message.find("failed") != std::string::npos);
  // the serializer carries the CLI keys
  const auto j = to_json(r);
  for (const char* k : {"config", "weights", "context", "position", "prompts", "max_abs_diff",
                        "max_rel_diff", "rank", "degenerate_anchors", "per_layer", "float32",
                        "variants", "chunk", "seconds_per_check", "negative_controls", "pass",
                        "tolerance", "status"})
    CHECK(j.contains(k));
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

TEST_CASE("run_dynamics, run_thought, run_align, run_train at small sizes") {
  DynamicsOptions d;
  d.model.spec = small_spec();
  d.context = 16;
  d.prompts = 2;
  const DynamicsResult dr = run(d);
  CHECK(dr.status == Status::Converged);
  CHECK(dr.attention.config.kind == LayerKind::Softmax);
  CHECK(dr.rnn.config.kind == LayerKind::Rnn);
  REQUIRE(dr.attention.initial.steps.size() == 16);
  CHECK(dr.attention.initial.steps[3].count == 2);
  CHECK(std::isfinite(dr.attention.initial.steps[3].sem));
  CHECK(dr.attention.initial.prefix_max_rel < 1e-12);
  CHECK(to_table(dr).rows.size() == 16);

  ThoughtOptions t;
  t.model.spec = small_spec();
  t.model.spec.block.kind = BlockKind::PreLn;
  t.context = 10;
  t.prompts = 2;
  t.m_values = {1, 4};
  t.heldout = 8;
  const ThoughtResult tr = run(t);
  CHECK(tr.status == Status::Converged);
  REQUIRE(tr.per_prompt.size() == 2);
  REQUIRE(tr.summary.size() == 2);
  CHECK(tr.summary[0].m == 1);
  CHECK(tr.summary[0].train_err.count == 2);
  for (const auto& rows : tr.per_prompt) CHECK(rows[0].train_err < 1e-10 * rows[0].heldout_none);
  CHECK(to_table(tr).rows.size() == 4);
  CHECK(to_json(tr).at("mean_over_prompts").at(0).contains("db2_norm"));

  AlignOptions a;
  a.model.spec = small_spec();
  a.context = 6;
  a.prompts = 2;
  a.steps = {1, 2};
  const AlignResult ar = run(a);
  CHECK(ar.status == Status::Converged);
  CHECK(!ar.trained);
  REQUIRE(ar.curves.size() == 4);
  CHECK(ar.curves[0].cos.size() == 2);
  CHECK(ar.curves[0].x == std::vector<int>{1, 2});
  CHECK(ar.curves[1].x.size() == 6);  // online: one point per context example
  CHECK(ar.curves[2].random.size() == 6);
  CHECK(to_table(ar).rows.size() == 2 + 6 + 6 + 6);

  TrainRunOptions o;
  o.model.spec = small_spec();
  o.training.steps = 3;
  o.training.batch = 4;
  o.training.n_ctx = 5;
  o.training.eval_every = 1;
  o.training.eval_prompts = 4;
  o.training.threads = 1;
  std::size_t calls = 0;
  const TrainRunResult r = run(o, [&](std::size_t, std::size_t total, const std::string&) {
    ++calls;
    CHECK(total == 3);
  });
  CHECK(r.training.status == Status::Converged);
  CHECK(r.training.log.size() == 4);
  CHECK(calls == 4);
  CHECK((*parameters(const_cast<Weights<double>&>(r.weights))[0].second -
         *parameters(const_cast<Weights<double>&>(r.initial))[0].second).norm() > 0);
  for (const auto& row : r.training.log) CHECK(row.patch_max_rel < 1e-10);
  CHECK(to_table(r.training).rows.size() == 4);
}
