// Serializers of the low-rank experiments' results, one per result type: the JSON of
// `icl simulate --json` / `icl verify --json`, the text reports, the TSV columns of
// `icl sweep --simulate`, and the flat names of the Python binding.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/gd_demo.hpp"
#include "numerics/table.hpp"
#include "verify/lowrank/simulator.hpp"
#include "verify/lowrank/sweep.hpp"

namespace icl::verify::lowrank {

// {"D", "r", "M0", "N", "L", "L_test"}: the integer sizes at one D.
nlohmann::ordered_json to_json(const Sizes& n);

// {"mean": m, "sem": s} (NaN -> null).
nlohmann::ordered_json to_json(const numerics::Estimate& e);
// {"value", "se", "slope", "slope_se", "chi2", "dof"}: the 1/D extrapolation of icl verify.
nlohmann::ordered_json to_json(const Extrapolation& e);

// params, dim, seeds, base_seed, status, message, error, order, [decomposition.{measured,
// theory}], [distribution], cg, timing, sizes, odg_kind, assignment, sampler, solver, [theory].
nlohmann::ordered_json to_json(const SimulationResult& r);
std::string to_text(const SimulationResult& r);  // the `icl simulate` report

nlohmann::ordered_json to_json(const GdDemoResult& r);  // the "gd_demo" object

// quick, dims, seeds, base_seed, tolerance, points[{label, params, theory, pass, status,
// seconds_per_dim, [message], rows[...], finite_dim{...}}], pass, status, [message].
nlohmann::ordered_json to_json(const VerifyResult& r);
std::string to_text(const VerifyResult& r);  // the `icl verify` report

// Every simulated quantity by its flat name: "error.tm", "order.q0", "decomp.idg.algo",
// "decomp.fit.e", "dist.tm.var_ratio", "hist.tm.3", "cg.iterations", "timing.seed_seconds", ...
std::vector<std::pair<std::string, numerics::Estimate>> named_estimates(const SimulationResult& r);

// `icl sweep --simulate` columns: sim_<q>, sim_<q>_sem for every compared quantity, and a row.
std::vector<std::string> simulation_columns();
std::vector<double> simulation_row(const SimulationResult& r);

// The sweep (verify/lowrank/sweep.hpp). The options that determine its values (the checkpoint
// fingerprint of `icl sweep --simulate`): {"params", "method", "grid_points", "shard": {index,
// count}, ["simulation": {dim, seeds, seed, finite_d_switches}], ["finite_dim": {dim,
// finite_d_switches}]}.
nlohmann::json to_json(const SweepOptions& o);
// The sidecar of `icl sweep`: to_json(options) with the counts "failed_points",
// "simulation.failed_points", "finite_dim.failed_points" and "finite_dim.not_covered_points".
nlohmann::json to_json(const SweepResult& r);
// The TSV of `icl sweep`: index, the varied parameter, theory::solution_columns() (with the
// shifted protocol's when a point has one), the finite-D columns fd_* with finite_dim, the
// simulation columns sim_* with simulation; one row per point.
numerics::Table to_table(const SweepResult& r);

}  // namespace icl::verify::lowrank
