#include "verify/patch/serialize.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <tuple>

#include "numerics/status.hpp"

namespace icl::verify::patch {
namespace {

void put_status(Json& j, numerics::Status s, const std::string& message) {
  j["status"] = numerics::to_string(s);
  j["message"] = message;
}

// The keys the thought and align results start with, and end with.
template <class Options>
Json head(const ModelResult<Options>& r) {
  Json j;
  put_status(j, r.status, r.message);
  j["config"] = to_json(r.model.config);
  j["context"] = r.options.context;
  j["prompts"] = r.options.prompts;
  return j;
}
template <class Options>
void tail(Json& j, const ModelResult<Options>& r) {
  if (r.training) j["training"] = to_json(*r.training);
  if (!r.options.model.weights.empty()) j["weights"] = r.options.model.weights;
}

Json diffs(const std::vector<Diff>& v) {
  Json a = Json::array();
  for (const auto& d : v) a.push_back(to_json(d));
  return a;
}

// Where a model came from: its weights file, or "random (seed N)" for the base seed N.
std::string weights_label(const std::string& file, std::uint64_t base_seed) {
  return file.empty() ? "random (seed " + std::to_string(base_seed) + ")" : file;
}

}  // namespace

Json to_json(const ModelConfig& c) {
  return {{"token_dim", c.token_dim},   {"embed", c.embed},
          {"width", c.width},           {"layers", c.layers},
          {"kind", to_string(c.kind)},  {"heads", c.heads},
          {"head_dim", c.head_dim},     {"causal", c.causal},
          {"mlp_hidden", c.mlp_hidden}, {"mlp_depth", c.mlp_depth},
          {"act", to_string(c.block.activation())},
          {"residual", c.block.residual()},
          {"layernorm", c.block.normalized()},
          {"parameters", parameter_count(c)},
          {"block", to_string(c.block.kind)},
          {"norm", to_string(c.block.norm)},
          {"mlp", to_string(c.block.mlp)},
          {"gated", c.block.gated()}};
}

Json to_json(const Diff& d) { return {{"max_abs_diff", d.max_abs}, {"max_rel_diff", d.max_rel}}; }

Json to_json(const TrainResult& r) {
  const TrainOptions& p = r.options;
  Json j;
  put_status(j, r.status, r.message);
  j["steps"] = p.steps;
  j["zero_predictor_loss"] = r.zero_loss;
  j["final_eval_loss"] = r.final_eval_loss;
  j["seconds"] = r.seconds;
  j["tokens_per_second"] = r.tokens_per_second;
  j["optimizer"] = "adam";
  j["lr"] = p.adam.lr;
  j["batch"] = p.batch;
  j["context"] = p.n_ctx;
  j["d"] = p.d;
  j["clip"] = p.clip;
  j["eval_every"] = p.eval_every;
  j["eval_prompts"] = p.eval_prompts;
  j["data_seed"] = p.base_seed;
  Json log = Json::array();
  for (const auto& row : r.log)
    log.push_back({{"step", row.step},
                   {"train_loss", row.train_loss},
                   {"eval_loss", row.eval_loss},
                   {"eval_loss_patched", row.eval_loss_patched},
                   {"patch_max_rel_diff", row.patch_max_rel}});
  j["log"] = log;
  return j;
}

Json to_json(const CheckResult& r) {
  const CheckOptions& o = r.options;
  Json j;
  put_status(j, r.status, r.message);
  j["config"] = to_json(r.model.config);
  j["weights"] = weights_label(o.model.weights, o.base_seed);
  if (r.training) j["training"] = to_json(*r.training);
  j["context"] = o.context;
  j["position"] = o.position();
  j["prompts"] = o.prompts;
  j["max_abs_diff"] = r.diff.max_abs;
  j["max_rel_diff"] = r.diff.max_rel;
  j["rank"] = r.rank;
  j["sigma2_over_sigma1"] = r.sigma2_over_sigma1;
  // Largest numerical rank of each patched matrix over blocks and prompts (docs/patch.md §12).
  Json ranks = {{"W1", r.rank}};
  if (r.rank_gate >= 0) ranks["Wg"] = r.rank_gate;
  if (r.rank_last >= 0) ranks["W_last_bias_free"] = r.rank_last;
  j["ranks"] = ranks;
  j["degenerate_anchors"] = r.degenerate_anchors;
  j["per_layer"] = diffs(r.per_layer);
  if (o.controls) {
    j["float32"] = to_json(r.float32);
    j["variants"] = {{"bias_only", to_json(r.bias_only)}, {"bias_free", to_json(r.bias_free)}};
    if (r.has_norm_scale) j["variants"]["norm_scale"] = to_json(r.norm_scale);
    if (r.has_chunk) {
      Json c = to_json(r.chunk);
      c["begin"] = o.chunk_begin;
      c["end"] = o.chunk_end;
      c["rank"] = r.chunk_rank;
      j["chunk"] = c;
    }
  }
  j["seconds_per_check"] = r.seconds_per_check;
  if (o.controls) {
    auto control = [](const NegativeControl& n) {
      Json c = to_json(n.diff);
      c["model"] = n.model;
      return c;
    };
    j["negative_controls"] = {{"weight_only_with_residual", control(r.weight_only)},
                              {"first_block_only", control(r.first_block_only)}};
    if (r.has_gate_only) j["negative_controls"]["gate_only"] = control(r.gate_only);
  }
  j["pass"] = r.passed();
  j["tolerance"] = o.tol;
  return j;
}

Json to_json(const DynamicsMeasure& m) {
  return {{"prefix_max_rel_diff", m.prefix_max_rel},
          {"gd_max_rel_diff", m.gd_max_rel},
          {"slope_mean_over_prompts", m.slope_mean_over_prompts},
          {"slope_of_mean_curve", m.slope_of_mean_curve},
          {"intercept_of_mean_curve", m.intercept_of_mean_curve},
          {"slopes", m.slopes},
          {"fit_from", m.fit_from}};
}

Json to_json(const DynamicsResult& r) {
  Json j;
  put_status(j, r.status, r.message);
  j["context"] = r.options.context;
  j["prompts"] = r.options.prompts;
  j["tolerance"] = r.options.tol;
  const std::tuple<const char*, const DynamicsModel*, const std::string*> models[] = {
      {"attention", &r.attention, &r.options.model.weights},
      {"rnn", &r.rnn, &r.options.rnn_weights}};
  for (const auto& [name, m, file] : models) {
    const char* label = file->empty() ? "random" : "loaded";
    Json mj;
    mj["config"] = to_json(m->config);
    mj[label] = to_json(m->initial);
    if (!file->empty()) mj[label]["weights"] = *file;
    if (m->training) mj["training"] = to_json(*m->training);
    if (m->trained) mj["trained"] = to_json(*m->trained);
    j[name] = mj;
  }
  return j;
}

Json to_json(const ThoughtResult& r) {
  Json j = head(r);
  j["heldout"] = r.options.heldout;
  j["ridge"] = r.options.ridge;
  Json rows = Json::array();
  for (const auto& s : r.summary) {
    Json row = {{"m", s.m},
                {"train_err", s.train_err.mean},
                {"heldout_err", s.heldout_err.mean},
                {"train_avg_rank1", s.train_avg.mean},
                {"heldout_avg_rank1", s.heldout_avg.mean},
                {"heldout_no_patch", s.heldout_none.mean}};
    if (r.model.config.block.residual()) {
      row["train_no_db2"] = s.train_no_db2.mean;
      row["heldout_no_db2"] = s.heldout_no_db2.mean;
      row["db2_norm"] = s.db2_norm.mean;
    }
    rows.push_back(row);
  }
  j["mean_over_prompts"] = rows;
  tail(j, r);
  return j;
}

namespace {
Json estimates(const std::vector<numerics::Estimate>& v, double numerics::Estimate::*f) {
  Json a = Json::array();
  for (const auto& e : v) a.push_back(e.*f);
  return a;
}
Json to_json(const numerics::Estimate& e) {
  return {{"mean", e.mean}, {"sem", e.sem}, {"count", e.count}};
}
}  // namespace

Json to_json(const AlignCurve& c) {
  Json j;
  j["protocol"] = to_string(c.protocol);
  j["x_name"] = c.x_name;
  j["x"] = c.x;
  j["summary"] = to_json(c.summary);
  j["summary_mismatched"] = to_json(c.summary_mismatched);
  j["summary_random"] = to_json(c.summary_random);
  if (c.protocol == AlignProtocol::PerToken || c.protocol == AlignProtocol::PerTokenContext) {
    j["left"] = to_json(c.left);
    j["right"] = to_json(c.right);
  }
  j["cos_mean"] = estimates(c.same, &numerics::Estimate::mean);
  j["cos_sem"] = estimates(c.same, &numerics::Estimate::sem);
  j["mismatched_mean"] = estimates(c.mismatched, &numerics::Estimate::mean);
  j["mismatched_sem"] = estimates(c.mismatched, &numerics::Estimate::sem);
  j["random_mean"] = estimates(c.random, &numerics::Estimate::mean);
  j["random_sem"] = estimates(c.random, &numerics::Estimate::sem);
  j["cos_per_prompt"] = c.cos;
  return j;
}

Json to_json(const AlignResult& r) {
  Json j = head(r);
  j["sgd_lr"] = r.options.lr;
  j["trained"] = r.trained;
  j["random_control"] = r.options.random_control;
  Json a = Json::array();
  for (const auto& c : r.curves) a.push_back(to_json(c));
  j["protocols"] = a;
  tail(j, r);
  return j;
}

Json to_json(const TrainRunResult& r) {
  Json j;
  put_status(j, r.training.status, r.training.message);
  j["config"] = to_json(r.weights.config);
  j["context"] = r.training.options.n_ctx;
  j["batch"] = r.training.options.batch;
  j["lr"] = r.training.options.adam.lr;
  j["seed"] = r.options.base_seed;
  j["training"] = to_json(r.training);
  return j;
}

numerics::Table to_table(const DynamicsResult& r) {
  numerics::Table t;
  t.columns = {"i", "step_attention", "step_rnn"};
  const bool trained = r.attention.trained && r.rnn.trained;
  if (trained) t.columns.insert(t.columns.end(), {"step_attention_trained", "step_rnn_trained"});
  for (int i = 1; i <= r.options.context; ++i) {
    const auto u = static_cast<std::size_t>(i) - 1;
    std::vector<double> row{double(i), r.attention.initial.steps[u].mean, r.rnn.initial.steps[u].mean};
    if (trained) {
      row.push_back(r.attention.trained->steps[u].mean);
      row.push_back(r.rnn.trained->steps[u].mean);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

numerics::Table to_table(const ThoughtResult& r) {
  numerics::Table t;
  const bool res = r.model.config.block.residual();
  t.columns = {"prompt", "m", "train_err", "heldout_err", "train_avg_rank1", "heldout_avg_rank1",
               "heldout_no_patch"};
  if (res) t.columns.insert(t.columns.end(), {"train_no_db2", "heldout_no_db2", "db2_norm"});
  for (std::size_t k = 0; k < r.per_prompt.size(); ++k)
    for (const auto& x : r.per_prompt[k]) {
      t.rows.push_back({double(k), double(x.m), x.train_err, x.heldout_err, x.train_avg,
                        x.heldout_avg, x.heldout_none});
      if (res) t.rows.back().insert(t.rows.back().end(), {x.train_no_db2, x.heldout_no_db2, x.db2_norm});
    }
  return t;
}

numerics::Table to_table(const AlignResult& r) {
  numerics::Table t;
  t.columns = {"protocol", "x", "cos_mean", "cos_sem", "mismatched_mean", "mismatched_sem",
               "random_mean", "random_sem"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const AlignCurve& c : r.curves)
    for (std::size_t j = 0; j < c.x.size(); ++j) {
      const auto rnd = j < c.random.size() ? c.random[j] : numerics::Estimate{};
      t.rows.push_back({double(static_cast<int>(c.protocol)), double(c.x[j]), c.same[j].mean,
                        c.same[j].sem, c.mismatched[j].mean, c.mismatched[j].sem,
                        r.options.random_control ? rnd.mean : nan,
                        r.options.random_control ? rnd.sem : nan});
    }
  return t;
}

numerics::Table to_table(const TrainResult& r) {
  numerics::Table t;
  t.columns = {"step", "train_loss", "eval_loss", "eval_loss_patched", "patch_max_rel_diff"};
  for (const auto& row : r.log)
    t.rows.push_back({double(row.step), row.train_loss, row.eval_loss, row.eval_loss_patched,
                      row.patch_max_rel});
  return t;
}

// ---- text reports ------------------------------------------------------------------------------

namespace {
using numerics::format_number;
std::string estimate_text(const numerics::Estimate& e) {
  return format_number(e.mean) + " +- " + format_number(e.sem);
}
}  // namespace

std::string to_text(const CheckResult& r) {
  const CheckOptions& o = r.options;
  const ModelConfig& c = r.model.config;
  std::ostringstream os;
  os << "patch check: L=" << c.layers << " " << to_string(c.kind) << " " << label(c.block)
     << ", width " << c.width << ", context " << o.context << ", position " << o.position() << "\n"
     << "  float64 max_rel_diff " << format_number(r.diff.max_rel) << " (max_abs "
     << format_number(r.diff.max_abs) << "), rank W1 " << r.rank
     << (r.rank_gate >= 0 ? ", rank Wg " + std::to_string(r.rank_gate) : "") << "\n"
     << "  float32 max_rel_diff " << format_number(r.float32.max_rel) << "\n"
     << "  variants: bias-only " << format_number(r.bias_only.max_rel) << ", bias-free "
     << format_number(r.bias_free.max_rel)
     << (r.has_norm_scale ? ", norm-scale " + format_number(r.norm_scale.max_rel) : std::string())
     << (r.has_chunk ? ", chunk " + std::to_string(o.chunk_begin) + ":" + std::to_string(o.chunk_end) +
                           " " + format_number(r.chunk.max_rel)
                     : std::string())
     << "\n"
     << "  negative controls: weight-only " << format_number(r.weight_only.diff.max_rel) << " ("
     << r.weight_only.model << " model), first-block-only "
     << format_number(r.first_block_only.diff.max_rel) << " (" << r.first_block_only.model
     << " model)"
     << (r.has_gate_only ? ", gate-only " + format_number(r.gate_only.diff.max_rel) : std::string())
     << "\n"
     << "  " << (r.passed() ? "PASS" : "FAIL") << "\n";
  return os.str();
}

std::string to_text(const DynamicsResult& r) {
  const auto& a = r.attention.initial;
  const auto& n = r.rnn.initial;
  const auto label = [](const std::string& file) { return file.empty() ? "random" : "loaded"; };
  std::ostringstream os;
  os << "implicit dynamics, context " << r.options.context << ", " << r.options.prompts << " prompts\n"
     << "  prefix identity max rel " << format_number(std::max(a.prefix_max_rel, n.prefix_max_rel))
     << ", online-GD max rel " << format_number(std::max(a.gd_max_rel, n.gd_max_rel)) << "\n"
     << "  log-log slope of ||dW_{i+1}-dW_i||: attention " << format_number(a.slope_of_mean_curve)
     << " (" << label(r.options.model.weights) << "), rnn " << format_number(n.slope_of_mean_curve)
     << " (" << label(r.options.rnn_weights) << ")\n";
  if (r.attention.trained && r.rnn.trained)
    os << "  trained: attention " << format_number(r.attention.trained->slope_of_mean_curve)
       << ", rnn " << format_number(r.rnn.trained->slope_of_mean_curve) << "\n";
  os << "  " << numerics::to_string(r.status) << ": " << r.message << "\n";
  return os.str();
}

std::string to_text(const ThoughtResult& r) {
  const bool res = r.model.config.block.residual();
  std::ostringstream os;
  os << "thought patch (MSE vs full-context output, mean over " << r.options.prompts << " prompts)\n"
     << (res ? "residual block: dW* + static db2 = mean(H_C - H_0); no_db2 = dW* alone\n" : "")
     << "m\ttrain\theldout\ttrain_avg\theldout_avg\tno_patch"
     << (res ? "\ttrain_no_db2\theldout_no_db2\n" : "\n");
  for (const auto& s : r.summary) {
    os << s.m << '\t' << format_number(s.train_err.mean) << '\t' << format_number(s.heldout_err.mean)
       << '\t' << format_number(s.train_avg.mean) << '\t' << format_number(s.heldout_avg.mean)
       << '\t' << format_number(s.heldout_none.mean);
    if (res)
      os << '\t' << format_number(s.train_no_db2.mean) << '\t' << format_number(s.heldout_no_db2.mean);
    os << '\n';
  }
  return os.str();
}

std::string to_text(const AlignResult& r) {
  std::ostringstream os;
  os << "alignment cos_F(implicit dW, explicit update on W1), " << r.options.prompts << " prompts"
     << (r.trained ? "" : " (RANDOM weights: expect about 0)") << "; mean +- s.e.\n";
  for (const AlignCurve& c : r.curves) {
    os << to_string(c.protocol) << ": " << estimate_text(c.summary) << " (mismatched "
       << estimate_text(c.summary_mismatched) << ", random weights "
       << estimate_text(c.summary_random) << ")";
    if (c.left.count > 0)
      os << "; factors left " << estimate_text(c.left) << ", right " << estimate_text(c.right);
    os << "\n";
    if (c.protocol != AlignProtocol::FullBatch) continue;
    os << "  sgd_steps\tcos_mean\tcos_sem\tmismatched\trandom\n";
    for (std::size_t s = 0; s < c.x.size(); ++s)
      os << "  " << c.x[s] << '\t' << format_number(c.same[s].mean) << '\t'
         << format_number(c.same[s].sem) << '\t' << format_number(c.mismatched[s].mean) << '\t'
         << format_number(s < c.random.size() ? c.random[s].mean : 0.0) << '\n';
  }
  return os.str();
}

std::string to_text(const TrainRunResult& r) {
  const TrainResult& t = r.training;
  std::ostringstream os;
  os << "trained " << t.options.steps << " steps in " << format_number(t.seconds) << " s ("
     << format_number(t.tokens_per_second) << " tokens/s)\n"
     << "zero-predictor loss " << format_number(t.zero_loss) << ", final eval loss "
     << format_number(t.final_eval_loss) << "\n"
     << "step\ttrain\teval(context)\teval(patched query-only)\n";
  for (const auto& row : t.log)
    os << row.step << '\t' << format_number(row.train_loss) << '\t' << format_number(row.eval_loss)
       << '\t' << format_number(row.eval_loss_patched) << '\n';
  return os.str();
}

}  // namespace icl::verify::patch
