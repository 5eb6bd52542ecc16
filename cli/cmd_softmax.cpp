// icl softmax: the softmax-attention check of the low-rank theory (docs/softmax.md). One point
// (text or --json), or a sweep over rho (--sweep-rho START:STOP:COUNT) as TSV with a JSON
// sidecar; next to the linear-attention theory and the linear simulator at the same point. The
// procedure is verify::softmax::run / run_rho_sweep, the layouts verify/softmax/serialize.hpp.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "verify/softmax/experiment.hpp"
#include "verify/softmax/serialize.hpp"

namespace icl::cli {
namespace {

namespace vf = icl::verify::lowrank;
namespace sm = icl::verify::softmax;

struct SoftmaxFlags {
  ParamFlags flags;
  int dim = 0, seeds = 0, threads = 2, attn_dim = 4, epochs = 3000, prompts = 3000;
  double tol = 1e-5, lr = 1e-3;
  std::uint64_t seed = 20251;
  std::string init = "glorot", odg = "isotropic", assignment = "random";
  std::string sweep_rho, out;
  bool json = false, no_linear = false, quiet = false;
};

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
  o.compare_linear = !f.no_linear;
  return o;
}

// Progress on stderr: the softmax seeds under `label`, then the linear comparisons.
numerics::Progress show_progress(const SoftmaxFlags& f, const std::string& label) {
  if (f.quiet) return {};
  return [label](std::size_t done, std::size_t total, const std::string& what) {
    progress(what == "linear" ? "linear comparison" : label, done, total);
  };
}

// Why a linear comparison is missing or not converged, on stderr.
void print_notes(const sm::PointResult& p) {
  for (const std::string* note : {&p.linear.theory_note, &p.linear.simulation_note})
    if (!note->empty()) std::fprintf(stderr, "icl softmax: note: rho %g: %s\n", p.params.rho,
                                     note->c_str());
}

void run_point(const SoftmaxFlags& f, const theory::Params& p, const sm::SoftmaxOptions& o) {
  const sm::SoftmaxResult r = sm::run(p, o, show_progress(f, "softmax"));
  print_notes(r.point);
  if (f.json || !f.out.empty()) {
    emit_json(sm::to_json(r), f.out);
    return;
  }
  std::fputs(sm::to_text(r).c_str(), stdout);
}

void run_sweep(const SoftmaxFlags& f, const theory::Params& p, const sm::SoftmaxOptions& o) {
  const std::vector<double> rhos =
      range_values(parse_range(f.sweep_rho, "--sweep-rho"), false, "--sweep-rho");
  const sm::SweepResult r = sm::run_rho_sweep(p, rhos, o, show_progress(f, "softmax sweep rho"));
  Table t;
  t.columns = sm::sweep_columns();
  for (const sm::PointResult& point : r.points) {
    print_notes(point);
    t.rows.push_back(sm::sweep_row(point));
  }
  emit_tsv(t, f.out, nlohmann::json(sm::sweep_meta(r)));
}

}  // namespace

void register_softmax(CLI::App& app) {
  auto f = std::make_shared<SoftmaxFlags>();
  auto* cmd = app.add_subcommand(
      "softmax", "Softmax-attention check (docs/softmax.md): one softmax attention layer trained "
                 "by Adam on the low-rank data; TM/IDG/ODG next to the linear theory and simulator");
  f->flags.add_to(*cmd);
  add_dim_flag(*cmd, f->dim)->required();
  add_seeds_flag(*cmd, f->seeds)->required();
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
  add_seed_flag(*cmd, f->seed);
  add_threads_flag(*cmd, f->threads);
  cmd->add_option("--sweep-rho", f->sweep_rho, "START:STOP:COUNT: sweep rho, write TSV (+ JSON sidecar)");
  cmd->add_flag("--no-linear", f->no_linear, "skip the linear theory and linear simulator");
  add_json_flag(*cmd, f->json);
  add_out_flag(*cmd, f->out, "the JSON (one point) or the TSV table + JSON sidecar (--sweep-rho)");
  add_quiet_flag(*cmd, f->quiet);
  cmd->callback([f] {
    const theory::Params p = f->flags.resolve();
    const sm::SoftmaxOptions o = options_from(*f);
    if (!f->sweep_rho.empty()) {
      if (f->json) throw ExitError(kExitBadInput, "--json is for one point; a sweep writes TSV");
      run_sweep(*f, p, o);
    } else {
      run_point(*f, p, o);
    }
  });
}

}  // namespace icl::cli
