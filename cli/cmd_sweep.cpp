// icl sweep / icl phase: theory along one parameter (continuation) or on a 2-D grid, as TSV.
#include <memory>

#include "cli/commands.hpp"
#include "cli/checkpoint.hpp"
#include "cli/common.hpp"
#include "theory/serialize.hpp"
#include "numerics/error.hpp"
#include "theory/sweep.hpp"
#include "verify/lowrank/serialize.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::cli {
namespace {

nlohmann::json range_meta(const NamedRange& g, bool log) {
  return {{"name", g.name}, {"start", g.range.start}, {"stop", g.range.stop},
          {"count", g.range.count}, {"log", log}};
}

nlohmann::json base_meta(const theory::Params& p, const std::string& method) {
  return {{"params", theory::to_json(p)}, {"method", method}};
}

// --shard I/N (0 <= I < N): this run computes the grid points whose global index i has
// i % N == I (strided, so that expensive regions are spread over the shards). Every random
// quantity of point i is seeded from (--seed, i), so a point's result does not depend on N.
struct Shard {
  long index = 0, count = 1;
  bool owns(std::size_t i) const { return static_cast<long>(i % count) == index; }
};

Shard parse_shard(const std::string& text) {
  Shard s;
  if (text.empty()) return s;
  const auto slash = text.find('/');
  auto bad = [&] {
    return ExitError(kExitBadInput, "--shard " + text + ": expected I/N with 0 <= I < N, e.g. 0/4");
  };
  if (slash == std::string::npos) throw bad();
  try {
    std::size_t p1 = 0, p2 = 0;
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    s.index = std::stol(a, &p1);
    s.count = std::stol(b, &p2);
    if (p1 != a.size() || p2 != b.size()) throw bad();
  } catch (const ExitError&) {
    throw;
  } catch (const std::exception&) {
    throw bad();
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

// Simulation next to the theory (--simulate): mean and standard error over seeds of the compared
// quantities (verify/lowrank/compare.hpp), seeds derived from (--seed, global point index).
struct SimFlags {
  bool enabled = false;
  verify::lowrank::SimOptions options{.dim = 40};
  void add_to(CLI::App& app) {
    app.add_flag("--simulate", enabled, "also simulate each point (finite D, mean and s.e.)");
    add_dim_flag(app, options.dim, "simulation dimension D");
    add_seeds_flag(app, options.seeds);
    add_seed_flag(app, options.base_seed);
    add_threads_flag(app, options.threads);
  }
};

}  // namespace

void register_sweep(CLI::App& app) {
  struct Options {
    ParamFlags flags;
    SimFlags sim;
    FiniteDimFlags finite_dim;  // sweep: --finite-dim D and the switches (also for --simulate)
    std::string vary, x, y, method = "saddle", out, shard;
    bool log = false, log_x = false, log_y = false, quiet = false, resume = false;
    int threads = 0;  // phase: 0 = all cores
  };
  auto opt = std::make_shared<Options>();
  auto* sweep = app.add_subcommand("sweep", "Theory along one parameter (warm-started continuation), TSV");
  opt->flags.add_to(*sweep);
  sweep->add_option("--vary", opt->vary, "NAME=START:STOP:COUNT")->required();
  sweep->add_flag("--log", opt->log, "geometric grid");
  sweep->add_option("--method", opt->method, "saddle | reduced | letey")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  add_out_flag(*sweep, opt->out, "the TSV table (+ JSON sidecar FILE.json)");
  add_quiet_flag(*sweep, opt->quiet);
  sweep->add_option("--shard", opt->shard, "I/N: compute only points i with i % N == I (merge with icl merge)");
  opt->sim.add_to(*sweep);
  opt->finite_dim.add_to(*sweep, "--simulate");
  add_resume_flag(*sweep, opt->resume);
  sweep->callback([opt] {
    const theory::Params p = opt->flags.resolve();
    const NamedRange g = parse_named_range(opt->vary, "--vary");
    const auto all_values = range_values(g.range, opt->log, "--vary");
    const Shard shard = parse_shard(opt->shard);
    std::vector<double> values;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < all_values.size(); ++i)
      if (shard.owns(i)) {
        values.push_back(all_values[i]);
        index.push_back(i);
      }
    // The switches apply to the finite-D columns and to the simulation (the same sources off).
    const FiniteDimFlags& fdf = opt->finite_dim;
    const auto fd_options = fdf.options(opt->sim.enabled);
    verify::lowrank::SimOptions sim_options = opt->sim.options;
    sim_options.sphere_queries = fdf.sphere_queries;
    sim_options.fixed_norm_tasks = fdf.fixed_norm_tasks;
    sim_options.gaussian_context = fdf.gaussian_context;
    sim_options.assignment = verify::lowrank::assignment_from_string(fdf.assignment);
    nlohmann::json meta = base_meta(p, opt->method);
    meta["vary"] = range_meta(g, opt->log);
    meta["grid_points"] = all_values.size();
    meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
    if (opt->sim.enabled)
      meta["simulation"] = {{"dim", opt->sim.options.dim}, {"seeds", opt->sim.options.seeds},
                            {"seed", opt->sim.options.base_seed}};
    // Only when on, so that the sidecar (and a checkpoint's options) of a run without them is
    // unchanged.
    if (opt->sim.enabled) {
      if (fdf.sphere_queries) meta["simulation"]["sphere_queries"] = true;
      if (fdf.fixed_norm_tasks) meta["simulation"]["fixed_norm_tasks"] = true;
      if (fdf.gaussian_context) meta["simulation"]["gaussian_context"] = true;
      if (fdf.assignment != "random") meta["simulation"]["assignment"] = fdf.assignment;
    }
    // The simulations are the long part: each point's is kept as it finishes (--resume). The
    // theory sweep is recomputed (seconds, deterministic).
    if (opt->resume && (opt->out.empty() || opt->out == "-"))
      throw ExitError(kExitBadInput, "--resume needs --out FILE (the checkpoint is FILE.partial/)");
    Checkpoint checkpoint;
    if (opt->sim.enabled && !opt->out.empty() && opt->out != "-")
      checkpoint = Checkpoint(opt->out, meta, opt->resume);
    theory::SweepOptions so;
    so.solve.method = theory::method_from_string(opt->method);
    const std::string what = "sweep " + g.name;
    if (!opt->quiet && !opt->sim.enabled)
      so.progress = [&](std::size_t d, std::size_t n, const std::string&) { progress(what, d, n); };
    const std::vector<theory::Solution> sols = theory::sweep(p, g.name, values, so);
    // The finite-D prediction per point (docs/theory.md §21): nan where it failed or does not
    // cover the point (the ridgeless branch).
    std::vector<theory::FiniteDimPoint> fd;
    std::size_t fd_failed = 0, fd_not_covered = 0;
    std::string fd_message;
    if (fd_options) {
      numerics::Progress fd_progress;
      if (!opt->quiet)
        fd_progress = [&](std::size_t d, std::size_t n, const std::string&) {
          progress(what + " (finite D)", d, n);
        };
      fd = theory::finite_dim_sweep(p, g.name, values, *fd_options, fd_progress);
      for (std::size_t i = 0; i < fd.size(); ++i) {
        if (!fd[i].result) ++fd_not_covered;
        else if (!fd[i].result->converged() && fd_failed++ == 0)
          fd_message = "point " + std::to_string(index[i]) + ": " + fd[i].result->message;
      }
      meta["finite_dim"] = {{"dim", fd_options->dim},
                            {"sphere_queries", fd_options->sphere_queries},
                            {"fixed_norm_tasks", fd_options->fixed_norm_tasks},
                            {"balanced_assignment", fd_options->balanced_assignment},
                            {"gaussian_context", fd_options->gaussian_context},
                            {"failed_points", fd_failed},
                            {"not_covered_points", fd_not_covered}};
    }
    Table t;
    t.columns = {"index", g.name};
    const bool shift = theory::any_test_shift(sols);
    for (const auto& c : theory::solution_columns(shift)) t.columns.push_back(c);
    if (fd_options)
      for (const auto& c : theory::finite_dim_columns()) t.columns.push_back(c);
    if (opt->sim.enabled)
      for (const auto& c : verify::lowrank::simulation_columns()) t.columns.push_back(c);
    std::size_t failed = 0, sim_failed = 0;
    std::string sim_message;
    for (std::size_t i = 0; i < sols.size(); ++i) {
      std::vector<double> row = {static_cast<double>(index[i]), values[i]};
      const auto r = theory::solution_row(sols[i], shift);
      row.insert(row.end(), r.begin(), r.end());
      if (fd_options) {
        const auto cells = theory::finite_dim_row(fd[i].result ? &*fd[i].result : nullptr);
        row.insert(row.end(), cells.begin(), cells.end());
      }
      if (opt->sim.enabled) {
        // Point k's seeds derive from (--seed, k) alone, so a kept point equals a recomputed one.
        const std::string unit = "point_" + std::to_string(index[i]);
        const auto kept = checkpoint.load(unit);
        std::optional<std::vector<double>> cells = kept ? numbers_from(*kept) : std::nullopt;
        if (!cells || cells->size() != verify::lowrank::simulation_columns().size()) {
          verify::lowrank::SimOptions o = sim_options;
          o.base_seed = numerics::derive_seed(opt->sim.options.base_seed, index[i]);
          const auto sim = verify::lowrank::run(sols[i].params, o);
          cells = verify::lowrank::simulation_row(sim);
          if (sim.converged()) checkpoint.save(unit, exact_numbers(*cells));
          else if (sim_failed++ == 0)  // not kept: a resumed run recomputes (and reports) it
            sim_message = "point " + std::to_string(index[i]) + ": " + sim.message;
        }
        row.insert(row.end(), cells->begin(), cells->end());
        if (!opt->quiet) progress(what + " (simulating)", i + 1, sols.size());
      }
      t.rows.push_back(std::move(row));
      failed += !sols[i].converged();
    }
    if (opt->sim.enabled) meta["simulation"]["failed_points"] = sim_failed;
    meta["failed_points"] = failed;
    emit_tsv(t, opt->out, meta);
    checkpoint.remove();
    if (sim_failed)
      throw ExitError(kExitNotConverged, std::to_string(sim_failed) + " of " +
                                             std::to_string(sols.size()) +
                                             " simulations did not converge (nan values); first: " +
                                             sim_message);
    if (failed)
      throw ExitError(kExitNotConverged, std::to_string(failed) + " of " +
                                             std::to_string(sols.size()) +
                                             " points did not converge (converged = 0, nan values)");
    if (fd_failed)
      throw ExitError(kExitNotConverged, std::to_string(fd_failed) + " of " +
                                             std::to_string(sols.size()) +
                                             " finite-D predictions failed (nan fd_* values); "
                                             "first: " + fd_message);
  });

  auto* phase = app.add_subcommand("phase", "Theory on a 2-D grid (e.g. rho x kappa) with regimes, TSV");
  opt->flags.add_to(*phase);
  phase->add_option("--x", opt->x, "NAME=START:STOP:COUNT")->required();
  phase->add_option("--y", opt->y, "NAME=START:STOP:COUNT")->required();
  phase->add_flag("--log-x", opt->log_x, "geometric x grid");
  phase->add_flag("--log-y", opt->log_y, "geometric y grid");
  phase->add_option("--method", opt->method, "saddle | reduced | letey")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  add_threads_flag(*phase, opt->threads, /*zero_means_all_cores=*/true);
  add_out_flag(*phase, opt->out, "the TSV table (+ JSON sidecar FILE.json)");
  add_quiet_flag(*phase, opt->quiet);
  phase->add_option("--shard", opt->shard, "I/N: compute only rows of x with i % N == I (merge with icl merge)");
  phase->callback([opt] {
    const theory::Params p = opt->flags.resolve();
    const NamedRange gx = parse_named_range(opt->x, "--x"), gy = parse_named_range(opt->y, "--y");
    if (gx.name == gy.name) throw ExitError(kExitBadInput, "--x and --y must vary different parameters");
    const auto all_xs = range_values(gx.range, opt->log_x, "--x");
    const auto ys = range_values(gy.range, opt->log_y, "--y");
    // Sharded by x row: global index of point (i, j) is i * ny + j.
    const Shard shard = parse_shard(opt->shard);
    std::vector<double> xs;
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < all_xs.size(); ++i)
      if (shard.owns(i)) {
        xs.push_back(all_xs[i]);
        rows.push_back(i);
      }
    theory::PhaseOptions po;
    po.solve.method = theory::method_from_string(opt->method);
    po.threads = opt->threads;
    if (!opt->quiet) po.progress = [](std::size_t d, std::size_t n, const std::string&) {
      if (d == n || d % 100 == 0) progress("phase", d, n);
    };
    const std::vector<theory::Solution> sols = theory::phase_grid(p, gx.name, xs, gy.name, ys, po);
    Table t;
    t.columns = {"index", gx.name, gy.name, "task_rich", "atom_mass"};
    const bool shift = theory::any_test_shift(sols);
    for (const auto& c : theory::solution_columns(shift)) t.columns.push_back(c);
    std::size_t failed = 0;
    for (std::size_t k = 0; k < sols.size(); ++k) {
      const auto& s = sols[k];
      const double global = static_cast<double>(rows[k / ys.size()] * ys.size() + k % ys.size());
      std::vector<double> row = {global, s.params.get(gx.name), s.params.get(gy.name),
                                 theory::regime(s.params) == theory::Regime::TaskRich ? 1.0 : 0.0,
                                 theory::atom_mass(s.params)};
      const auto r = theory::solution_row(s, shift);
      row.insert(row.end(), r.begin(), r.end());
      t.rows.push_back(std::move(row));
      failed += !s.converged();
    }
    nlohmann::json meta = base_meta(p, opt->method);
    meta["x"] = range_meta(gx, opt->log_x);
    meta["y"] = range_meta(gy, opt->log_y);
    meta["grid_points"] = all_xs.size() * ys.size();
    meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
    meta["failed_points"] = failed;
    emit_tsv(t, opt->out, meta);
    if (failed)
      throw ExitError(kExitNotConverged, std::to_string(failed) + " of " + std::to_string(sols.size()) +
                                             " grid points did not converge (converged = 0, nan values)");
  });
}

}  // namespace icl::cli
