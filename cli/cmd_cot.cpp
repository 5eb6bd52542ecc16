// icl cot: the test-time iteration of a ridge-trained linear-attention map (theory/cot.hpp,
// docs/multistep.md): E_t per step from the generating function in certified extended
// precision, the regime boundaries, the large-t limit and the optimal number of steps; with
// --simulate the simulator's mean, s.e. and median per step (verify/multistep/cot_simulator.hpp);
// with --phase a grid over two parameters as TSV. Text by default, --json the layout of
// theory::to_json(CotResult) (+ "simulation"). Exit 3 when the series could not be certified.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/cot.hpp"
#include "verify/multistep/cot_simulator.hpp"

namespace icl::cli {

void register_cot(CLI::App& app) {
  // The defaults are the library's (theory::CotParams, CotOptions, CotSimOptions); the checks are
  // their validate().
  const theory::CotOptions def{};
  const verify::multistep::CotSimOptions sim_def{};
  struct Options {
    theory::CotParams params;
    theory::CotOptions options;
    verify::multistep::CotSimOptions sim;
    bool json = false, simulate = false, phase = false, quiet = false;
    std::string out, x, y;
    int threads = 0;
  };
  auto opt = std::make_shared<Options>();
  opt->options = def;
  opt->sim = sim_def;
  auto* cmd = app.add_subcommand(
      "cot", "Test-time iteration (chain of thought): E_t per step, regime, limit, optimal t");
  cmd->footer("The theory is the D -> infinity limit at lambda = 0 (needs tau > 1); --simulate "
              "runs the simulator at --dim (it uses --lambda and accepts tau <= 1 with lambda > "
              "0; the theory is then skipped). docs/multistep.md.");
  cmd->add_option("--alpha", opt->params.alpha, "context length per dimension L/D")
      ->capture_default_str();
  cmd->add_option("--tau", opt->params.tau, "pretraining tasks per dimension M/D")
      ->capture_default_str();
  cmd->add_option("--sigma", opt->params.sigma, "pretraining label noise")->capture_default_str();
  cmd->add_option("--lambda", opt->params.lambda, "ridge of the pretraining (simulator only)")
      ->capture_default_str();
  cmd->add_option("--steps", opt->options.steps, "T: E_t for t = 0..T")->capture_default_str();
  cmd->add_option("--finite-dim", opt->options.finite_dim,
                  "also the finite-D prediction at this D (docs/multistep.md §7.3; with "
                  "--simulate: the simulated --dim unless given)");
  cmd->add_option("--max-bits", opt->options.max_bits,
                  "the highest binary precision tried for the series (a power of two)")
      ->capture_default_str();
  auto* simulate = cmd->add_flag("--simulate", opt->simulate, "also run the simulator");
  add_dim_flag(*cmd, opt->sim.dim)->capture_default_str();
  add_seeds_flag(*cmd, opt->sim.seeds)->capture_default_str();
  cmd->add_option("--test-tasks", opt->sim.test_tasks, "--simulate: test tasks per seed")
      ->capture_default_str();
  add_seed_flag(*cmd, opt->sim.seed);
  add_threads_flag(*cmd, opt->threads, true);
  auto* phase = cmd->add_flag("--phase", opt->phase,
                              "a grid over two parameters (--x, --y) as TSV: regime, boundaries, "
                              "limit, growth rate, t_opt");
  phase->excludes(simulate);
  cmd->add_option("--x", opt->x, "--phase: NAME=START:STOP:COUNT (alpha, tau or sigma)");
  cmd->add_option("--y", opt->y, "--phase: NAME=START:STOP:COUNT");
  add_json_flag(*cmd, opt->json);
  add_quiet_flag(*cmd, opt->quiet);
  add_out_flag(*cmd, opt->out, "the JSON (or with --phase the TSV)", OutFormat::JsonOrTable);
  cmd->callback([opt] {
    if (opt->phase) {
      if (opt->x.empty() || opt->y.empty())
        throw ExitError(kExitBadInput, "--phase needs --x NAME=START:STOP:COUNT and --y ...");
      const NamedRange x = parse_named_range(opt->x, "--x");
      const NamedRange y = parse_named_range(opt->y, "--y");
      const auto xs = range_values(x.range, false, "--x");
      const auto ys = range_values(y.range, false, "--y");
      const auto grid =
          theory::cot_phase_grid(opt->params, x.name, xs, y.name, ys, opt->options, opt->threads);
      nlohmann::json meta = {{"params", theory::to_json(opt->params)},
                             {"steps", opt->options.steps},
                             {"regime_codes", {"convergent", "oscillatory", "monotone"}}};
      emit_tsv(theory::cot_phase_table(x.name, xs, y.name, ys, grid), opt->out, meta);
      for (const auto& r : grid)
        if (!r.converged())
          throw ExitError(kExitNotConverged, "some grid points were not certified: " + r.message);
      return;
    }
    if (opt->simulate) {
      numerics::Progress report;
      if (!opt->quiet)
        report = [](std::size_t done, std::size_t total, const std::string& what) {
          progress(what, done, total);
        };
      opt->sim.threads = opt->threads;
      const auto c = verify::multistep::compare(opt->params, opt->options, opt->sim, report);
      if (opt->json || !opt->out.empty()) emit_json(verify::multistep::to_json(c), opt->out);
      else {
        if (c.has_theory) std::cout << theory::to_text(c.theory);
        std::cout << verify::multistep::to_text(c.simulation);
      }
      if (c.has_theory && !c.theory.converged())
        throw ExitError(kExitNotConverged, "cot: " + c.theory.message);
      if (!c.simulation.converged())
        throw ExitError(kExitNotConverged, "the simulation failed: " + c.simulation.message);
      return;
    }
    const theory::CotResult r = theory::run(opt->params, opt->options);
    if (opt->json || !opt->out.empty()) emit_json(theory::to_json(r), opt->out);
    else std::cout << theory::to_text(r);
    if (!r.converged()) throw ExitError(kExitNotConverged, "cot: " + r.message);
  });
}

}  // namespace icl::cli
