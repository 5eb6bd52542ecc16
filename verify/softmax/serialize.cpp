#include "verify/softmax/serialize.hpp"

#include <cstdio>
#include <limits>

#include "theory/serialize.hpp"

namespace icl::verify::softmax {

namespace {

using nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* kCriterion =
    "full-batch Adam; stop after the first epoch whose training MSE differs from the previous "
    "epoch's by less than tol, else after max_epochs (the authors' rule)";

// printf into a string (the text layout of `icl softmax`).
template <class... Args>
void appendf(std::string& out, const char* format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  if (n <= 0) return;
  std::string s(std::size_t(n) + 1, '\0');
  std::snprintf(s.data(), s.size(), format, args...);
  s.resize(std::size_t(n));
  out += s;
}

ordered_json estimate_json(const numerics::Estimate& e) {
  return ordered_json{{"mean", e.mean}, {"sem", e.sem}};
}

ordered_json protocols_json(const ByProtocol<numerics::Estimate>& e) {
  ordered_json j;
  for (std::size_t k = 0; k < kProtocols.size(); ++k) j[kProtocols[k]] = estimate_json(e[k]);
  return j;
}

ordered_json model_json(const SoftmaxOptions& o) {
  return ordered_json{
      {"attn_dim", o.attn_dim},
      {"init", to_string(o.init)},
      {"precision", "double (the authors trained in float32)"},
      {"description", "one softmax self-attention layer, W_Q, W_K: (D+1)->attn_dim, W_V: "
                      "(D+1)->(D+1), no biases; the last token queries; prediction = label "
                      "coordinate of V a"}};
}

ordered_json training_options_json(const SoftmaxOptions& o) {
  return ordered_json{{"optimizer", "adam"},
                      {"lr", o.train.lr},
                      {"betas", {o.train.beta1, o.train.beta2}},
                      {"eps", o.train.eps},
                      {"max_epochs", o.train.max_epochs},
                      {"tol", o.train.tol},
                      {"criterion", kCriterion}};
}

ordered_json training_json(const PointResult& p, const SoftmaxOptions& o) {
  const TrainingSummary& t = p.training;
  ordered_json j = training_options_json(o);
  j["epochs"] = {{"mean", t.epochs.mean}, {"sem", t.epochs.sem},
                 {"min", double(t.epochs_min)}, {"max", double(t.epochs_max)}};
  j["initial_loss"] = estimate_json(t.initial_loss);
  j["final_loss"] = estimate_json(t.final_loss);
  j["converged"] = t.converged;
  j["not_converged"] = t.not_converged;
  j["status"] = numerics::to_string(p.status);
  j["message"] = p.message;
  j["residual_norm"] = p.residual_norm;
  return j;
}

ordered_json theory_json(const std::optional<theory::Solution>& s) {
  if (!s) return nullptr;
  return ordered_json{
      {"converged", s->converged()},
      {"residual_norm", s->residual_norm},
      {"regime", theory::to_string(s->regime)},
      {"error", {{"tm", s->error.tm}, {"idg", s->error.idg}, {"odg", s->error.odg}}}};
}

ordered_json linsim_json(const std::optional<ByProtocol<numerics::Estimate>>& e) {
  if (!e) return nullptr;
  return ordered_json{{"error", protocols_json(*e)}};
}

ordered_json meta_json(const theory::Params& p, const SoftmaxOptions& o) {
  const verify::lowrank::Sizes n = verify::lowrank::sizes(p, o.dim);
  ordered_json j;
  j["params"] = theory::to_json(p);
  j["dim"] = o.dim;
  j["seeds"] = o.seeds;
  j["base_seed"] = o.base_seed;
  j["sizes"] = {{"D", n.D}, {"r", n.r}, {"M0", n.M0}, {"N", n.N}, {"L", n.L}, {"L_test", n.Lt}};
  j["test_prompts"] = o.test_prompts;
  j["odg_kind"] = verify::lowrank::to_string(o.odg);
  j["assignment"] = o.assignment == verify::lowrank::Assignment::Balanced ? "balanced" : "random";
  j["model"] = model_json(o);
  return j;
}

}  // namespace

ordered_json to_json(const SoftmaxResult& r) {
  const PointResult& p = r.point;
  ordered_json j = meta_json(p.params, r.options);
  j["error"] = protocols_json(p.error);
  j["zero_predictor"] = protocols_json(p.zero);
  j["training"] = training_json(p, r.options);
  j["linear_theory"] = theory_json(p.linear.theory);
  j["linear_simulation"] = linsim_json(p.linear.simulation);
  j["timing"] = {{"softmax_seconds", r.softmax_seconds},
                 {"seed_seconds", estimate_json(p.seed_seconds)}};
  return j;
}

std::string to_text(const SoftmaxResult& r) {
  const SoftmaxOptions& o = r.options;
  const PointResult& p = r.point;
  std::string out;
  appendf(out, "softmax attention, D = %d, %d seeds, attn dim %d, %s init\n", o.dim, o.seeds,
          o.attn_dim, to_string(o.init));
  appendf(out, "%-6s %-22s %-12s %-22s\n", "", "softmax (mean +- sem)", "lin. theory",
          "lin. sim (mean +- sem)");
  const auto& th = p.linear.theory;
  const auto& lin = p.linear.simulation;
  for (std::size_t k = 0; k < kProtocols.size(); ++k) {
    const double t = th ? (k == 0 ? th->error.tm : (k == 1 ? th->error.idg : th->error.odg)) : kNaN;
    const numerics::Estimate l = lin ? (*lin)[k] : numerics::Estimate{};
    appendf(out, "%-6s %9.4f +- %-9.4f %-12.4f %9.4f +- %-9.4f\n", kProtocols[k],
            p.error[k].mean, p.error[k].sem, t, l.mean, l.sem);
  }
  appendf(out,
          "training: epochs %d..%d (max %d), stopped by |dloss| < %g in %d of %d seeds, final "
          "loss %.4f; %.1f s\n",
          p.training.epochs_min, p.training.epochs_max, o.train.max_epochs, o.train.tol,
          p.training.converged, o.seeds, p.training.final_loss.mean, r.softmax_seconds);
  return out;
}

std::vector<std::string> sweep_columns() {
  std::vector<std::string> c{"rho"};
  for (const char* k : kProtocols) {
    c.push_back(std::string("softmax_") + k + "_mean");
    c.push_back(std::string("softmax_") + k + "_sem");
  }
  for (const char* k : kProtocols) c.push_back(std::string("theory_") + k);
  for (const char* k : kProtocols) {
    c.push_back(std::string("linsim_") + k + "_mean");
    c.push_back(std::string("linsim_") + k + "_sem");
  }
  for (const char* name : {"epochs_mean", "epochs_max", "converged", "train_loss_mean",
                           "zero_idg_mean", "theory_converged", "not_converged"})
    c.push_back(name);
  return c;
}

std::vector<double> sweep_row(const PointResult& p) {
  const auto& th = p.linear.theory;
  const auto& lin = p.linear.simulation;
  std::vector<double> row{p.params.rho};
  for (std::size_t k = 0; k < kProtocols.size(); ++k) {
    row.push_back(p.error[k].mean);
    row.push_back(p.error[k].sem);
  }
  row.push_back(th ? th->error.tm : kNaN);
  row.push_back(th ? th->error.idg : kNaN);
  row.push_back(th ? th->error.odg : kNaN);
  for (std::size_t k = 0; k < kProtocols.size(); ++k) {
    row.push_back(lin ? (*lin)[k].mean : kNaN);
    row.push_back(lin ? (*lin)[k].sem : kNaN);
  }
  row.push_back(p.training.epochs.mean);
  row.push_back(double(p.training.epochs_max));
  row.push_back(double(p.training.converged));
  row.push_back(p.training.final_loss.mean);
  row.push_back(p.zero.idg.mean);
  row.push_back(th ? (th->converged() ? 1.0 : 0.0) : kNaN);
  row.push_back(double(p.training.not_converged));
  return row;
}

ordered_json sweep_meta(const SweepResult& r) {
  ordered_json meta = meta_json(r.base, r.options);
  meta["params"].erase("rho");
  meta["sweep"] = {{"name", "rho"}, {"values", r.rhos}};
  meta["training"] = training_options_json(r.options);
  meta["columns"] = {
      {"softmax_*", "test MSE of the softmax model on fresh prompts, mean and s.e. over seeds"},
      {"theory_*", "linear-attention replica theory (D -> infinity), icl::theory::solve"},
      {"linsim_*", "linear-attention simulator at the same D, seeds and base seed"},
      {"epochs_mean/epochs_max", "Adam epochs used"},
      {"converged", "seeds stopped by the |loss change| < tol criterion"},
      {"not_converged", "seeds stopped by the epoch cap (their test errors are reported)"},
      {"train_loss_mean", "final training MSE"},
      {"zero_idg_mean", "MSE of the zero predictor on the IDG prompts"},
      {"theory_converged", "1 if the saddle point converged"}};
  meta["timing"] = {{"softmax_seconds", r.softmax_seconds},
                    {"linear_seconds", r.linear_seconds},
                    {"threads", r.options.threads}};
  return meta;
}

numerics::Table to_table(const SweepResult& r) {
  numerics::Table t;
  t.columns = sweep_columns();
  for (const PointResult& point : r.points) t.rows.push_back(sweep_row(point));
  return t;
}

}  // namespace icl::verify::softmax
