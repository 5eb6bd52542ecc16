// icl sweep / icl phase: theory along one parameter (continuation) or on a 2-D grid, as TSV.
#include <memory>

#include "cli/commands.hpp"
#include "cli/checkpoint.hpp"
#include "cli/common.hpp"
#include "theory/serialize.hpp"
#include "numerics/error.hpp"
#include "theory/param_path.hpp"
#include "theory/phase_grid.hpp"
#include "verify/lowrank/serialize.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::cli {
namespace {

nlohmann::json range_meta(const NamedRange& g, bool log) {
  return {{"name", g.name}, {"start", g.range.start}, {"stop", g.range.stop},
          {"count", g.range.count}, {"log", log}};
}

// --gradient: the exact derivatives and elasticities of the errors as columns.
void add_gradient_flag(CLI::App& app, bool& gradient) {
  app.add_flag("--gradient", gradient,
               "also d_E_d_X and the elasticities el_E_X = (X/E) dE/dX of the errors E in every "
               "parameter X (exact, docs/sensitivity.md §22)");
}

nlohmann::json base_meta(const theory::Params& p, const std::string& method) {
  return {{"params", theory::to_json(p)}, {"method", method}};
}

// Simulation next to the theory (--simulate): mean and standard error over seeds of the compared
// quantities (verify/lowrank/compare.hpp), seeds derived from (--seed, global point index); the
// defaults are the library's (verify::lowrank::SweepOptions::default_simulation()).
struct SimFlags {
  bool enabled = false;
  verify::lowrank::SimOptions options = verify::lowrank::SweepOptions::default_simulation();
  void add_to(CLI::App& app) {
    app.add_flag("--simulate", enabled, "also simulate each point (finite D, mean and s.e.)");
    add_dim_flag(app, options.dim, "simulation dimension D")->capture_default_str();
    add_seeds_flag(app, options.seeds)->capture_default_str();
    add_seed_flag(app, options.base_seed);
    add_threads_flag(app, options.threads);
  }
};

// The flags of icl sweep and icl phase (one parameter block, shared by both subcommands).
struct Flags {
  ParamFlags flags;
  SimFlags sim;
  FiniteDimFlags finite_dim;  // sweep: --finite-dim D and the switches (also for --simulate)
  std::string vary, x, y, method = "saddle", out, shard;
  bool log = false, log_x = false, log_y = false, quiet = false, resume = false, gradient = false;
  int threads = 0;  // phase: 0 = all cores
};

// icl sweep: the library's sweep (verify/lowrank/sweep.hpp) and its one serializer.
void run_sweep(const Flags& f) {
  namespace vl = verify::lowrank;
  vl::SweepOptions o;
  o.base = f.flags.resolve();
  const NamedRange g = parse_named_range(f.vary, "--vary");
  o.name = g.name;
  o.values = range_values(g.range, f.log, "--vary");
  o.shard = numerics::shard_from_string(f.shard);
  o.theory.solve.method = theory::method_from_string(f.method);
  o.theory.solve.gradient = f.gradient;
  // The switches apply to the finite-D columns and to the simulation (the same sources off).
  o.finite_dim = f.finite_dim.options(f.sim.enabled);
  if (f.sim.enabled) {
    o.simulation = f.sim.options;
    o.simulation->switches = f.finite_dim.switches;
  }
  o.validate();
  nlohmann::json meta = vl::to_json(o);
  meta["vary"] = range_meta(g, f.log);
  // The simulations are the long part: each point's is kept as it finishes (--resume). The
  // theory sweep is recomputed (seconds, deterministic).
  if (f.resume && (f.out.empty() || f.out == "-"))
    throw ExitError(kExitBadInput, "--resume needs --out FILE (the checkpoint is FILE.partial/)");
  Checkpoint checkpoint;
  if (o.simulation && !f.out.empty() && f.out != "-") checkpoint = Checkpoint(f.out, meta, f.resume);
  numerics::Progress report;
  if (!f.quiet)
    report = [what = "sweep " + g.name](std::size_t d, std::size_t n, const std::string& stage) {
      progress(what + " (" + stage + ")", d, n);
    };
  const vl::SweepResult r = vl::run(o, report, checkpoint.store());
  nlohmann::json sidecar = vl::to_json(r);
  sidecar["vary"] = meta["vary"];
  emit_tsv(vl::to_table(r), f.out, sidecar);
  checkpoint.remove();
  if (!r.converged()) throw ExitError(kExitNotConverged, r.message);
}

// icl phase: the theory on a 2-D grid (theory::phase_grid_rows), sharded by rows of x, each row
// written as it completes so that memory stays one row whatever the grid (docs/cli.md, "Memory
// and size"); a grid beyond a day, or beyond the free space of --out, is refused first.
void run_phase(const Flags& f) {
  const theory::Params p = f.flags.resolve();
  const NamedRange gx = parse_named_range(f.x, "--x"), gy = parse_named_range(f.y, "--y");
  const auto all_xs = range_values(gx.range, f.log_x, "--x");
  const auto ys = range_values(gy.range, f.log_y, "--y");
  // Sharded by x row: global index of point (i, j) is i * ny + j.
  const numerics::Shard shard = numerics::shard_from_string(f.shard);
  const std::vector<std::size_t> rows = shard.indices(all_xs.size());
  std::vector<double> xs;
  for (std::size_t i : rows) xs.push_back(all_xs[i]);
  theory::PhaseOptions po;
  po.solve.method = theory::method_from_string(f.method);
  po.solve.gradient = f.gradient;
  po.threads = f.threads;
  // The size first: it validates the axes and the corners before anything else uses them.
  const theory::PhaseGridSize size = theory::phase_grid_size(p, gx.name, xs, gy.name, ys, po);
  // The shifted protocol's columns when the grid's points have one (every point alike: setting
  // test_overlap sets it everywhere).
  bool shift = false;
  if (!xs.empty() && !ys.empty())
    shift = theory::with_param(theory::with_param(p, gx.name, xs[0]), gy.name, ys[0]).has_test_shift();
  std::vector<std::string> columns = {"index", gx.name, gy.name, "task_rich", "atom_mass"};
  for (const auto& c : theory::solution_columns(shift)) columns.push_back(c);
  std::vector<std::string> gradient;  // with --gradient: d_<E>_d_<x>, el_<E>_<x>
  if (f.gradient && !xs.empty() && !ys.empty())
    gradient = theory::gradient_columns(
        theory::with_param(theory::with_param(p, gx.name, xs[0]), gy.name, ys[0]), po.solve.method);
  columns.insert(columns.end(), gradient.begin(), gradient.end());
  theory::check_phase_grid(size, /*holds_all=*/false, columns.size(), f.out);
  numerics::Progress report;
  if (!f.quiet) report = [](std::size_t d, std::size_t n, const std::string&) {
    if (d == n || d % 100 == 0) progress("phase", d, n);
  };
  TableStream out(f.out, columns);
  std::size_t failed = 0;
  theory::phase_grid_rows(
      p, gx.name, xs, gy.name, ys, po,
      [&](std::size_t i, const std::vector<theory::Solution>& sols) {
        std::vector<std::vector<double>> table;
        for (std::size_t j = 0; j < sols.size(); ++j) {
          const auto& s = sols[j];
          const double global = static_cast<double>(rows[i] * ys.size() + j);
          std::vector<double> row = {global, s.params.get(gx.name), s.params.get(gy.name),
                                     theory::regime(s.params) == theory::Regime::TaskRich ? 1.0 : 0.0,
                                     theory::atom_mass(s.params)};
          const auto r = theory::solution_row(s, shift);
          row.insert(row.end(), r.begin(), r.end());
          if (!gradient.empty()) {
            const auto g = theory::gradient_row(s, gradient);
            row.insert(row.end(), g.begin(), g.end());
          }
          table.push_back(std::move(row));
          failed += !s.converged();
        }
        out.write(table, f.threads);
      },
      report);
  nlohmann::json meta = base_meta(p, f.method);
  meta["x"] = range_meta(gx, f.log_x);
  meta["y"] = range_meta(gy, f.log_y);
  meta["grid_points"] = all_xs.size() * ys.size();
  meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
  meta["failed_points"] = failed;
  out.finish(meta);
  if (failed)
    throw ExitError(kExitNotConverged, std::to_string(failed) + " of " +
                                           std::to_string(xs.size() * ys.size()) +
                                           " grid points did not converge (converged = 0, nan values)");
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto opt = std::make_shared<Flags>();
  auto* sweep = app.add_subcommand("sweep", "Theory along one parameter (warm-started continuation), TSV");
  opt->flags.add_to(*sweep);
  sweep->add_option("--vary", opt->vary, "NAME=START:STOP:COUNT")->required();
  sweep->add_flag("--log", opt->log, "geometric grid");
  sweep->add_option("--method", opt->method, "saddle | reduced | letey")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  add_out_flag(*sweep, opt->out, "the TSV table (+ JSON sidecar FILE.json)", OutFormat::Table);
  add_quiet_flag(*sweep, opt->quiet);
  add_gradient_flag(*sweep, opt->gradient);
  sweep->add_option("--shard", opt->shard, "I/N: compute only points i with i % N == I (merge with icl merge)");
  opt->sim.add_to(*sweep);
  opt->finite_dim.add_to(*sweep, "--simulate");
  add_resume_flag(*sweep, opt->resume);
  sweep->callback([opt] { run_sweep(*opt); });

  auto* phase = app.add_subcommand("phase", "Theory on a 2-D grid (e.g. rho x kappa) with regimes, TSV");
  opt->flags.add_to(*phase);
  phase->add_option("--x", opt->x, "NAME=START:STOP:COUNT")->required();
  phase->add_option("--y", opt->y, "NAME=START:STOP:COUNT")->required();
  phase->add_flag("--log-x", opt->log_x, "geometric x grid");
  phase->add_flag("--log-y", opt->log_y, "geometric y grid");
  phase->add_option("--method", opt->method, "saddle | reduced | letey")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  add_threads_flag(*phase, opt->threads, /*zero_means_all_cores=*/true);
  add_out_flag(*phase, opt->out, "the TSV table (+ JSON sidecar FILE.json)", OutFormat::Table);
  add_quiet_flag(*phase, opt->quiet);
  add_gradient_flag(*phase, opt->gradient);
  phase->add_option("--shard", opt->shard, "I/N: compute only rows of x with i % N == I (merge with icl merge)");
  phase->callback([opt] { run_phase(*opt); });
}

}  // namespace icl::cli
