// icl sweep / icl phase: theory along one parameter (continuation) or on a 2-D grid, as TSV.
#include <algorithm>
#include <cmath>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/serialize.hpp"
#include "numerics/error.hpp"
#include "theory/sweep.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::cli {
namespace {

// NAME=START:STOP:COUNT, NAME one of Params::names() (dashes accepted for underscores).
struct GridSpec {
  std::string name;
  double start = 0, stop = 0;
  int count = 0;
};

GridSpec parse_grid(const std::string& text, const std::string& flag) {
  GridSpec g;
  const auto eq = text.find('=');
  auto bad = [&](const std::string& why) {
    return ExitError(kExitBadInput, flag + " " + text + ": " + why +
                                        " (expected NAME=START:STOP:COUNT, e.g. alpha=0.5:8:40)");
  };
  if (eq == std::string::npos) throw bad("missing '='");
  g.name = text.substr(0, eq);
  std::replace(g.name.begin(), g.name.end(), '-', '_');
  const auto& names = theory::Params::names();
  if (std::find(names.begin(), names.end(), g.name) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw bad("unknown parameter '" + g.name + "' (one of " + list + ")");
  }
  const std::string rest = text.substr(eq + 1);
  const auto c1 = rest.find(':'), c2 = rest.find(':', c1 == std::string::npos ? 0 : c1 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos) throw bad("need START:STOP:COUNT");
  try {
    std::size_t pos = 0;
    const std::string a = rest.substr(0, c1), b = rest.substr(c1 + 1, c2 - c1 - 1),
                      c = rest.substr(c2 + 1);
    g.start = std::stod(a, &pos);
    if (pos != a.size()) throw std::invalid_argument(a);
    g.stop = std::stod(b, &pos);
    if (pos != b.size()) throw std::invalid_argument(b);
    const long n = std::stol(c, &pos);
    if (pos != c.size()) throw std::invalid_argument(c);
    if (n < 1 || n > 1000000) throw bad("COUNT must be in [1, 1000000]");
    g.count = static_cast<int>(n);
  } catch (const ExitError&) {
    throw;
  } catch (const std::exception&) {
    throw bad("not numbers");
  }
  if (!std::isfinite(g.start) || !std::isfinite(g.stop)) throw bad("START and STOP must be finite");
  return g;
}

std::vector<double> grid_values(const GridSpec& g, bool log, const std::string& flag) {
  if (log && !(g.start > 0 && g.stop > 0))
    throw ExitError(kExitBadInput, flag + ": a log grid needs START, STOP > 0");
  return log ? theory::logspace(g.start, g.stop, g.count)
             : theory::linspace(g.start, g.stop, g.count);
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

// Simulation next to the theory (--simulate): mean and standard error over seeds of the three
// errors and six order parameters, seeds derived from (base seed, global point index).
const char* const kSimQuantities[] = {"error.tm", "error.idg", "error.odg", "order.m",
                                      "order.q",  "order.mbar", "order.qbar", "order.m0",
                                      "order.q0"};

std::vector<std::string> simulation_columns() {
  std::vector<std::string> c;
  for (const char* q : kSimQuantities) {
    std::string name = std::string("sim_") + (std::string(q).substr(std::string(q).find('.') + 1));
    c.push_back(name);
    c.push_back(name + "_sem");
  }
  return c;
}

struct SimFlags {
  bool enabled = false;
  int dim = 40, seeds = 5, threads = 2;
  std::uint64_t seed = 20251;
  void add_to(CLI::App& app) {
    app.add_flag("--simulate", enabled, "also simulate each point (finite D, mean and s.e.)");
    app.add_option("--dim", dim, "simulation dimension D")->check(CLI::Range(2, 2000))->capture_default_str();
    app.add_option("--seeds", seeds, "simulation seeds per point")->check(CLI::Range(1, 100000))->capture_default_str();
    app.add_option("--seed", seed, "base seed (point i uses seeds derived from (seed, i))")->capture_default_str();
  }
};

std::vector<double> simulate_point(const theory::Params& p, const SimFlags& f, std::size_t index,
                                   int threads) {
  verify::lowrank::SimOptions o;
  o.dim = f.dim;
  o.seeds = f.seeds;
  o.threads = threads;
  o.base_seed = numerics::derive_seed(f.seed, index);
  std::vector<double> row;
  try {
    const verify::lowrank::Estimate e = verify::lowrank::LowRankSimulator(p, o).run();
    for (const char* q : kSimQuantities) {
      const verify::lowrank::Stat st = e.get(q);
      row.push_back(st.mean);
      row.push_back(st.sem);
    }
  } catch (const InvalidParams& e) {
    throw ExitError(kExitBadInput, std::string("cannot simulate: ") + e.what());
  }
  return row;
}

}  // namespace

void register_sweep(CLI::App& app) {
  struct Options {
    ParamFlags flags;
    SimFlags sim;
    std::string vary, x, y, method = "saddle", out, shard;
    bool log = false, log_x = false, log_y = false, quiet = false;
    int threads = 0;
  };
  auto opt = std::make_shared<Options>();
  auto* sweep = app.add_subcommand("sweep", "Theory along one parameter (warm-started continuation), TSV");
  opt->flags.add_to(*sweep);
  sweep->add_option("--vary", opt->vary, "NAME=START:STOP:COUNT")->required();
  sweep->add_flag("--log", opt->log, "geometric grid");
  sweep->add_option("--method", opt->method, "saddle | reduced | letey")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  sweep->add_option("--out", opt->out, "TSV file (+ JSON sidecar F.tsv.json); default stdout");
  sweep->add_flag("--quiet", opt->quiet, "no progress on stderr");
  sweep->add_option("--shard", opt->shard, "I/N: compute only points i with i % N == I (merge with icl merge)");
  sweep->add_option("--threads", opt->sim.threads, "threads for the simulation seeds (results do not depend on it)")
      ->check(CLI::Range(1, 256))->capture_default_str();
  opt->sim.add_to(*sweep);
  sweep->callback([opt] {
    const theory::Params p = opt->flags.resolve();
    const GridSpec g = parse_grid(opt->vary, "--vary");
    const auto all_values = grid_values(g, opt->log, "--vary");
    const Shard shard = parse_shard(opt->shard);
    std::vector<double> values;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < all_values.size(); ++i)
      if (shard.owns(i)) {
        values.push_back(all_values[i]);
        index.push_back(i);
      }
    theory::SweepOptions so;
    so.solve.method = theory::method_from_string(opt->method);
    const std::string what = "sweep " + g.name;
    if (!opt->quiet && !opt->sim.enabled)
      so.on_progress = [&](std::size_t d, std::size_t n) { progress(what, d, n); };
    std::vector<theory::Solution> sols;
    try {
      sols = theory::sweep(p, g.name, values, so);
    } catch (const InvalidParams& e) {
      throw ExitError(kExitBadInput, std::string("invalid parameter ") + e.what());
    }
    Table t;
    t.columns = {"index", g.name};
    for (const auto& c : theory::solution_columns()) t.columns.push_back(c);
    if (opt->sim.enabled)
      for (const auto& c : simulation_columns()) t.columns.push_back(c);
    std::size_t failed = 0;
    for (std::size_t i = 0; i < sols.size(); ++i) {
      std::vector<double> row = {static_cast<double>(index[i]), values[i]};
      const auto r = theory::solution_row(sols[i]);
      row.insert(row.end(), r.begin(), r.end());
      if (opt->sim.enabled) {
        const auto sim = simulate_point(sols[i].params, opt->sim, index[i], opt->sim.threads);
        row.insert(row.end(), sim.begin(), sim.end());
        if (!opt->quiet) progress(what + " (simulating)", i + 1, sols.size());
      }
      t.rows.push_back(std::move(row));
      failed += !sols[i].converged();
    }
    nlohmann::json meta = base_meta(p, opt->method);
    meta["vary"] = {{"name", g.name}, {"start", g.start}, {"stop", g.stop}, {"count", g.count},
                    {"log", opt->log}};
    meta["grid_points"] = all_values.size();
    meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
    if (opt->sim.enabled)
      meta["simulation"] = {{"dim", opt->sim.dim}, {"seeds", opt->sim.seeds}, {"seed", opt->sim.seed}};
    meta["failed_points"] = failed;
    emit_tsv(t, opt->out, meta);
    if (failed)
      throw ExitError(kExitNotConverged, std::to_string(failed) + " of " +
                                             std::to_string(sols.size()) +
                                             " points did not converge (converged = 0, nan values)");
  });

  auto* phase = app.add_subcommand("phase", "Theory on a 2-D grid (e.g. rho x kappa) with regimes, TSV");
  opt->flags.add_to(*phase);
  phase->add_option("--x", opt->x, "NAME=START:STOP:COUNT")->required();
  phase->add_option("--y", opt->y, "NAME=START:STOP:COUNT")->required();
  phase->add_flag("--log-x", opt->log_x, "geometric x grid");
  phase->add_flag("--log-y", opt->log_y, "geometric y grid");
  phase->add_option("--method", opt->method, "saddle | reduced | letey")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  phase->add_option("--threads", opt->threads, "worker threads (0 = all cores)")
      ->check(CLI::Range(0, 256));
  phase->add_option("--out", opt->out, "TSV file (+ JSON sidecar); default stdout");
  phase->add_flag("--quiet", opt->quiet, "no progress on stderr");
  phase->add_option("--shard", opt->shard, "I/N: compute only rows of x with i % N == I (merge with icl merge)");
  phase->callback([opt] {
    const theory::Params p = opt->flags.resolve();
    const GridSpec gx = parse_grid(opt->x, "--x"), gy = parse_grid(opt->y, "--y");
    if (gx.name == gy.name) throw ExitError(kExitBadInput, "--x and --y must vary different parameters");
    const auto all_xs = grid_values(gx, opt->log_x, "--x"), ys = grid_values(gy, opt->log_y, "--y");
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
    if (!opt->quiet) po.on_progress = [](std::size_t d, std::size_t n) {
      if (d == n || d % 100 == 0) progress("phase", d, n);
    };
    std::vector<theory::Solution> sols;
    try {
      sols = theory::phase_grid(p, gx.name, xs, gy.name, ys, po);
    } catch (const InvalidParams& e) {
      throw ExitError(kExitBadInput, std::string("invalid parameter ") + e.what());
    }
    Table t;
    t.columns = {"index", gx.name, gy.name, "task_rich", "atom_mass"};
    for (const auto& c : theory::solution_columns()) t.columns.push_back(c);
    std::size_t failed = 0;
    for (std::size_t k = 0; k < sols.size(); ++k) {
      const auto& s = sols[k];
      const double global = static_cast<double>(rows[k / ys.size()] * ys.size() + k % ys.size());
      std::vector<double> row = {global, s.params.get(gx.name), s.params.get(gy.name),
                                 theory::regime(s.params) == theory::Regime::TaskRich ? 1.0 : 0.0,
                                 theory::atom_mass(s.params)};
      const auto r = theory::solution_row(s);
      row.insert(row.end(), r.begin(), r.end());
      t.rows.push_back(std::move(row));
      failed += !s.converged();
    }
    nlohmann::json meta = base_meta(p, opt->method);
    meta["x"] = {{"name", gx.name}, {"start", gx.start}, {"stop", gx.stop}, {"count", gx.count}, {"log", opt->log_x}};
    meta["y"] = {{"name", gy.name}, {"start", gy.start}, {"stop", gy.stop}, {"count", gy.count}, {"log", opt->log_y}};
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
