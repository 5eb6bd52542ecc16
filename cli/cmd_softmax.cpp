// icl softmax: the softmax-attention check of the low-rank theory (spec lowrank.md section 10).
// One point (text or --json), or a sweep over rho (--sweep-rho START:STOP:COUNT) as TSV with a
// JSON sidecar; next to the linear-attention theory and the linear simulator at the same point.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/serialize.hpp"
#include "numerics/error.hpp"
#include "theory/lowrank.hpp"
#include "verify/lowrank/simulator.hpp"
#include "verify/softmax/softmax.hpp"

namespace icl::cli {
namespace {

using nlohmann::ordered_json;
namespace vf = icl::verify::lowrank;
namespace sm = icl::verify::softmax;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const char* kProtocols[3] = {"tm", "idg", "odg"};

struct SoftmaxFlags {
  ParamFlags flags;
  int dim = 0, seeds = 0, threads = 2, attn_dim = 4, epochs = 3000, prompts = 3000;
  double tol = 1e-5, lr = 1e-3;
  std::uint64_t seed = 20251;
  std::string init = "glorot", odg = "isotropic", assignment = "random";
  std::string sweep_rho, out;
  bool json = false, no_linear = false, quiet = false;
};

// START:STOP:COUNT, inclusive, equally spaced (the values are snapped to 12 significant digits so
// that 0.1:1.0:10 gives 0.3 rather than 0.30000000000000004).
std::vector<double> parse_grid(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return ExitError(kExitBadInput, "--sweep-rho '" + text + "': " + why);
  };
  const auto c1 = text.find(':');
  const auto c2 = c1 == std::string::npos ? std::string::npos : text.find(':', c1 + 1);
  if (c2 == std::string::npos) throw bad("expected START:STOP:COUNT");
  double a = 0, b = 0;
  long n = 0;
  try {
    std::size_t p1 = 0, p2 = 0, p3 = 0;
    a = std::stod(text.substr(0, c1), &p1);
    b = std::stod(text.substr(c1 + 1, c2 - c1 - 1), &p2);
    n = std::stol(text.substr(c2 + 1), &p3);
    if (p1 != c1 || p2 != c2 - c1 - 1 || p3 != text.size() - c2 - 1) throw bad("not numbers");
  } catch (const ExitError&) {
    throw;
  } catch (...) {
    throw bad("not numbers");
  }
  if (n < 1 || n > 10000) throw bad("COUNT must be in [1, 10000]");
  if (!(a > 0 && a <= 1 && b > 0 && b <= 1)) throw bad("rho values must be in (0, 1]");
  std::vector<double> v;
  for (long i = 0; i < n; ++i) {
    const double x = n == 1 ? a : a + (b - a) * double(i) / double(n - 1);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.12g", x);
    v.push_back(std::stod(buf));
  }
  return v;
}

sm::SoftmaxOptions options_from(const SoftmaxFlags& f) {
  sm::SoftmaxOptions o;
  o.dim = f.dim;
  o.seeds = f.seeds;
  o.base_seed = f.seed;
  o.threads = f.threads;
  o.attn_dim = f.attn_dim;
  o.init = sm::init_from_string(f.init);
  o.train.lr = f.lr;
  o.train.max_epochs = f.epochs;
  o.train.tol = f.tol;
  o.test_prompts = f.prompts;
  o.odg = vf::odg_kind_from_string(f.odg);
  o.assignment = f.assignment == "balanced" ? vf::Assignment::Balanced : vf::Assignment::Random;
  return o;
}

// The linear-attention theory at p, when it applies (lambda > 0 or tau > 1).
std::optional<theory::Solution> linear_theory(const theory::Params& p) {
  try {
    p.validate_for_saddle_point();
    theory::Solution s = theory::solve(p);
    if (!s.converged())
      std::fprintf(stderr, "icl softmax: warning: linear theory did not converge at rho %g "
                           "(residual %.3g)\n", p.rho, s.residual_norm);
    return s;
  } catch (const InvalidParams& e) {
    std::fprintf(stderr, "icl softmax: note: no linear theory at rho %g (%s)\n", p.rho, e.what());
  }
  return std::nullopt;
}

// The linear simulator with the same dimension, seeds and base seed.
std::optional<vf::Estimate> linear_simulation(const theory::Params& p,
                                              const sm::SoftmaxOptions& o) {
  try {
    return vf::LowRankSimulator(p, sm::linear_simulation_options(o)).run();
  } catch (const InvalidParams& e) {
    std::fprintf(stderr, "icl softmax: note: no linear simulation at rho %g (%s)\n", p.rho,
                 e.what());
  }
  return std::nullopt;
}

ordered_json stat_json(const vf::Stat& s) { return ordered_json{{"mean", s.mean}, {"sem", s.sem}}; }

std::pair<double, double> min_max(const vf::Estimate& e, const std::string& name) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& vals : e.per_seed)
    for (const auto& [n, x] : vals)
      if (n == name) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
  return {lo, hi};
}

const char* kCriterion =
    "full-batch Adam; stop after the first epoch whose training MSE differs from the previous "
    "epoch's by less than tol, else after max_epochs (the authors' rule)";

ordered_json model_json(const sm::SoftmaxOptions& o) {
  return ordered_json{
      {"attn_dim", o.attn_dim},
      {"init", sm::to_string(o.init)},
      {"precision", "double (the authors trained in float32)"},
      {"description", "one softmax self-attention layer, W_Q, W_K: (D+1)->attn_dim, W_V: "
                      "(D+1)->(D+1), no biases; the last token queries; prediction = label "
                      "coordinate of V a"}};
}

ordered_json training_json(const vf::Estimate& e, const sm::SoftmaxOptions& o) {
  const auto [lo, hi] = min_max(e, "train.epochs");
  const vf::Stat conv = e.get("train.converged");
  return ordered_json{
      {"optimizer", "adam"},
      {"lr", o.train.lr},
      {"betas", {o.train.beta1, o.train.beta2}},
      {"eps", o.train.eps},
      {"max_epochs", o.train.max_epochs},
      {"tol", o.train.tol},
      {"criterion", kCriterion},
      {"epochs", {{"mean", e.get("train.epochs").mean}, {"sem", e.get("train.epochs").sem},
                  {"min", lo}, {"max", hi}}},
      {"initial_loss", stat_json(e.get("train.initial_loss"))},
      {"final_loss", stat_json(e.get("train.final_loss"))},
      {"converged", int(std::lround(conv.mean * conv.count))}};
}

ordered_json theory_json(const std::optional<theory::Solution>& s) {
  if (!s) return nullptr;
  return ordered_json{
      {"converged", s->converged()},
      {"residual_norm", s->residual_norm},
      {"regime", theory::to_string(s->regime)},
      {"error", {{"tm", s->error.tm}, {"idg", s->error.idg}, {"odg", s->error.odg}}}};
}

ordered_json linsim_json(const std::optional<vf::Estimate>& e) {
  if (!e) return nullptr;
  ordered_json j;
  for (const char* k : kProtocols) j["error"][k] = stat_json(e->get(std::string("error.") + k));
  return j;
}

ordered_json meta_json(const theory::Params& p, const sm::SoftmaxOptions& o) {
  const vf::Sizes n = vf::sizes(p, o.dim);
  ordered_json j;
  j["params"] = ordered_json::parse(theory::to_json(p).dump());
  j["dim"] = o.dim;
  j["seeds"] = o.seeds;
  j["base_seed"] = o.base_seed;
  j["sizes"] = {{"D", n.D}, {"r", n.r}, {"M0", n.M0}, {"N", n.N}, {"L", n.L}, {"L_test", n.Lt}};
  j["test_prompts"] = o.test_prompts;
  j["odg_kind"] = vf::to_string(o.odg);
  j["assignment"] = o.assignment == vf::Assignment::Balanced ? "balanced" : "random";
  j["model"] = model_json(o);
  return j;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_point(const SoftmaxFlags& f, const theory::Params& p, const sm::SoftmaxOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<vf::Estimate> est;
  auto show = [&](std::size_t done, std::size_t total) {
    if (!f.quiet) progress("softmax", done, total);
  };
  est = sm::run_points({p}, o, show);
  const double t_soft = seconds_since(t0);
  std::optional<theory::Solution> th;
  std::optional<vf::Estimate> lin;
  if (!f.no_linear) {
    th = linear_theory(p);
    lin = linear_simulation(p, o);
  }
  const vf::Estimate& e = est.front();
  ordered_json j = meta_json(p, o);
  for (const char* k : kProtocols) j["error"][k] = stat_json(e.get(std::string("error.") + k));
  for (const char* k : kProtocols)
    j["zero_predictor"][k] = stat_json(e.get(std::string("zero.") + k));
  j["training"] = training_json(e, o);
  j["linear_theory"] = theory_json(th);
  j["linear_simulation"] = linsim_json(lin);
  j["timing"] = {{"softmax_seconds", t_soft},
                 {"seed_seconds", stat_json(e.get("timing.seed_seconds"))}};
  if (f.json || !f.out.empty()) {
    emit_json(j, f.out);
    return;
  }
  std::printf("softmax attention, D = %d, %d seeds, attn dim %d, %s init\n", o.dim, o.seeds,
              o.attn_dim, sm::to_string(o.init));
  std::printf("%-6s %-22s %-12s %-22s\n", "", "softmax (mean +- sem)", "lin. theory",
              "lin. sim (mean +- sem)");
  for (const char* k : kProtocols) {
    const vf::Stat s = e.get(std::string("error.") + k);
    double t = kNaN;
    if (th) t = k[0] == 't' ? th->error.tm : (k[0] == 'i' ? th->error.idg : th->error.odg);
    vf::Stat l{kNaN, kNaN, 0};
    if (lin) l = lin->get(std::string("error.") + k);
    std::printf("%-6s %9.4f +- %-9.4f %-12.4f %9.4f +- %-9.4f\n", k, s.mean, s.sem, t, l.mean,
                l.sem);
  }
  const auto [lo, hi] = min_max(e, "train.epochs");
  const vf::Stat conv = e.get("train.converged");
  std::printf("training: epochs %.0f..%.0f (max %d), stopped by |dloss| < %g in %ld of %d seeds, "
              "final loss %.4f; %.1f s\n",
              lo, hi, o.train.max_epochs, o.train.tol, std::lround(conv.mean * conv.count),
              o.seeds, e.get("train.final_loss").mean, t_soft);
}

void run_sweep(const SoftmaxFlags& f, const theory::Params& p, const sm::SoftmaxOptions& o) {
  const std::vector<double> rhos = parse_grid(f.sweep_rho);
  std::vector<theory::Params> pts;
  for (double r : rhos) {
    theory::Params q = p;
    q.rho = r;
    q.validate();
    pts.push_back(q);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto show = [&](std::size_t done, std::size_t total) {
    if (!f.quiet) progress("softmax sweep rho", done, total);
  };
  const std::vector<vf::Estimate> est = sm::run_points(pts, o, show);
  const double t_soft = seconds_since(t0);
  Table t;
  t.columns = {"rho"};
  for (const char* k : kProtocols) {
    t.columns.push_back(std::string("softmax_") + k + "_mean");
    t.columns.push_back(std::string("softmax_") + k + "_sem");
  }
  for (const char* k : kProtocols) t.columns.push_back(std::string("theory_") + k);
  for (const char* k : kProtocols) {
    t.columns.push_back(std::string("linsim_") + k + "_mean");
    t.columns.push_back(std::string("linsim_") + k + "_sem");
  }
  for (const char* c : {"epochs_mean", "epochs_max", "converged", "train_loss_mean",
                        "zero_idg_mean", "theory_converged"})
    t.columns.push_back(c);
  const auto t1 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < pts.size(); ++i) {
    std::optional<theory::Solution> th;
    std::optional<vf::Estimate> lin;
    if (!f.no_linear) {
      th = linear_theory(pts[i]);
      lin = linear_simulation(pts[i], o);
    }
    const vf::Estimate& e = est[i];
    std::vector<double> row{pts[i].rho};
    for (const char* k : kProtocols) {
      const vf::Stat s = e.get(std::string("error.") + k);
      row.push_back(s.mean);
      row.push_back(s.sem);
    }
    row.push_back(th ? th->error.tm : kNaN);
    row.push_back(th ? th->error.idg : kNaN);
    row.push_back(th ? th->error.odg : kNaN);
    for (const char* k : kProtocols) {
      const vf::Stat s = lin ? lin->get(std::string("error.") + k) : vf::Stat{kNaN, kNaN, 0};
      row.push_back(s.mean);
      row.push_back(s.sem);
    }
    const vf::Stat conv = e.get("train.converged");
    row.push_back(e.get("train.epochs").mean);
    row.push_back(min_max(e, "train.epochs").second);
    row.push_back(double(std::lround(conv.mean * conv.count)));
    row.push_back(e.get("train.final_loss").mean);
    row.push_back(e.get("zero.idg").mean);
    row.push_back(th ? (th->converged() ? 1.0 : 0.0) : kNaN);
    t.rows.push_back(row);
  }
  const double t_lin = seconds_since(t1);
  nlohmann::json meta = nlohmann::json::parse(meta_json(p, o).dump());
  meta["params"].erase("rho");
  meta["sweep"] = {{"name", "rho"}, {"values", rhos}};
  meta["training"] = {{"optimizer", "adam"}, {"lr", o.train.lr},
                      {"betas", {o.train.beta1, o.train.beta2}}, {"eps", o.train.eps},
                      {"max_epochs", o.train.max_epochs}, {"tol", o.train.tol},
                      {"criterion", kCriterion}};
  meta["columns"] = {
      {"softmax_*", "test MSE of the softmax model on fresh prompts, mean and s.e. over seeds"},
      {"theory_*", "linear-attention replica theory (D -> infinity), icl::theory::solve"},
      {"linsim_*", "linear-attention simulator at the same D, seeds and base seed"},
      {"epochs_mean/epochs_max", "Adam epochs used"},
      {"converged", "seeds stopped by the |loss change| < tol criterion"},
      {"train_loss_mean", "final training MSE"},
      {"zero_idg_mean", "MSE of the zero predictor on the IDG prompts"},
      {"theory_converged", "1 if the saddle point converged"}};
  meta["timing"] = {{"softmax_seconds", t_soft}, {"linear_seconds", t_lin}, {"threads", o.threads}};
  emit_tsv(t, f.out, meta);
}

}  // namespace

void register_softmax(CLI::App& app) {
  auto f = std::make_shared<SoftmaxFlags>();
  auto* cmd = app.add_subcommand(
      "softmax", "Softmax-attention check (spec section 10): one softmax attention layer trained "
                 "by Adam on the low-rank data; TM/IDG/ODG next to the linear theory and simulator");
  f->flags.add_to(*cmd);
  cmd->add_option("--dim", f->dim, "token dimension D")->required()->check(CLI::Range(2, 400));
  cmd->add_option("--seeds", f->seeds, "independent runs")->required()->check(CLI::Range(1, 100000));
  cmd->add_option("--attn-dim", f->attn_dim, "attention (query/key) dimension")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--init", f->init, "initialization: glorot (Flux Dense default, the authors') | "
                                     "torch (nn.Linear default)")
      ->check(CLI::IsMember({"glorot", "torch"}))->capture_default_str();
  cmd->add_option("--epochs", f->epochs, "maximum Adam epochs (full batch)")
      ->check(CLI::Range(1, 10000000))->capture_default_str();
  cmd->add_option("--tol", f->tol, "stop when |loss change| between epochs < tol (0: never)")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--lr", f->lr, "Adam learning rate")
      ->check(CLI::Range(1e-12, 10.0))->capture_default_str();
  cmd->add_option("--prompts", f->prompts, "fresh test prompts per protocol")
      ->check(CLI::Range(1, 10000000))->capture_default_str();
  cmd->add_option("--odg", f->odg, "ODG test tasks: isotropic N(0, I) | subspace")
      ->check(CLI::IsMember({"isotropic", "subspace"}))->capture_default_str();
  cmd->add_option("--assignment", f->assignment, "task of each sequence: random | balanced")
      ->check(CLI::IsMember({"random", "balanced"}))->capture_default_str();
  cmd->add_option("--seed", f->seed, "base seed (seed k is derived from it and k)")->capture_default_str();
  cmd->add_option("--threads", f->threads, "worker threads over seeds (results do not depend on it)")
      ->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--sweep-rho", f->sweep_rho, "START:STOP:COUNT: sweep rho, write TSV (+ JSON sidecar)");
  cmd->add_flag("--no-linear", f->no_linear, "skip the linear theory and linear simulator");
  cmd->add_flag("--json", f->json, "one point: print one JSON object");
  cmd->add_option("--out", f->out, "output file (sweep: TSV + F.json sidecar; point: JSON)");
  cmd->add_flag("--quiet", f->quiet, "no progress on stderr");
  cmd->callback([f] {
    const theory::Params p = f->flags.resolve();
    sm::SoftmaxOptions o;
    try {
      o = options_from(*f);
      sm::validate(p, o);
    } catch (const InvalidParams& e) {
      throw ExitError(kExitBadInput, std::string("invalid parameter ") + e.what());
    }
    if (!f->sweep_rho.empty()) {
      if (f->json) throw ExitError(kExitBadInput, "--json is for one point; a sweep writes TSV");
      run_sweep(*f, p, o);
    } else {
      run_point(*f, p, o);
    }
  });
}

}  // namespace icl::cli
