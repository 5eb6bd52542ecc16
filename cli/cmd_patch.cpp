// `icl patch check|dynamics|thought|align|train`: the exact rank-1 patch of in-context learning
// (spec patch.md) on contextual blocks built in verify/patch.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "verify/patch/model.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/train.hpp"

namespace icl::cli {
namespace {

using nlohmann::json;
namespace P = icl::verify::patch;

struct Options {
  // model
  int d = 2, context = 50, layers = 1, heads = 8, head_dim = 4, width = 0, mlp = 128,
      mlp_depth = 2;
  bool pre_ln = false, residual = false, noncausal = false;
  std::string kind = "softmax", act = "gelu", weights, save;
  std::uint64_t seed = 1;
  bool json = false;
  std::string out;
  // training (train, and --train-steps elsewhere)
  int train_steps = 0, batch = 64, eval_every = 100, threads = 2;
  int train_context = 0;  // context pairs during training (0: --context)
  double lr = 1e-3;
  // check
  int pos = -1, prompts = 1;
  std::string chunk;  // "B:E" (check, one-block models)
  double tol = 1e-10;
  // dynamics / thought / align
  std::string rnn_weights;
  std::vector<int> m_values{1, 4, 16, 64, 256};
  int heldout = 256;
  double ridge = 1e-6, sgd_lr = 0.01;
  std::vector<int> sgd_steps{1, 2, 5, 10, 20, 50, 100};
  // explicit-flag tracking
  CLI::Option *o_width = nullptr, *o_layers = nullptr, *o_heads = nullptr, *o_d = nullptr;
};

CLI::Validator at_least(int lo) {
  return CLI::Validator(
      [lo](std::string& s) -> std::string {
        try {
          std::size_t pos = 0;
          const long v = std::stol(s, &pos);
          if (pos != s.size()) return "not an integer: '" + s + "'";
          if (v < lo) return "must be >= " + std::to_string(lo) + ", got " + s;
        } catch (...) {
          return "not an integer: '" + s + "'";
        }
        return {};
      },
      ">=" + std::to_string(lo));
}

CLI::Validator positive_real() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          std::size_t pos = 0;
          const double v = std::stod(s, &pos);
          if (pos != s.size() || !std::isfinite(v) || !(v > 0)) return "must be a positive number, got " + s;
        } catch (...) {
          return "not a number: '" + s + "'";
        }
        return {};
      },
      "(0, inf)");
}

void add_model_options(CLI::App* a, Options& o) {
  const char* g = "Model";
  o.o_d = a->add_option("--d", o.d, "input dimension d (tokens are (x, y) in R^{d+1})")
              ->check(at_least(1))->group(g)->capture_default_str();
  a->add_option("--context", o.context, "context pairs n")->check(at_least(1))->group(g)->capture_default_str();
  o.o_layers = a->add_option("--layers", o.layers, "number of blocks L")->check(at_least(1))->group(g)->capture_default_str();
  a->add_flag("--pre-ln", o.pre_ln, "Pre-LN residual blocks (H = Z + A(LN1 Z), Y = H + MLP(LN2 H))")->group(g);
  a->add_flag("--residual", o.residual, "residual blocks without LayerNorm")->group(g);
  a->add_option("--kind", o.kind, "contextual layer: softmax | linear | rnn")
      ->check(CLI::IsMember({"softmax", "linear", "rnn"}))->group(g)->capture_default_str();
  o.o_heads = a->add_option("--heads", o.heads, "attention heads")->check(at_least(1))->group(g)->capture_default_str();
  a->add_option("--head-dim", o.head_dim, "size of each head")->check(at_least(1))->group(g)->capture_default_str();
  o.o_width = a->add_option("--width", o.width,
                            "model width (0: d+1 without embedding for plain blocks, 32 with an "
                            "embedding for residual blocks; != d+1 adds a linear embedding/readout)")
                  ->check(at_least(0))->group(g)->capture_default_str();
  a->add_option("--mlp", o.mlp, "MLP hidden width")->check(at_least(1))->group(g)->capture_default_str();
  a->add_option("--mlp-depth", o.mlp_depth, "dense layers in the MLP")->check(at_least(1))->group(g)->capture_default_str();
  a->add_option("--act", o.act, "MLP activation: gelu | relu")->check(CLI::IsMember({"gelu", "relu"}))->group(g)->capture_default_str();
  a->add_flag("--noncausal", o.noncausal, "attention without causal mask")->group(g);
  a->add_option("--seed", o.seed, "seed of weights and data")->group(g)->capture_default_str();
  a->add_option("--weights", o.weights, "load weights from FILE (icl-patch-weights text format)")->group(g);
  a->add_option("--train-steps", o.train_steps, "train the model first (Adam) for this many steps")
      ->check(at_least(0))->group("Training")->capture_default_str();
  a->add_option("--train-context", o.train_context, "context pairs during training (0: --context)")
      ->check(at_least(0))->group("Training")->capture_default_str();
  a->add_option("--batch", o.batch, "prompts per training step")->check(at_least(1))->group("Training")->capture_default_str();
  a->add_option("--lr", o.lr, "Adam learning rate")->check(positive_real())->group("Training")->capture_default_str();
  a->add_option("--eval-every", o.eval_every, "evaluate every N steps")->check(at_least(1))->group("Training")->capture_default_str();
  a->add_option("--threads", o.threads, "threads for training")->check(at_least(1))->group("Training")->capture_default_str();
  a->add_option("--save", o.save, "save the (trained) weights to FILE")->group("Training");
  a->add_flag("--json", o.json, "print one JSON object");
  a->add_option("--out", o.out, "write the table (TSV + JSON sidecar) to FILE");
}

P::ModelConfig model_config(const Options& o, bool rnn = false) {
  P::ModelConfig c;
  c.token_dim = o.d + 1;
  c.layers = o.layers;
  c.kind = rnn ? P::LayerKind::Rnn : P::layer_kind_from_string(o.kind);
  c.heads = o.heads;
  c.head_dim = o.head_dim;
  c.mlp_hidden = o.mlp;
  c.mlp_depth = o.mlp_depth;
  c.act = P::activation_from_string(o.act);
  c.causal = !o.noncausal;
  c.residual = o.residual || o.pre_ln;
  c.layernorm = o.pre_ln;
  int width = o.width;
  if (width == 0) width = c.residual ? 32 : c.token_dim;
  c.width = width;
  c.embed = width != c.token_dim || (c.residual && o.width == 0);
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw ExitError(kExitBadInput, std::string("invalid model: ") + e.what());
  }
  return c;
}

json config_json(const P::ModelConfig& c) {
  return {{"token_dim", c.token_dim}, {"embed", c.embed},         {"width", c.width},
          {"layers", c.layers},       {"kind", P::to_string(c.kind)}, {"heads", c.heads},
          {"head_dim", c.head_dim},   {"causal", c.causal},       {"mlp_hidden", c.mlp_hidden},
          {"mlp_depth", c.mlp_depth}, {"act", P::to_string(c.act)}, {"residual", c.residual},
          {"layernorm", c.layernorm}, {"parameters", P::parameter_count(c)}};
}

P::Weights<double> load_checked(const Options& o, const std::string& path) {
  if (!std::filesystem::exists(path))
    throw ExitError(kExitBadInput, "weights file '" + path + "' does not exist");
  P::Weights<double> w;
  try {
    w = P::load_weights_file(path);
  } catch (const std::exception& e) {
    throw ExitError(kExitBadInput, "cannot load weights '" + path + "': " + e.what());
  }
  const auto& c = w.config;
  auto mismatch = [&](const char* flag, int given, int file) {
    throw ExitError(kExitBadInput, std::string("width mismatch: ") + flag + " " +
                                       std::to_string(given) + " but '" + path + "' has " +
                                       std::to_string(file));
  };
  if (o.o_width && o.o_width->count() && o.width != 0 && o.width != c.width) mismatch("--width", o.width, c.width);
  if (o.o_layers && o.o_layers->count() && o.layers != c.layers) mismatch("--layers", o.layers, c.layers);
  if (o.o_heads && o.o_heads->count() && c.kind != P::LayerKind::Rnn && o.heads != c.heads)
    mismatch("--heads", o.heads, c.heads);
  if (o.o_d && o.o_d->count() && o.d + 1 != c.token_dim) mismatch("--d (+1)", o.d + 1, c.token_dim);
  if (!o.o_d || !o.o_d->count()) {
    // d comes from the file
  }
  return w;
}

// Train `w` in place when --train-steps > 0; returns a JSON summary (null when not trained).
json maybe_train(P::Weights<double>& w, const Options& o, const std::string& tag, bool track_patch) {
  if (o.train_steps <= 0) return nullptr;
  P::TrainParams tp;
  tp.d = w.config.token_dim - 1;
  tp.n_ctx = o.train_context > 0 ? o.train_context : o.context;
  tp.batch = o.batch;
  tp.steps = o.train_steps;
  tp.adam.lr = o.lr;
  tp.seed = o.seed + 1000;
  tp.eval_every = o.eval_every;
  tp.threads = o.threads;
  tp.track_patch = track_patch;
  auto r = P::train(w, tp, [&](const P::TrainLogRow& row) {
    progress("patch train " + tag, static_cast<std::size_t>(row.step), static_cast<std::size_t>(tp.steps));
  });
  json log = json::array();
  for (auto& row : r.log)
    log.push_back({{"step", row.step}, {"train_loss", row.train_loss}, {"eval_loss", row.eval_loss},
                   {"eval_loss_patched", row.eval_loss_patched}, {"patch_max_rel_diff", row.patch_max_rel}});
  return {{"steps", tp.steps},          {"zero_predictor_loss", r.zero_loss},
          {"final_eval_loss", r.final_eval_loss}, {"seconds", r.seconds},
          {"tokens_per_second", r.tokens_per_second}, {"log", log}};
}

P::Weights<double> get_model(const Options& o) {
  if (!o.weights.empty()) return load_checked(o, o.weights);
  return P::init_weights(model_config(o), {.seed = o.seed});
}

void save_if(const Options& o, const P::Weights<double>& w) {
  if (o.save.empty()) return;
  std::ostringstream os;
  P::save_weights(w, os);
  write_file_atomically(o.save, os.str());
}

double num(const json& v) { return v.is_number() ? v.get<double>() : std::nan(""); }

json diff_json(const P::Diff& d) { return {{"max_abs_diff", d.max_abs}, {"max_rel_diff", d.max_rel}}; }

// ---- check ---------------------------------------------------------------------------------

void run_check(const Options& o) {
  P::Weights<double> w = get_model(o);
  json trained = maybe_train(w, o, "check", false);
  save_if(o, w);
  const int d = w.config.token_dim - 1;
  const auto prompts = P::make_prompts(d, o.context, o.prompts, o.seed + 77);
  const int n = o.context;
  const int pos = o.pos < 0 ? n : o.pos;
  if (pos > n) throw ExitError(kExitBadInput, "--pos must be in [0, context]");
  P::Diff all, all32, first_only, weight_only, bias_only, bias_free, chunk_diff;
  int chunk_b = -1, chunk_e = -1, chunk_rank = 0;
  if (!o.chunk.empty()) {
    const auto colon = o.chunk.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no colon");
      chunk_b = std::stoi(o.chunk.substr(0, colon));
      chunk_e = std::stoi(o.chunk.substr(colon + 1));
    } catch (const std::exception&) {
      throw ExitError(kExitBadInput, "--chunk must be B:E (context tokens B..E-1), got '" + o.chunk + "'");
    }
    if (chunk_b < 0 || chunk_e < chunk_b || chunk_e > o.context)
      throw ExitError(kExitBadInput, "--chunk B:E needs 0 <= B <= E <= context");
    if (w.config.layers != 1)
      throw ExitError(kExitBadInput, "--chunk needs a one-block model (--layers 1)");
  }
  int rank = 0, degenerate = 0;
  double seconds = 0;
  json per_layer = json::array();
  const bool first_applicable = w.config.layers > 1;
  const bool weight_applicable = w.config.residual;
  // Negative controls on a control model when the given model cannot show them.
  P::ModelConfig cc = w.config;
  cc.residual = true;
  cc.layernorm = true;
  if (!cc.embed) { cc.embed = true; cc.width = 32; }
  cc.layers = std::max(cc.layers, 4);
  const P::Weights<double> control = P::init_weights(cc, {.seed = o.seed + 5});
  const P::Weights<float> w32 = P::cast_weights<float>(w);
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = P::stack_check(w, prompts[k].tokens, pos, P::PatchMode::Full);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    all.merge(r.diff);
    degenerate += r.degenerate;
    for (auto& ri : r.ranks) rank = std::max(rank, ri.rank);
    if (k == 0)
      for (auto& dl : r.per_layer) per_layer.push_back(diff_json(dl));
    auto r32 = P::stack_check(w32, P::Mat<float>(prompts[k].tokens.cast<float>()), pos, P::PatchMode::Full);
    all32.merge(r32.diff);
    const auto& wf = first_applicable ? w : control;
    first_only.merge(P::stack_check(wf, prompts[k].tokens, pos, P::PatchMode::Full, 1).diff);
    bias_only.merge(P::stack_check(w, prompts[k].tokens, pos, P::PatchMode::BiasOnly).diff);
    bias_free.merge(P::stack_check(w, prompts[k].tokens, pos, P::PatchMode::BiasFree).diff);
    if (chunk_b >= 0) {
      auto cr = P::chunk_check(w, prompts[k].tokens, chunk_b, chunk_e, P::PatchMode::Full);
      chunk_diff.merge(cr.diff);
      chunk_rank = std::max(chunk_rank, cr.rank.rank);
      if (cr.patch.status != P::PatchStatus::Ok) ++degenerate;
    }
    const auto& ww = weight_applicable ? w : control;
    weight_only.merge(P::stack_check(ww, prompts[k].tokens, pos, P::PatchMode::WeightOnly).diff);
  }
  json j;
  j["config"] = config_json(w.config);
  j["weights"] = o.weights.empty() ? json("random (seed " + std::to_string(o.seed) + ")") : json(o.weights);
  if (!trained.is_null()) j["training"] = trained;
  j["context"] = n;
  j["position"] = pos;
  j["prompts"] = o.prompts;
  j["max_abs_diff"] = all.max_abs;
  j["max_rel_diff"] = all.max_rel;
  j["rank"] = rank;
  j["degenerate_anchors"] = degenerate;
  j["per_layer"] = per_layer;
  j["float32"] = diff_json(all32);
  j["variants"] = {{"bias_only", diff_json(bias_only)}, {"bias_free", diff_json(bias_free)}};
  if (chunk_b >= 0) {
    json cj = diff_json(chunk_diff);
    cj["begin"] = chunk_b;
    cj["end"] = chunk_e;
    cj["rank"] = chunk_rank;
    j["chunk"] = cj;
  }
  j["seconds_per_check"] = seconds / o.prompts;
  j["negative_controls"] = {
      {"weight_only_with_residual",
       {{"max_abs_diff", weight_only.max_abs}, {"max_rel_diff", weight_only.max_rel},
        {"model", weight_applicable ? "given" : "control (Pre-LN, 32 wide, " + std::to_string(cc.layers) + " layers)"}}},
      {"first_block_only",
       {{"max_abs_diff", first_only.max_abs}, {"max_rel_diff", first_only.max_rel},
        {"model", first_applicable ? "given" : "control (Pre-LN, 32 wide, " + std::to_string(cc.layers) + " layers)"}}}};
  const bool pass = all.max_rel <= o.tol && degenerate == 0 && bias_only.max_rel <= o.tol &&
                    bias_free.max_rel <= o.tol && chunk_diff.max_rel <= o.tol;
  j["pass"] = pass;
  j["tolerance"] = o.tol;
  if (o.json) {
    emit_json(j, o.out);
  } else {
    std::cout << "patch check: L=" << w.config.layers << " " << P::to_string(w.config.kind)
              << (w.config.layernorm ? " pre-ln" : (w.config.residual ? " residual" : " plain"))
              << ", width " << w.config.width << ", context " << n << ", position " << pos << "\n"
              << "  float64 max_rel_diff " << format_number(all.max_rel) << " (max_abs "
              << format_number(all.max_abs) << "), rank " << rank << "\n"
              << "  float32 max_rel_diff " << format_number(all32.max_rel) << "\n"
              << "  variants: bias-only " << format_number(bias_only.max_rel) << ", bias-free "
              << format_number(bias_free.max_rel)
              << (chunk_b >= 0 ? ", chunk " + o.chunk + " " + format_number(chunk_diff.max_rel) : std::string())
              << "\n"
              << "  negative controls: weight-only " << format_number(weight_only.max_rel)
              << ", first-block-only " << format_number(first_only.max_rel) << "\n"
              << "  " << (pass ? "PASS" : "FAIL") << "\n";
  }
  if (!pass) throw ExitError(kExitNotConverged, "patch identity failed: max_rel_diff " + format_number(all.max_rel));
}

// ---- dynamics ------------------------------------------------------------------------------

void run_dynamics(const Options& o) {
  Options oa = o;
  oa.layers = 1; oa.pre_ln = false; oa.residual = false;
  P::Weights<double> wa = o.weights.empty() ? P::init_weights(model_config(oa), {.seed = o.seed})
                                            : load_checked(oa, o.weights);
  P::Weights<double> wr = o.rnn_weights.empty()
                              ? P::init_weights(model_config(oa, true), {.seed = o.seed})
                              : load_checked(oa, o.rnn_weights);
  if (wa.config.token_dim != wr.config.token_dim)
    throw ExitError(kExitBadInput, "width mismatch: attention and RNN models have different token_dim");
  const int d = wa.config.token_dim - 1;
  const auto prompts = P::make_prompts(d, o.context, o.prompts, o.seed + 99);
  auto measure = [&](const P::Weights<double>& w) {
    std::vector<double> mean(static_cast<std::size_t>(o.context), 0.0);
    double prefix = 0, gd = 0, slope = 0;
    std::vector<double> slopes;
    for (auto& p : prompts) {
      auto r = P::implicit_dynamics(w, p.tokens);
      for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += r.steps[i] / prompts.size();
      prefix = std::max(prefix, r.prefix_max_rel);
      gd = std::max(gd, r.gd_max_rel);
      slopes.push_back(r.slope);
      slope += r.slope / prompts.size();
    }
    std::vector<double> xs, ys;
    const int from = std::max(2, o.context / 8);
    for (int i = from; i <= o.context; ++i) { xs.push_back(i); ys.push_back(mean[static_cast<std::size_t>(i) - 1]); }
    const auto fit = P::loglog_fit(xs, ys);
    json j = {{"prefix_max_rel_diff", prefix}, {"gd_max_rel_diff", gd},
              {"slope_mean_over_prompts", slope}, {"slope_of_mean_curve", fit.first},
              {"slopes", slopes}, {"fit_from", from}};
    return std::make_pair(j, mean);
  };
  json j;
  j["context"] = o.context;
  j["prompts"] = o.prompts;
  auto [ja, ma] = measure(wa);
  auto [jr, mr] = measure(wr);
  // "random" (seeded initial weights) or "loaded" (--weights / --rnn-weights)
  const std::string la = o.weights.empty() ? "random" : "loaded";
  const std::string lr = o.rnn_weights.empty() ? "random" : "loaded";
  j["attention"] = {{"config", config_json(wa.config)}, {la, ja}};
  j["rnn"] = {{"config", config_json(wr.config)}, {lr, jr}};
  if (!o.weights.empty()) j["attention"][la]["weights"] = o.weights;
  if (!o.rnn_weights.empty()) j["rnn"][lr]["weights"] = o.rnn_weights;
  Table t;
  t.columns = {"i", "step_attention", "step_rnn"};
  std::vector<double> mat, mrt;
  if (o.train_steps > 0) {
    j["attention"]["training"] = maybe_train(wa, o, "attention", false);
    j["rnn"]["training"] = maybe_train(wr, o, "rnn", false);
    auto [jat, mat_] = measure(wa);
    auto [jrt, mrt_] = measure(wr);
    j["attention"]["trained"] = jat;
    j["rnn"]["trained"] = jrt;
    mat = mat_; mrt = mrt_;
    t.columns.push_back("step_attention_trained");
    t.columns.push_back("step_rnn_trained");
  }
  for (int i = 1; i <= o.context; ++i) {
    const auto iu = static_cast<std::size_t>(i) - 1;
    std::vector<double> row{double(i), ma[iu], mr[iu]};
    if (!mat.empty()) { row.push_back(mat[iu]); row.push_back(mrt[iu]); }
    t.rows.push_back(row);
  }
  if (!o.out.empty()) emit_tsv(t, o.out, j);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "implicit dynamics, context " << o.context << ", " << o.prompts << " prompts\n"
              << "  prefix identity max rel " << format_number(std::max(double(ja["prefix_max_rel_diff"]), double(jr["prefix_max_rel_diff"])))
              << ", online-GD max rel " << format_number(std::max(double(ja["gd_max_rel_diff"]), double(jr["gd_max_rel_diff"]))) << "\n"
              << "  log-log slope of ||dW_{i+1}-dW_i||: attention " << format_number(ja["slope_of_mean_curve"])
              << " (" << la << "), rnn " << format_number(jr["slope_of_mean_curve"]) << " (" << lr
              << ")\n";
    if (j["attention"].contains("trained"))
      std::cout << "  trained: attention " << format_number(j["attention"]["trained"]["slope_of_mean_curve"])
                << ", rnn " << format_number(j["rnn"]["trained"]["slope_of_mean_curve"]) << "\n";
  }
}

// ---- thought -------------------------------------------------------------------------------

void run_thought(const Options& o) {
  Options oa = o;
  oa.layers = 1;  // plain, --residual or --pre-ln
  P::Weights<double> w = o.weights.empty() ? P::init_weights(model_config(oa), {.seed = o.seed})
                                           : load_checked(oa, o.weights);
  if (w.config.layers != 1)
    throw ExitError(kExitBadInput, "the thought patch needs a one-block model");
  const bool res = w.config.residual;
  json trained = maybe_train(w, o, "thought", false);
  save_if(o, w);
  const int d = w.config.token_dim - 1;
  P::ThoughtParams tp;
  tp.m_values = o.m_values;
  tp.heldout = o.heldout;
  tp.ridge = o.ridge;
  tp.seed = o.seed + 11;
  Table t;
  t.columns = {"prompt", "m", "train_err", "heldout_err", "train_avg_rank1", "heldout_avg_rank1", "heldout_no_patch"};
  if (res) t.columns.insert(t.columns.end(), {"train_no_db2", "heldout_no_db2", "db2_norm"});
  const auto prompts = P::make_prompts(d, o.context, o.prompts, o.seed + 5);
  std::vector<P::ThoughtRow> mean(tp.m_values.size());
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    tp.seed = o.seed + 11 + k;
    auto rows = P::thought_patch(w, P::Mat<double>(prompts[k].tokens.leftCols(o.context)), tp);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      t.rows.push_back({double(k), double(r.m), r.train_err, r.heldout_err, r.train_avg, r.heldout_avg, r.heldout_none});
      if (res) t.rows.back().insert(t.rows.back().end(), {r.train_no_db2, r.heldout_no_db2, r.db2_norm});
      const double f = 1.0 / prompts.size();
      mean[i].m = r.m;
      mean[i].train_err += f * r.train_err; mean[i].heldout_err += f * r.heldout_err;
      mean[i].train_avg += f * r.train_avg; mean[i].heldout_avg += f * r.heldout_avg;
      mean[i].heldout_none += f * r.heldout_none;
      mean[i].train_no_db2 += f * r.train_no_db2; mean[i].heldout_no_db2 += f * r.heldout_no_db2;
      mean[i].db2_norm += f * r.db2_norm;
    }
    progress("patch thought", k + 1, prompts.size());
  }
  json rows = json::array();
  for (auto& r : mean) {
    rows.push_back({{"m", r.m}, {"train_err", r.train_err}, {"heldout_err", r.heldout_err},
                    {"train_avg_rank1", r.train_avg}, {"heldout_avg_rank1", r.heldout_avg},
                    {"heldout_no_patch", r.heldout_none}});
    if (res) {
      rows.back()["train_no_db2"] = r.train_no_db2;
      rows.back()["heldout_no_db2"] = r.heldout_no_db2;
      rows.back()["db2_norm"] = r.db2_norm;
    }
  }
  json j = {{"config", config_json(w.config)}, {"context", o.context}, {"prompts", o.prompts},
            {"heldout", o.heldout}, {"ridge", o.ridge}, {"mean_over_prompts", rows}};
  if (!trained.is_null()) j["training"] = trained;
  if (!o.weights.empty()) j["weights"] = o.weights;
  if (!o.out.empty()) emit_tsv(t, o.out, j);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "thought patch (MSE vs full-context output, mean over " << o.prompts << " prompts)\n"
              << (res ? "residual block: dW* + static db2 = mean(H_C - H_0); no_db2 = dW* alone\n" : "")
              << "m\ttrain\theldout\ttrain_avg\theldout_avg\tno_patch"
              << (res ? "\ttrain_no_db2\theldout_no_db2\n" : "\n");
    for (auto& r : mean) {
      std::cout << r.m << '\t' << format_number(r.train_err) << '\t' << format_number(r.heldout_err) << '\t'
                << format_number(r.train_avg) << '\t' << format_number(r.heldout_avg) << '\t'
                << format_number(r.heldout_none);
      if (res) std::cout << '\t' << format_number(r.train_no_db2) << '\t' << format_number(r.heldout_no_db2);
      std::cout << '\n';
    }
  }
}

// ---- align ---------------------------------------------------------------------------------

void run_align(const Options& o) {
  Options oa = o;
  oa.layers = 1;
  P::Weights<double> w = o.weights.empty() ? P::init_weights(model_config(oa), {.seed = o.seed})
                                           : load_checked(oa, o.weights);
  if (w.config.layers != 1) throw ExitError(kExitBadInput, "alignment needs a one-block model");
  json trained = maybe_train(w, o, "align", false);
  save_if(o, w);
  P::AlignParams ap;
  ap.steps = o.sgd_steps;
  ap.lr = o.sgd_lr;
  ap.prompts = o.prompts;
  ap.n_ctx = o.context;
  ap.seed = o.seed + 3;
  auto r = P::alignment(w, ap);
  json j = {{"config", config_json(w.config)}, {"context", o.context}, {"prompts", o.prompts},
            {"sgd_lr", o.sgd_lr}, {"sgd_steps", r.steps}, {"cos_mean", r.mean}, {"cos_sem", r.sem},
            {"cos_mismatched_mean", r.mismatched_mean}, {"cos_per_prompt", r.cos},
            {"trained", !trained.is_null() || !o.weights.empty()}};
  if (!trained.is_null()) j["training"] = trained;
  if (!o.weights.empty()) j["weights"] = o.weights;
  Table t;
  t.columns = {"sgd_steps", "cos_mean", "cos_sem", "cos_mismatched_mean"};
  for (std::size_t s = 0; s < r.steps.size(); ++s)
    t.rows.push_back({double(r.steps[s]), r.mean[s], r.sem[s], r.mismatched_mean[s]});
  if (!o.out.empty()) emit_tsv(t, o.out, j);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "alignment cos_F(dW(C), dW_sgd), " << o.prompts << " prompts"
              << (j["trained"] ? "" : " (RANDOM weights: expect about 0)") << "\n"
              << "sgd_steps\tcos_mean\tcos_sem\tmismatched\n";
    for (std::size_t s = 0; s < r.steps.size(); ++s)
      std::cout << r.steps[s] << '\t' << format_number(r.mean[s]) << '\t' << format_number(r.sem[s])
                << '\t' << format_number(r.mismatched_mean[s]) << '\n';
  }
}

// ---- train ---------------------------------------------------------------------------------

void run_train(const Options& o, bool no_patch_track) {
  P::Weights<double> w = get_model(o);
  Options ot = o;
  if (ot.train_steps <= 0) ot.train_steps = 1000;
  json tr = maybe_train(w, ot, "", !no_patch_track);
  save_if(o, w);
  json j = {{"config", config_json(w.config)}, {"context", o.context}, {"batch", o.batch},
            {"lr", o.lr}, {"seed", o.seed}, {"training", tr}};
  if (!o.save.empty()) j["saved"] = o.save;
  Table t;
  t.columns = {"step", "train_loss", "eval_loss", "eval_loss_patched", "patch_max_rel_diff"};
  for (auto& row : tr["log"])
    t.rows.push_back({num(row["step"]), num(row["train_loss"]), num(row["eval_loss"]),
                      num(row["eval_loss_patched"]), num(row["patch_max_rel_diff"])});
  if (!o.out.empty()) emit_tsv(t, o.out, j);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "trained " << ot.train_steps << " steps in " << format_number(tr["seconds"]) << " s ("
              << format_number(tr["tokens_per_second"]) << " tokens/s)\n"
              << "zero-predictor loss " << format_number(tr["zero_predictor_loss"])
              << ", final eval loss " << format_number(tr["final_eval_loss"]) << "\n"
              << "step\ttrain\teval(context)\teval(patched query-only)\n";
    for (auto& row : tr["log"])
      std::cout << row["step"] << '\t' << format_number(num(row["train_loss"])) << '\t'
                << format_number(num(row["eval_loss"])) << '\t' << format_number(num(row["eval_loss_patched"]))
                << '\n';
  }
}

}  // namespace

void register_patch(CLI::App& app) {
  auto* patch = app.add_subcommand(
      "patch", "the exact rank-1 patch of in-context learning (contextual blocks, Eigen)");
  patch->require_subcommand(1);
  auto o = std::make_shared<Options>();

  auto* check = patch->add_subcommand("check", "T_W(C,x) = T_{W+dW}(x): patch block by block, negative controls");
  add_model_options(check, *o);
  check->add_option("--pos", o->pos, "position whose output is matched (-1: the query)")->capture_default_str();
  check->add_option("--prompts", o->prompts, "number of prompts")->check(at_least(1))->capture_default_str();
  check->add_option("--chunk", o->chunk, "also remove context chunk B:E (tokens B..E-1) instead of all of C (one block)");
  check->add_option("--tol", o->tol, "pass if max_rel_diff <= tol (else exit 3)")->check(positive_real())->capture_default_str();
  check->callback([o] { run_check(*o); });

  auto* dyn = patch->add_subcommand("dynamics", "implicit dynamics: prefix patches, online GD, step norms attention vs RNN");
  add_model_options(dyn, *o);
  dyn->add_option("--prompts", o->prompts, "number of prompts")->check(at_least(1))->capture_default_str();
  dyn->add_option("--rnn-weights", o->rnn_weights, "weights of the RNN model (FILE)");
  dyn->callback([o] { run_dynamics(*o); });

  auto* th = patch->add_subcommand("thought", "static thought patch by ridge least squares over calibration queries");
  add_model_options(th, *o);
  th->add_option("--prompts", o->prompts, "number of contexts")->check(at_least(1))->capture_default_str();
  th->add_option("--m", o->m_values, "calibration sizes")->check(at_least(1))->delimiter(',');
  th->add_option("--heldout", o->heldout, "held-out queries")->check(at_least(1))->capture_default_str();
  th->add_option("--ridge", o->ridge, "relative ridge")->check(positive_real())->capture_default_str();
  th->callback([o] { run_thought(*o); });

  auto* al = patch->add_subcommand("align", "cos_F between dW(C) and the W change after explicit SGD on the context");
  add_model_options(al, *o);
  al->add_option("--prompts", o->prompts, "number of prompts")->check(at_least(1))->capture_default_str();
  al->add_option("--sgd-lr", o->sgd_lr, "SGD learning rate")->check(positive_real())->capture_default_str();
  al->add_option("--sgd-steps", o->sgd_steps, "SGD step counts reported")->check(at_least(1))->delimiter(',');
  al->callback([o] { run_align(*o); });

  auto* tr = patch->add_subcommand("train", "train on in-context regression (Adam); loss with context vs patched query-only loss");
  add_model_options(tr, *o);
  auto no_track = std::make_shared<bool>(false);
  tr->add_flag("--no-patch-track", *no_track, "skip the patched-loss evaluation");
  tr->callback([o, no_track] { run_train(*o, *no_track); });
}

}  // namespace icl::cli
