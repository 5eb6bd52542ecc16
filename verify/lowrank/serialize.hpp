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
#include "verify/lowrank/simulator.hpp"

namespace icl::verify::lowrank {

// {"D", "r", "M0", "N", "L", "L_test"}: the integer sizes at one D.
nlohmann::ordered_json to_json(const Sizes& n);

// {"mean": m, "sem": s} (NaN -> null).
nlohmann::ordered_json to_json(const numerics::Estimate& e);

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

}  // namespace icl::verify::lowrank
