// icl simulate: the finite-D simulator at one point (mean and standard error over seeds), next
// to the theory's decomposition and the distribution of predictions (docs/simulation.md §13).
// icl verify: theory vs simulation over a fixed grid with a 1/D extrapolation (docs/simulation.md
// §14; exit 3 on failure). Both only parse flags, run the library experiment and print its
// serializer's output (verify/lowrank/serialize.hpp).
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/checkpoint.hpp"
#include "cli/common.hpp"
#include "cli/interrupt.hpp"
#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/gd_demo.hpp"
#include "verify/lowrank/serialize.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::cli {
namespace {

namespace vf = icl::verify::lowrank;

void register_simulate_command(CLI::App& app) {
  struct Flags {
    ParamFlags flags;
    vf::SimOptions sim = vf::SimOptions::standalone();
    vf::GdDemoOptions gd;
    std::string odg = "isotropic", sampler = "factorized", solver = "cg";
    bool json = false, gd_demo = false, quiet = false;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  auto* sim = app.add_subcommand(
      "simulate", "Finite-D simulation at one point: TM/IDG/ODG errors and order parameters "
                  "(mean and standard error over seeds), measured decomposition");
  f->flags.add_to(*sim);
  add_dim_flag(*sim, f->sim.dim)->required();
  add_seeds_flag(*sim, f->sim.seeds)->required();
  add_seed_flag(*sim, f->sim.base_seed);
  add_threads_flag(*sim, f->sim.threads);
  sim->add_option("--odg", f->odg, "ODG test tasks: isotropic N(0, I) | subspace (independent Haar subspace)")
      ->check(CLI::IsMember({"isotropic", "subspace"}))->capture_default_str();
  sim->add_option("--sampler", f->sampler, "context estimate: factorized (exact, 2L+D normals) | direct (L x D tokens)")
      ->check(CLI::IsMember({"factorized", "direct"}))->capture_default_str();
  sim->add_option("--solver", f->solver, "cg (matrix-free PCG) | direct (dense D^2 x D^2, D <= 40)")
      ->check(CLI::IsMember({"cg", "direct"}))->capture_default_str();
  sim->add_option("--cg-tol", f->sim.cg_tolerance, "relative residual of the normal equations")
      ->check(real_range(1e-15, 1e-2, false, false))->capture_default_str();
  sim->add_flag("--min-norm", f->sim.min_norm, "lambda = 0 with N < D^2: take the minimum-norm Gamma");
  sim->add_option("--prompts", f->sim.prediction_prompts, "fresh prompts per protocol for the distribution of predictions (0: off)")
      ->check(int_range(0, 10000000))->capture_default_str();
  sim->add_option("--bayes", f->sim.bayes_prompts,
                  "TM's Bayes-optimal baseline: the posterior mean over the M0 pretraining tasks "
                  "(dMMSE) by Monte Carlo on this many fresh prompts per seed (0: off)")
      ->check(int_range(0, 10000000))->capture_default_str();
  add_switch_flags(*sim, f->sim.switches);
  sim->add_flag("!--no-theory", f->sim.solve_theory, "do not solve the theory (no decomposition / distribution)");
  sim->add_flag("--gd-demo", f->gd_demo, "ill-posedness demo: gradient descent from several initializations (data of seed 0)");
  sim->add_option("--gd-steps", f->gd.steps, "gradient-descent steps")->check(int_range(1, 1000000))->capture_default_str();
  sim->add_option("--gd-inits", f->gd.init_scales, "initialization scales (Gamma0 = scale Z, Z iid N(0,1/D))")->capture_default_str();
  add_json_flag(*sim, f->json);
  add_out_flag(*sim, f->out, "the JSON", OutFormat::Json);
  add_quiet_flag(*sim, f->quiet);
  sim->callback([f] {
    const theory::Params p = f->flags.resolve();
    vf::SimOptions o = f->sim;
    o.odg = vf::odg_kind_from_string(f->odg);
    o.sampler = vf::sampler_from_string(f->sampler);
    o.solver = vf::solver_from_string(f->solver);
    // Ctrl-C: the seeds in progress finish, and the finished ones are the result (status
    // interrupted, exit 130), printed and written as an uninterrupted run's (cli/interrupt.hpp).
    on_interrupt_finish_units("finishing the seeds in progress, then writing the finished ones");
    const bool quiet = f->quiet;
    const numerics::Progress report = [quiet](std::size_t done, std::size_t total,
                                              const std::string& what) {
      if (!quiet) progress("simulate " + what, done, total);
      if (interrupt_requested()) throw std::runtime_error("interrupted");  // run() stops
    };
    const vf::SimulationResult r = vf::run(p, o, report);
    on_interrupt_default();
    for (const auto& note : r.notes) std::fprintf(stderr, "icl simulate: %s\n", note.c_str());
    nlohmann::ordered_json j = vf::to_json(r);
    if (f->gd_demo && r.status != numerics::Status::Interrupted) {
      j["gd_demo"] = vf::to_json(vf::run(p, f->gd.on_data_of(o)));
    }
    if (f->json || !f->out.empty()) emit_json(j, f->out);
    else std::cout << vf::to_text(r);
    if (r.status == numerics::Status::Interrupted)
      throw ExitError(kExitInterrupted, "simulate: " + r.message);
    if (!r.converged()) throw ExitError(kExitNotConverged, "simulate: " + r.message);
  });
}

void register_verify_command(CLI::App& app) {
  struct Flags {
    vf::VerifyOptions options;
    bool quick = false, json = false, quiet = false, resume = false;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  auto* ver = app.add_subcommand(
      "verify", "Theory vs simulation over a fixed grid: z-scores at fixed D and a 1/D "
                "extrapolation; exit 3 when they disagree beyond the stated tolerance");
  ver->add_flag("--quick", f->quick, "small D and two points (CI, under 2 minutes on 2 cores)");
  add_switch_flags(*ver, f->options.switches, " in every simulation");
  add_json_flag(*ver, f->json);
  add_out_flag(*ver, f->out, "the JSON", OutFormat::Json);
  add_threads_flag(*ver, f->options.threads);
  add_quiet_flag(*ver, f->quiet);
  add_seed_flag(*ver, f->options.base_seed);
  add_resume_flag(*ver, f->resume);
  ver->callback([f] {
    vf::VerifyOptions o = f->quick ? vf::VerifyOptions::quick() : vf::VerifyOptions{};
    o.threads = f->options.threads;
    o.base_seed = f->options.base_seed;
    o.switches = f->options.switches;
    // With --out, each grid point's simulation at one D is kept as it finishes (--resume).
    if (f->resume && (f->out.empty() || f->out == "-"))
      throw ExitError(kExitBadInput, "--resume needs --out FILE (the checkpoint is FILE.partial/)");
    Checkpoint checkpoint;
    if (!f->out.empty() && f->out != "-") {
      nlohmann::json fingerprint = {{"quick", f->quick}, {"seed", o.base_seed}};
      fingerprint.update(nlohmann::json(theory::to_json(o.switches)));
      checkpoint = Checkpoint(f->out, fingerprint, f->resume);
    }
    numerics::Progress report;
    if (!f->quiet)
      report = [](std::size_t done, std::size_t total, const std::string&) {
        progress("verify", done, total);
      };
    const vf::VerifyResult r = vf::run(o, report, checkpoint.store());
    if (f->json || !f->out.empty()) emit_json(vf::to_json(r), f->out);
    else std::cout << vf::to_text(r);
    checkpoint.remove();
    if (!r.passed())
      throw ExitError(kExitNotConverged,
                      r.status == numerics::Status::CheckFailed
                          ? "verify: theory and extrapolated simulation disagree beyond tolerance "
                            "(see the FAIL rows)"
                          : "verify: " + r.message);
  });
}

}  // namespace

void register_simulate(CLI::App& app) {
  register_simulate_command(app);
  register_verify_command(app);
}

}  // namespace icl::cli
