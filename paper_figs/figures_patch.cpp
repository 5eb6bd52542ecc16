// Data steps of figures 8-12: the implicit-dynamics paper (spec patch.md), computed with
// verify/patch (the exact rank-1 patch, implicit dynamics, alignment, thought patch, training).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "paper_figs/figures_extra.hpp"
#include "verify/patch/model.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/train.hpp"

namespace icl::paperfigs {
namespace {

namespace P = icl::verify::patch;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void report(const Settings& s, const std::string& what, std::size_t done, std::size_t total) {
  if (s.progress) s.progress(what, done, total);
}

struct MeanSem {
  double mean = kNaN, sem = kNaN;
};
MeanSem mean_sem(const std::vector<double>& v) {
  MeanSem r;
  if (v.empty()) return r;
  double m = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  r.mean = m;
  if (v.size() < 2) return r;
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  r.sem = std::sqrt(ss / double(v.size() - 1) / double(v.size()));
  return r;
}

nlohmann::json config_json(const P::ModelConfig& c) {
  return {{"token_dim", c.token_dim}, {"embed", c.embed},         {"width", c.width},
          {"layers", c.layers},       {"kind", P::to_string(c.kind)}, {"heads", c.heads},
          {"head_dim", c.head_dim},   {"causal", c.causal},       {"mlp_hidden", c.mlp_hidden},
          {"mlp_depth", c.mlp_depth}, {"act", P::to_string(c.act)}, {"residual", c.residual},
          {"layernorm", c.layernorm}, {"parameters", P::parameter_count(c)}};
}

nlohmann::json base_meta(const Settings& s, int figure, const std::string& what) {
  return {{"figure", figure},
          {"figure_command", s.command},
          {"mode", s.quick ? "quick" : "full"},
          {"what", what},
          {"base_seed", s.seed}};
}

// The paper's small in-context-regression model (spec patch.md 8): d = 2, one plain block
// (no skips, no LayerNorm), softmax attention with 8 heads of size 4, MLP width 128 (GELU).
// --quick: 2 heads, MLP width 32.
P::ModelConfig plain_config(const Settings& s, P::LayerKind kind = P::LayerKind::Softmax) {
  P::ModelConfig c;
  c.token_dim = 3;
  c.width = 3;
  c.embed = false;
  c.layers = 1;
  c.kind = kind;
  c.heads = s.quick ? 2 : 8;
  c.head_dim = 4;
  c.mlp_hidden = s.quick ? 32 : 128;
  c.mlp_depth = 2;
  c.residual = false;
  c.layernorm = false;
  c.validate();
  return c;
}

P::TrainParams plain_train_params(const Settings& s) {
  P::TrainParams tp;
  tp.d = 2;
  tp.n_ctx = s.quick ? 20 : 50;
  tp.batch = s.quick ? 16 : 64;
  tp.steps = s.quick ? 40 : 3000;
  tp.adam.lr = 1e-3;
  tp.seed = s.seed + 1000;
  tp.eval_every = s.quick ? 10 : 100;
  tp.eval_prompts = s.quick ? 32 : 128;
  tp.track_patch = true;
  tp.threads = std::max(1, s.threads);
  return tp;
}

// The trained one-block model shared by figures 8, 11 and 12 (trained once per process and
// mode; training is deterministic given the settings, so sharing changes no number).
struct TrainedPlain {
  P::Weights<double> init, trained;
  P::TrainResult result;
  P::TrainParams params;
};
const TrainedPlain& trained_plain(const Settings& s) {
  static std::mutex mu;
  static std::map<std::pair<bool, std::uint64_t>, TrainedPlain> cache;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(s.quick, s.seed);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  TrainedPlain t;
  t.params = plain_train_params(s);
  t.init = P::init_weights(plain_config(s), {.seed = s.seed});
  t.trained = t.init;
  const int steps = t.params.steps;
  t.result = P::train(t.trained, t.params, [&](const P::TrainLogRow& row) {
    report(s, "train one-block model", std::size_t(row.step), std::size_t(steps));
  });
  return cache.emplace(key, std::move(t)).first->second;
}

nlohmann::json training_json(const TrainedPlain& t) {
  const auto& p = t.params;
  return {{"optimizer", "adam"},
          {"lr", p.adam.lr},
          {"steps", p.steps},
          {"batch", p.batch},
          {"context", p.n_ctx},
          {"d", p.d},
          {"clip", p.clip},
          {"eval_every", p.eval_every},
          {"eval_prompts", p.eval_prompts},
          {"data_seed", p.seed},
          {"zero_predictor_loss", t.result.zero_loss},
          {"final_eval_loss", t.result.final_eval_loss},
          {"seconds", t.result.seconds}};
}

}  // namespace

// ---- figure 8: loss with context vs patched query-only loss along training -------------------

FigureData fig_patch_loss(const Settings& s) {
  const TrainedPlain& t = trained_plain(s);
  DataTable tab;
  tab.stem = "patch_loss";
  tab.columns = {"step", "train_loss", "eval_loss", "eval_loss_patched", "rel_diff",
                 "patch_max_rel"};
  for (const auto& r : t.result.log) {
    const double rel = std::abs(r.eval_loss_patched - r.eval_loss) /
                       std::max(std::abs(r.eval_loss), std::numeric_limits<double>::min());
    tab.rows.push_back({double(r.step), r.train_loss, r.eval_loss, r.eval_loss_patched, rel,
                        r.patch_max_rel});
  }
  tab.meta = base_meta(s, 8, "training log: eval loss with context and of the patched model");
  tab.meta["model"] = config_json(t.trained.config);
  tab.meta["init_seed"] = s.seed;
  tab.meta["training"] = training_json(t);
  tab.meta["rel_diff"] =
      "|eval_loss_patched - eval_loss| / eval_loss on the fixed evaluation prompts; "
      "patch_max_rel = largest relative output difference over those prompts";
  FigureData out;
  out.tables.push_back(std::move(tab));
  return out;
}

// ---- figure 9: equivalence error per layer of a 10-layer Pre-LN model ------------------------

FigureData fig_patch_layers(const Settings& s) {
  P::ModelConfig c;
  c.token_dim = 3;
  c.embed = true;
  c.width = 32;
  c.layers = 10;
  c.kind = P::LayerKind::Softmax;
  c.heads = s.quick ? 2 : 4;
  c.head_dim = 8;
  c.mlp_hidden = s.quick ? 32 : 64;
  c.mlp_depth = 2;
  c.residual = true;
  c.layernorm = true;
  c.validate();
  P::Weights<double> w = P::init_weights(c, {.seed = s.seed + 9});
  nlohmann::json training = nullptr;
  if (!s.quick) {
    P::TrainParams tp;
    tp.d = 2;
    tp.n_ctx = 30;
    tp.batch = 32;
    tp.steps = 300;
    tp.adam.lr = 1e-3;
    tp.seed = s.seed + 1900;
    tp.eval_every = 50;
    tp.eval_prompts = 64;
    tp.track_patch = false;
    tp.threads = std::max(1, s.threads);
    const auto r = P::train(w, tp, [&](const P::TrainLogRow& row) {
      report(s, "patch_layers train 10-layer model", std::size_t(row.step),
             std::size_t(tp.steps));
    });
    training = {{"optimizer", "adam"}, {"lr", tp.adam.lr},     {"steps", tp.steps},
                {"batch", tp.batch},   {"context", tp.n_ctx},  {"data_seed", tp.seed},
                {"zero_predictor_loss", r.zero_loss},
                {"final_eval_loss", r.final_eval_loss},        {"seconds", r.seconds}};
  }
  const P::Weights<float> w32 = P::cast_weights<float>(w);
  const int n_ctx = s.quick ? 10 : 30;
  const int prompts = s.quick ? 3 : 16;
  const auto ps = P::make_prompts(2, n_ctx, prompts, s.seed + 909);
  const std::size_t L = std::size_t(c.layers);
  std::vector<P::Diff> f64(L), f32(L), first(L), weight(L);
  std::vector<P::Diff> final_diff(4);
  int degenerate = 0, max_rank = 0;
  for (std::size_t k = 0; k < ps.size(); ++k) {
    const auto& tok = ps[k].tokens;
    const int pos = n_ctx;  // the query
    const auto r64 = P::stack_check(w, tok, pos, P::PatchMode::Full);
    const auto r32 = P::stack_check(w32, P::Mat<float>(tok.cast<float>()), pos, P::PatchMode::Full);
    const auto rfirst = P::stack_check(w, tok, pos, P::PatchMode::Full, 1);
    const auto rweight = P::stack_check(w, tok, pos, P::PatchMode::WeightOnly);
    degenerate += r64.degenerate;
    for (const auto& ri : r64.ranks) max_rank = std::max(max_rank, ri.rank);
    for (std::size_t l = 0; l < L; ++l) {
      f64[l].merge(r64.per_layer[l]);
      f32[l].merge(r32.per_layer[l]);
      first[l].merge(rfirst.per_layer[l]);
      weight[l].merge(rweight.per_layer[l]);
    }
    final_diff[0].merge(r64.diff);
    final_diff[1].merge(r32.diff);
    final_diff[2].merge(rfirst.diff);
    final_diff[3].merge(rweight.diff);
    report(s, "patch_layers checks", k + 1, ps.size());
  }
  DataTable tab;
  tab.stem = "patch_layers";
  tab.columns = {"layer",           "f64_max_rel",   "f32_max_rel",   "first_only_max_rel",
                 "weight_only_max_rel", "f64_max_abs", "f32_max_abs", "first_only_max_abs",
                 "weight_only_max_abs"};
  for (std::size_t l = 0; l < L; ++l)
    tab.rows.push_back({double(l + 1), f64[l].max_rel, f32[l].max_rel, first[l].max_rel,
                        weight[l].max_rel, f64[l].max_abs, f32[l].max_abs, first[l].max_abs,
                        weight[l].max_abs});
  tab.meta = base_meta(s, 9, "relative difference of the representation after each block, "
                             "full context vs patched query-only (max over prompts)");
  tab.meta["model"] = config_json(c);
  tab.meta["init_seed"] = s.seed + 9;
  tab.meta["trained"] = !s.quick;
  tab.meta["training"] = training;
  tab.meta["prompts"] = prompts;
  tab.meta["context"] = n_ctx;
  tab.meta["prompt_seed"] = s.seed + 909;
  tab.meta["degenerate_anchors"] = degenerate;
  tab.meta["max_rank_dW1"] = max_rank;
  tab.meta["final_output"] = {{"f64", final_diff[0].max_rel},
                              {"f32", final_diff[1].max_rel},
                              {"first_block_only", final_diff[2].max_rel},
                              {"weight_only", final_diff[3].max_rel}};
  tab.meta["controls"] = {
      {"first_only", "only block 1 patched, blocks 2..10 unpatched (negative control)"},
      {"weight_only", "dW on W1 only, without db2 = H_C - H_0 (not exact with residuals)"},
      {"f32", "same weights cast to float32, patch computed in float32"}};
  FigureData out;
  out.tables.push_back(std::move(tab));
  return out;
}

// ---- figure 10: implicit step norms, attention vs RNN -----------------------------------------

FigureData fig_patch_steps(const Settings& s) {
  const int n_ctx = s.quick ? 24 : 200;
  const int prompts = s.quick ? 3 : 16;
  const auto ps = P::make_prompts(2, n_ctx, prompts, s.seed + 1099);
  struct Kind {
    const char* name;
    P::LayerKind kind;
  };
  const Kind kinds[2] = {{"attention", P::LayerKind::Softmax}, {"rnn", P::LayerKind::Rnn}};
  std::vector<std::vector<std::vector<double>>> steps(2);  // [kind][prompt][i]
  nlohmann::json checks = nlohmann::json::object();
  nlohmann::json fits = nlohmann::json::object();
  std::vector<std::vector<double>> mean(2, std::vector<double>(std::size_t(n_ctx), kNaN)),
      sem = mean, fitline = mean;
  const int fit_from = std::max(2, n_ctx / 8);
  std::size_t done = 0;
  for (int k = 0; k < 2; ++k) {
    const P::Weights<double> w = P::init_weights(plain_config(s, kinds[k].kind), {.seed = s.seed});
    double prefix = 0, gd = 0;
    std::vector<double> slopes;
    for (const auto& p : ps) {
      const auto r = P::implicit_dynamics(w, p.tokens, fit_from);
      steps[std::size_t(k)].push_back(r.steps);
      prefix = std::max(prefix, r.prefix_max_rel);
      gd = std::max(gd, r.gd_max_rel);
      slopes.push_back(r.slope);
      report(s, "patch_steps implicit dynamics", ++done, 2 * ps.size());
    }
    std::vector<double> xs, ys;
    for (int i = 1; i <= n_ctx; ++i) {
      std::vector<double> v;
      for (const auto& st : steps[std::size_t(k)]) v.push_back(st[std::size_t(i - 1)]);
      const MeanSem ms = mean_sem(v);
      mean[std::size_t(k)][std::size_t(i - 1)] = ms.mean;
      sem[std::size_t(k)][std::size_t(i - 1)] = ms.sem;
      if (i >= fit_from) {
        xs.push_back(i);
        ys.push_back(ms.mean);
      }
    }
    const auto [slope, intercept] = P::loglog_fit(xs, ys);  // (slope, intercept)
    for (int i = fit_from; i <= n_ctx; ++i)
      fitline[std::size_t(k)][std::size_t(i - 1)] = std::exp(intercept + slope * std::log(i));
    const MeanSem sl = mean_sem(slopes);
    fits[kinds[k].name] = {{"slope_of_mean_curve", slope},
                           {"intercept", intercept},
                           {"slope_per_prompt_mean", sl.mean},
                           {"slope_per_prompt_sem", sl.sem},
                           {"fit_from", fit_from},
                           {"fit_to", n_ctx}};
    checks[kinds[k].name] = {{"prefix_identity_max_rel", prefix},
                             {"online_gd_max_rel", gd},
                             {"model", config_json(w.config)}};
  }
  DataTable tab;
  tab.stem = "patch_steps";
  tab.columns = {"i",         "attention", "attention_sem", "attention_fit",
                 "rnn",       "rnn_sem",   "rnn_fit"};
  for (int i = 1; i <= n_ctx; ++i) {
    const auto u = std::size_t(i - 1);
    tab.rows.push_back({double(i), mean[0][u], sem[0][u], fitline[0][u], mean[1][u], sem[1][u],
                        fitline[1][u]});
  }
  tab.meta = base_meta(s, 10, "||dW_i - dW_{i-1}||_F against token index i (mean and s.e. over "
                              "prompts), random weights");
  tab.meta["weights"] = "random initialization (seed = base_seed), not trained";
  tab.meta["context"] = n_ctx;
  tab.meta["prompts"] = prompts;
  tab.meta["prompt_seed"] = s.seed + 1099;
  tab.meta["fit"] = fits;
  tab.meta["checks"] = checks;
  FigureData out;
  out.tables.push_back(std::move(tab));
  return out;
}

// ---- figure 11: alignment with explicit SGD finetuning ---------------------------------------

FigureData fig_patch_align(const Settings& s) {
  const TrainedPlain& t = trained_plain(s);
  P::AlignParams ap;
  ap.steps = s.quick ? std::vector<int>{1, 5, 20} : std::vector<int>{1, 2, 5, 10, 20, 50, 100, 200};
  ap.lr = 0.01;
  ap.prompts = s.quick ? 4 : 32;
  ap.n_ctx = t.params.n_ctx;
  ap.seed = s.seed + 1103;
  const auto trained = P::alignment(t.trained, ap);
  report(s, "patch_align alignment", 1, 2);
  const auto random = P::alignment(t.init, ap);
  report(s, "patch_align alignment", 2, 2);
  DataTable tab;
  tab.stem = "patch_align";
  tab.columns = {"sgd_steps", "cos_mean", "cos_sem", "mismatched_mean", "random_mean",
                 "random_sem"};
  for (std::size_t j = 0; j < trained.steps.size(); ++j)
    tab.rows.push_back({double(trained.steps[j]), trained.mean[j], trained.sem[j],
                        j < trained.mismatched_mean.size() ? trained.mismatched_mean[j] : kNaN, random.mean[j], random.sem[j]});
  tab.meta = base_meta(s, 11, "cos_F(dW(C), dW_sgd) against SGD steps (mean, s.e. over prompts)");
  tab.meta["model"] = config_json(t.trained.config);
  tab.meta["training"] = training_json(t);
  tab.meta["align"] = {{"sgd_lr", ap.lr}, {"prompts", ap.prompts}, {"context", ap.n_ctx},
                       {"seed", ap.seed}, {"steps", ap.steps}};
  tab.meta["baselines"] = {
      {"mismatched", "dW_impl of prompt p against dW_sgd of prompt p+1 (trained model)"},
      {"random", "the same computation on the untrained (initial) weights"}};
  FigureData out;
  out.tables.push_back(std::move(tab));
  return out;
}

// ---- figure 12: thought patch against calibration size ---------------------------------------

FigureData fig_thought_patch(const Settings& s) {
  const TrainedPlain& t = trained_plain(s);
  P::ThoughtParams tp;
  tp.m_values = {1, 4, 16, 64, 256};
  tp.heldout = s.quick ? 64 : 256;
  tp.ridge = 1e-6;
  const int contexts = s.quick ? 3 : 16;
  const int n_ctx = t.params.n_ctx;
  const auto ps = P::make_prompts(2, n_ctx, contexts, s.seed + 1205);
  const std::size_t M = tp.m_values.size();
  // [m][context] for each quantity
  std::vector<std::vector<double>> tr(M), he(M), tra(M), hea(M), none(M);
  for (std::size_t k = 0; k < ps.size(); ++k) {
    tp.seed = s.seed + 1211 + k;
    const auto rows =
        P::thought_patch(t.trained, P::Mat<double>(ps[k].tokens.leftCols(n_ctx)), tp);
    for (std::size_t i = 0; i < rows.size() && i < M; ++i) {
      tr[i].push_back(rows[i].train_err);
      he[i].push_back(rows[i].heldout_err);
      tra[i].push_back(rows[i].train_avg);
      hea[i].push_back(rows[i].heldout_avg);
      none[i].push_back(rows[i].heldout_none);
    }
    report(s, "thought_patch contexts", k + 1, ps.size());
  }
  DataTable tab;
  tab.stem = "thought_patch";
  tab.columns = {"m"};
  for (const char* n : {"train_err", "heldout_err", "train_avg_rank1", "heldout_avg_rank1",
                        "heldout_no_patch"}) {
    tab.columns.push_back(n);
    tab.columns.push_back(std::string(n) + "_sem");
  }
  for (std::size_t i = 0; i < M; ++i) {
    std::vector<double> row = {double(tp.m_values[i])};
    for (const auto* v : {&tr[i], &he[i], &tra[i], &hea[i], &none[i]}) {
      const MeanSem ms = mean_sem(*v);
      row.push_back(ms.mean);
      row.push_back(ms.sem);
    }
    tab.rows.push_back(std::move(row));
  }
  tab.meta = base_meta(s, 12, "thought patch: MSE between the patched query-only output and the "
                              "full-context output, mean and s.e. over contexts");
  tab.meta["model"] = config_json(t.trained.config);
  tab.meta["training"] = training_json(t);
  tab.meta["thought"] = {{"m_values", tp.m_values}, {"heldout", tp.heldout},
                         {"ridge", tp.ridge},       {"contexts", contexts},
                         {"context", n_ctx},        {"context_seed", s.seed + 1205},
                         {"query_seed_rule", "context k: base_seed + 1211 + k"}};
  FigureData out;
  out.tables.push_back(std::move(tab));
  return out;
}

}  // namespace icl::paperfigs
