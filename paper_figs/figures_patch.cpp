// Data steps of figures 8-13: the implicit-dynamics paper (docs/patch.md). Each figure sets the
// options of a verify/patch experiment (verify/patch/experiments.hpp), runs it, and lays its
// result out as a table; the procedures live in the library.
//
// Seeds: the trained one-block model of figures 8, 11, 12 is run(TrainRunOptions) with the base seed
// (streams "weights" and "training"); figures 9-12 run their experiments with
// derive_seed(base_seed, "<figure stem>").
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "numerics/seed.hpp"
#include "paper_figs/figures_extra.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/serialize.hpp"

namespace icl::paperfigs {
namespace {

namespace P = icl::verify::patch;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

numerics::Progress reporter(const numerics::Progress& progress, const std::string& name) {
  if (!progress) return {};
  return [&progress, name](std::size_t done, std::size_t total, const std::string& what) {
    progress(done, total, name + " " + what);
  };
}

nlohmann::json plain(const P::Json& j) { return nlohmann::json(j); }

// A training summary for a sidecar: the serializer's keys without the per-step log.
nlohmann::json training_meta(const P::TrainResult& r) {
  nlohmann::json j = plain(P::to_json(r));
  j.erase("log");
  return j;
}

nlohmann::json base_meta(const Settings& s, int figure, const std::string& what) {
  return {{"figure", figure},
          {"figure_command", s.command},
          {"mode", s.quick ? "quick" : "full"},
          {"what", what},
          {"base_seed", s.base_seed}};
}

std::uint64_t figure_seed(const Settings& s, const char* stem) {
  return numerics::derive_seed(s.base_seed, stem);
}

// The paper's small in-context-regression model (docs/patch.md §13): d = 2, one plain block
// (no skips, no LayerNorm), softmax attention with 8 heads of size 4, MLP width 128 (GELU).
// --quick: 2 heads, MLP width 32.
P::ModelSpec plain_spec(const Settings& s) {
  P::ModelSpec m;
  m.d = 2;
  m.layers = 1;
  m.heads = s.quick ? 2 : 8;
  m.head_dim = 4;
  m.mlp_hidden = s.quick ? 32 : 128;
  m.mlp_depth = 2;
  return m;
}

P::TrainOptions plain_train_options(const Settings& s) {
  P::TrainOptions tp;
  tp.n_ctx = s.quick ? 20 : 50;
  tp.batch = s.quick ? 16 : 64;
  tp.steps = s.quick ? 40 : 3000;
  tp.adam.lr = 1e-3;
  tp.eval_every = s.quick ? 10 : 100;
  tp.eval_prompts = s.quick ? 32 : 128;
  tp.track_patch = true;
  tp.threads = std::max(1, s.threads);
  return tp;
}

// The trained one-block model shared by figures 8, 11 and 12 (trained once per process and
// mode; training is deterministic given the settings, so sharing changes no number).
const P::TrainRunResult& trained_plain(const Settings& s, const numerics::Progress& progress) {
  static std::mutex mu;
  static std::map<std::pair<bool, std::uint64_t>, P::TrainRunResult> cache;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(s.quick, s.base_seed);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  P::TrainRunOptions o;
  o.model.spec = plain_spec(s);
  o.base_seed = s.base_seed;
  o.training = plain_train_options(s);
  return cache.emplace(key, P::run(o, reporter(progress, "train one-block model"))).first->second;
}

// The sidecar keys of a figure on the trained one-block model: the model and its training.
void trained_meta(DataTable& tab, const P::TrainRunResult& t) {
  tab.meta["model"] = plain(P::to_json(t.weights.config));
  tab.meta["training"] = training_meta(t.training);
}

// An experiment of figures 11 and 12 on the trained one-block model: base seed
// derive_seed(base_seed, stem), the context of the training. The result holds its options.
template <class Options>
auto run_on_trained(const Settings& s, const numerics::Progress& progress, const char* stem,
                    Options o) {
  const P::TrainRunResult& t = trained_plain(s, progress);
  o.base_seed = figure_seed(s, stem);
  o.context = t.training.options.n_ctx;
  return P::run(t.weights, o, reporter(progress, stem));
}

FigureData one_table(DataTable tab) {
  FigureData out;
  out.tables.push_back(std::move(tab));
  return out;
}

// The 10-layer models of figures 9 and 17 (d = 2): `width`, `heads` heads of `head_dim` (2 with
// --quick), MLP `hidden` (`quick_hidden` with --quick).
P::ModelSpec deep_spec(const Settings& s, int width, int heads, int head_dim, int hidden,
                       int quick_hidden) {
  P::ModelSpec m;
  m.d = 2;
  m.layers = 10;
  m.width = width;
  m.heads = s.quick ? 2 : heads;
  m.head_dim = head_dim;
  m.mlp_hidden = s.quick ? quick_hidden : hidden;
  return m;
}

}  // namespace

// ---- figure 8: loss with context vs patched query-only loss along training -------------------

FigureData fig_patch_loss(const Settings& s, const numerics::Progress& progress) {
  const P::TrainRunResult& t = trained_plain(s, progress);
  DataTable tab;
  tab.stem = "patch_loss";
  tab.table.columns = {"step", "train_loss", "eval_loss", "eval_loss_patched", "rel_diff",
                 "patch_max_rel"};
  for (const auto& r : t.training.log) {
    const double rel = std::abs(r.eval_loss_patched - r.eval_loss) /
                       std::max(std::abs(r.eval_loss), std::numeric_limits<double>::min());
    tab.table.rows.push_back({double(r.step), r.train_loss, r.eval_loss, r.eval_loss_patched, rel,
                        r.patch_max_rel});
  }
  tab.meta = base_meta(s, 8, "training log: eval loss with context and of the patched model");
  trained_meta(tab, t);
  tab.meta["init_seed"] = numerics::derive_seed(s.base_seed, "weights");
  tab.meta["rel_diff"] =
      "|eval_loss_patched - eval_loss| / eval_loss on the fixed evaluation prompts; "
      "patch_max_rel = largest relative output difference over those prompts";
  return one_table(std::move(tab));
}

// ---- figure 9: equivalence error per layer of a 10-layer Pre-LN model ------------------------

FigureData fig_patch_layers(const Settings& s, const numerics::Progress& progress) {
  P::CheckOptions o;
  o.model.spec = deep_spec(s, 32, 4, 8, 64, 32);
  o.model.spec.block.kind = P::BlockKind::PreLn;
  o.base_seed = figure_seed(s, "patch_layers");
  if (!s.quick) {
    o.training.steps = 300;
    o.training.n_ctx = 30;
    o.training.batch = 32;
    o.training.adam.lr = 1e-3;
    o.training.eval_every = 50;
    o.training.eval_prompts = 64;
    o.training.track_patch = false;
    o.training.threads = std::max(1, s.threads);
  }
  o.context = s.quick ? 10 : 30;
  o.prompts = s.quick ? 3 : 16;
  const P::CheckResult r = P::run(o, reporter(progress, "patch_layers"));
  DataTable tab;
  tab.stem = "patch_layers";
  tab.table.columns = {"layer",           "f64_max_rel",   "f32_max_rel",   "first_only_max_rel",
                 "weight_only_max_rel", "f64_max_abs", "f32_max_abs", "first_only_max_abs",
                 "weight_only_max_abs"};
  for (std::size_t l = 0; l < r.per_layer_max.size(); ++l) {
    const auto& f64 = r.per_layer_max[l];
    const auto& f32 = r.per_layer_float32_max[l];
    const auto& first = r.per_layer_first_only_max[l];
    const auto& weight = r.per_layer_weight_only_max[l];
    tab.table.rows.push_back({double(l + 1), f64.max_rel, f32.max_rel, first.max_rel, weight.max_rel,
                        f64.max_abs, f32.max_abs, first.max_abs, weight.max_abs});
  }
  tab.meta = base_meta(s, 9, "relative difference of the representation after each block, "
                             "full context vs patched query-only (max over prompts)");
  tab.meta["model"] = plain(P::to_json(r.model.config));
  tab.meta["seed"] = o.base_seed;
  tab.meta["trained"] = r.training.has_value();
  tab.meta["training"] = r.training ? training_meta(*r.training) : nlohmann::json(nullptr);
  tab.meta["prompts"] = o.prompts;
  tab.meta["context"] = o.context;
  tab.meta["status"] = numerics::to_string(r.status);
  tab.meta["degenerate_anchors"] = r.degenerate_anchors;
  tab.meta["max_rank_dW1"] = r.rank;
  tab.meta["final_output"] = {{"f64", r.diff.max_rel},
                              {"f32", r.float32.max_rel},
                              {"first_block_only", r.first_block_only.diff.max_rel},
                              {"weight_only", r.weight_only.diff.max_rel}};
  tab.meta["controls"] = {
      {"first_only", "only block 1 patched, blocks 2..10 unpatched (negative control)"},
      {"weight_only", "dW on W1 only, without db2 = H_C - H_0 (not exact with residuals)"},
      {"f32", "same weights cast to float32, patch computed in float32"}};
  return one_table(std::move(tab));
}

// ---- figure 10: implicit step norms, attention vs RNN -----------------------------------------

FigureData fig_patch_steps(const Settings& s, const numerics::Progress& progress) {
  P::DynamicsOptions o;
  o.model.spec = plain_spec(s);
  o.base_seed = figure_seed(s, "patch_steps");
  o.context = s.quick ? 24 : 200;
  o.prompts = s.quick ? 3 : 16;
  const P::DynamicsResult r = P::run(o, reporter(progress, "patch_steps"));
  nlohmann::json checks = nlohmann::json::object(), fits = nlohmann::json::object();
  std::vector<double> fitline[2];
  const std::pair<const char*, const P::DynamicsModel*> models[2] = {{"attention", &r.attention},
                                                                     {"rnn", &r.rnn}};
  for (int k = 0; k < 2; ++k) {
    const auto& [name, model] = models[k];
    const P::DynamicsMeasure& d = model->initial;
    for (int i = 1; i <= o.context; ++i)
      fitline[k].push_back(i >= d.fit_from ? std::exp(d.intercept_of_mean_curve +
                                                      d.slope_of_mean_curve * std::log(i))
                                           : kNaN);
    const numerics::Estimate sl = numerics::estimate(d.slopes);
    fits[name] = {{"slope_of_mean_curve", d.slope_of_mean_curve},
                  {"intercept", d.intercept_of_mean_curve},
                  {"slope_per_prompt_mean", sl.mean},
                  {"slope_per_prompt_sem", sl.sem},
                  {"fit_from", d.fit_from},
                  {"fit_to", o.context}};
    checks[name] = {{"prefix_identity_max_rel", d.prefix_max_rel},
                    {"online_gd_max_rel", d.gd_max_rel},
                    {"model", plain(P::to_json(model->config))}};
  }
  DataTable tab;
  tab.stem = "patch_steps";
  tab.table.columns = {"i",         "attention", "attention_sem", "attention_fit",
                 "rnn",       "rnn_sem",   "rnn_fit"};
  for (int i = 1; i <= o.context; ++i) {
    const auto u = std::size_t(i - 1);
    const auto& a = r.attention.initial.steps[u];
    const auto& n = r.rnn.initial.steps[u];
    tab.table.rows.push_back({double(i), a.mean, a.sem, fitline[0][u], n.mean, n.sem, fitline[1][u]});
  }
  tab.meta = base_meta(s, 10, "||dW_i - dW_{i-1}||_F against token index i (mean and s.e. over "
                              "prompts), random weights");
  tab.meta["weights"] = "random initialization, not trained";
  tab.meta["seed"] = o.base_seed;
  tab.meta["context"] = o.context;
  tab.meta["prompts"] = o.prompts;
  tab.meta["status"] = numerics::to_string(r.status);
  tab.meta["fit"] = fits;
  tab.meta["checks"] = checks;
  return one_table(std::move(tab));
}

// ---- figure 11: alignment with explicit gradient updates, three protocols ---------------------

FigureData fig_patch_align(const Settings& s, const numerics::Progress& progress) {
  P::AlignOptions a;
  a.steps = s.quick ? std::vector<int>{1, 5, 20} : std::vector<int>{1, 2, 5, 10, 20, 50, 100, 200};
  a.lr = 0.01;
  a.prompts = s.quick ? 4 : 32;
  const P::AlignResult r = run_on_trained(s, progress, "patch_align", a);
  const P::AlignOptions& o = r.options;
  DataTable tab;
  tab.stem = "patch_align";
  tab.table = P::to_table(r);
  tab.meta = base_meta(s, 11, "cos_F(implicit dW, explicit update) per protocol (mean, s.e. over prompts)");
  trained_meta(tab, trained_plain(s, progress));
  tab.meta["align"] = {{"sgd_lr", o.lr}, {"prompts", o.prompts}, {"context", o.context},
                       {"seed", o.base_seed}, {"steps", o.steps}};
  nlohmann::json protocols = nlohmann::json::array();
  for (const P::AlignCurve& c : r.curves) {
    nlohmann::json pj = plain(P::to_json(c));
    for (const char* k : {"cos_per_prompt", "cos_mean", "cos_sem", "mismatched_mean",
                          "mismatched_sem", "random_mean", "random_sem", "x"})
      pj.erase(k);  // in the table
    pj["id"] = static_cast<int>(c.protocol);
    protocols.push_back(pj);
  }
  tab.meta["protocols"] = protocols;
  tab.meta["baselines"] = {
      {"mismatched", "implicit update of prompt p against the explicit update of prompt p+1"},
      {"random", "the same protocol on random weights of the same shape"}};
  return one_table(std::move(tab));
}

// ---- figure 12: thought patch against calibration size ---------------------------------------

FigureData fig_thought_patch(const Settings& s, const numerics::Progress& progress) {
  P::ThoughtOptions th;
  th.m_values = {1, 4, 16, 64, 256};
  th.heldout = s.quick ? 64 : 256;
  th.ridge = 1e-6;
  th.prompts = s.quick ? 3 : 16;
  const P::ThoughtResult r = run_on_trained(s, progress, "thought_patch", th);
  const P::ThoughtOptions& o = r.options;
  DataTable tab;
  tab.stem = "thought_patch";
  tab.table.columns = {"m"};
  for (const char* n : {"train_err", "heldout_err", "train_avg_rank1", "heldout_avg_rank1",
                        "heldout_no_patch"}) {
    tab.table.columns.push_back(n);
    tab.table.columns.push_back(std::string(n) + "_sem");
  }
  for (const auto& x : r.summary) {
    std::vector<double> row = {double(x.m)};
    for (const auto* e : {&x.train_err, &x.heldout_err, &x.train_avg, &x.heldout_avg, &x.heldout_none}) {
      row.push_back(e->mean);
      row.push_back(e->sem);
    }
    tab.table.rows.push_back(std::move(row));
  }
  tab.meta = base_meta(s, 12, "thought patch: MSE between the patched query-only output and the "
                              "full-context output, mean and s.e. over contexts");
  trained_meta(tab, trained_plain(s, progress));
  tab.meta["thought"] = {{"m_values", o.m_values}, {"heldout", o.heldout},
                         {"ridge", o.ridge},       {"contexts", o.prompts},
                         {"context", o.context},   {"seed", o.base_seed},
                         {"seed_rule", "contexts: derive_seed(seed, \"prompts\"); queries of "
                                       "context k: derive_seed(seed, \"calibration\", k)"}};
  tab.meta["status"] = numerics::to_string(r.status);
  return one_table(std::move(tab));
}

// ---- figure 17: per-layer error of the patch for each block kind -----------------------------

// Each block kind of docs/patch.md §16 as a 10-layer model with random weights (the identities
// do not depend on training; figure 9 shows a trained Pre-LN stack), `run(CheckOptions)` with its float32
// pass and controls, seed derive_seed(base_seed, "patch_blocks", k) for kind k.
FigureData fig_patch_blocks(const Settings& s, const numerics::Progress& progress) {
  using B = P::BlockKind;
  using N = P::Norm;
  using M = P::Mlp;
  const std::vector<P::Block> kinds = {
      {B::Plain, N::None, M::Gelu},       {B::Residual, N::None, M::Gelu},
      {B::PreLn, N::LayerNorm, M::Gelu},  {B::PreLn, N::RmsNorm, M::SwiGlu},
      {B::PostLn, N::LayerNorm, M::Gelu}, {B::PostLn, N::RmsNorm, M::SwiGlu},
      {B::Parallel, N::LayerNorm, M::GeGlu}, {B::Parallel, N::RmsNorm, M::SwiGlu}};
  DataTable tab;
  tab.stem = "patch_blocks";
  tab.table.columns = {"kind", "layer", "f64_max_rel", "f32_max_rel", "weight_only_max_rel"};
  nlohmann::json names = nlohmann::json::array(), finals = nlohmann::json::array();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    P::CheckOptions o;
    o.model.spec = deep_spec(s, 16, 4, 4, 64, 16);
    o.model.spec.block = kinds[k];
    o.base_seed = numerics::derive_seed(s.base_seed, "patch_blocks", k);
    o.context = s.quick ? 10 : 30;
    o.prompts = s.quick ? 2 : 8;
    const P::CheckResult r = P::run(o, reporter(progress, "patch_blocks"));
    const bool own_control = r.weight_only.given_model;  // plain blocks: on the control model
    for (std::size_t l = 0; l < r.per_layer_max.size(); ++l)
      tab.table.rows.push_back({double(k), double(l + 1), r.per_layer_max[l].max_rel,
                          r.per_layer_float32_max[l].max_rel,
                          own_control ? r.per_layer_weight_only_max[l].max_rel : kNaN});
    names.push_back(P::label(r.model.config.block));
    finals.push_back({{"f64", r.diff.max_rel},
                      {"f32", r.float32.max_rel},
                      {"weight_only", own_control ? r.weight_only.diff.max_rel : kNaN},
                      {"gate_only", r.has_gate_only ? r.gate_only.diff.max_rel : kNaN},
                      {"norm_scale", r.has_norm_scale ? r.norm_scale.max_rel : kNaN},
                      {"rank_W1", r.rank},
                      {"rank_Wg", r.rank_gate},
                      {"status", numerics::to_string(r.status)},
                      {"degenerate_anchors", r.degenerate_anchors},
                      {"seed", o.base_seed}});
  }
  tab.meta = base_meta(s, 17, "relative difference of the representation after each block, full "
                              "context vs patched query-only (max over prompts), per block kind");
  tab.meta["kinds"] = names;
  tab.meta["final_output"] = finals;
  tab.meta["model"] = {{"d", 2}, {"layers", 10}, {"width", 16}, {"heads", s.quick ? 2 : 4},
                       {"head_dim", 4}, {"mlp_hidden", s.quick ? 16 : 64}, {"weights", "random"}};
  tab.meta["prompts"] = s.quick ? 2 : 8;
  tab.meta["context"] = s.quick ? 10 : 30;
  tab.meta["controls"] = {
      {"weight_only", "dW on W1 (and W_g) only, without the stream patch db2 / norm scale "
                      "(not exact with residuals); NaN for plain blocks"},
      {"f32", "same weights cast to float32, patch computed in float32"}};
  return one_table(std::move(tab));
}

}  // namespace icl::paperfigs
