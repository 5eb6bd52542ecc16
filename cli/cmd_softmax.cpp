// icl softmax: the softmax-attention check of the low-rank theory (docs/softmax.md). One point
// (text or --json), or a sweep over rho (--sweep-rho START:STOP:COUNT) as TSV with a JSON
// sidecar; next to the linear-attention theory and the linear simulator at the same point. The
// procedure is verify::softmax::run (a point or a rho sweep), the layouts verify/softmax/serialize.hpp.
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

// The flags write into the library's options (their defaults are SoftmaxOptions{}'s; the checks
// are its validate()); --seed is the base seed.
struct SoftmaxFlags {
  ParamFlags flags;
  sm::SoftmaxOptions options;
  std::string sweep_rho, out;
  bool json = false, quiet = false;
};

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
  const sm::SweepResult r = sm::run(p, rhos, o, show_progress(f, "softmax sweep rho"));
  for (const sm::PointResult& point : r.points) print_notes(point);
  emit_tsv(sm::to_table(r), f.out, nlohmann::json(sm::sweep_meta(r)));
}

}  // namespace

void register_softmax(CLI::App& app) {
  auto f = std::make_shared<SoftmaxFlags>();
  auto* cmd = app.add_subcommand(
      "softmax", "Softmax-attention check (docs/softmax.md): one softmax attention layer trained "
                 "by Adam on the low-rank data; TM/IDG/ODG next to the linear theory and simulator");
  f->flags.add_to(*cmd);
  sm::SoftmaxOptions& o = f->options;
  add_dim_flag(*cmd, o.dim)->required();
  add_seeds_flag(*cmd, o.seeds)->required();
  cmd->add_option("--attn-dim", o.attn_dim, "attention (query/key) dimension")->capture_default_str();
  add_choice(*cmd, "--init", o.init, {sm::Init::Glorot, sm::Init::Torch},
             "initialization: glorot (Flux Dense default, the authors') | torch (nn.Linear "
             "default)");
  cmd->add_option("--epochs", o.train.max_epochs, "maximum Adam epochs (full batch)")
      ->capture_default_str();
  cmd->add_option("--tol", o.train.tol, "stop when |loss change| between epochs < tol (0: never)")
      ->capture_default_str();
  cmd->add_option("--lr", o.train.lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--prompts", o.test_prompts, "fresh test prompts per protocol")
      ->capture_default_str();
  add_choice(*cmd, "--odg", o.odg, {vf::OdgKind::Isotropic, vf::OdgKind::Subspace},
             "ODG test tasks: isotropic N(0, I) | subspace");
  add_choice(*cmd, "--assignment", o.assignment,
             {theory::Assignment::Random, theory::Assignment::Balanced},
             "task of each sequence: random | balanced");
  add_seed_flag(*cmd, o.base_seed);
  add_threads_flag(*cmd, o.threads);
  cmd->add_option("--sweep-rho", f->sweep_rho, "START:STOP:COUNT: sweep rho, write TSV (+ JSON sidecar)");
  cmd->add_flag("!--no-linear", o.compare_linear, "skip the linear theory and linear simulator");
  add_json_flag(*cmd, f->json);
  add_out_flag(*cmd, f->out, "the JSON (one point) or the TSV table + JSON sidecar (--sweep-rho)",
               OutFormat::JsonOrTable);
  add_quiet_flag(*cmd, f->quiet);
  cmd->callback([f] {
    const theory::Params p = f->flags.resolve();
    const sm::SoftmaxOptions& o = f->options;
    if (f->sweep_rho.empty()) check_json_output_name(f->out);
    if (!f->sweep_rho.empty()) {
      if (f->json) throw ExitError(kExitBadInput, "--json is for one point; a sweep writes TSV");
      run_sweep(*f, p, o);
    } else {
      run_point(*f, p, o);
    }
  });
}

}  // namespace icl::cli
