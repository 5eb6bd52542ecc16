// The one serializer of the theory's result types: JSON (the `icl solve --json` layout, also
// Python's to_dict()), text (`icl solve`), and the TSV columns shared by sweeps and phase grids.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theory/lowrank.hpp"
#include "theory/params.hpp"

namespace icl::theory {

// {"alpha", "alpha_test", "tau", "gamma", "kappa", "rho", "sigma", "sigma_test", "lambda"
//  [, "task_spectrum": [[eigenvalue, weight], ...]] [, "test_overlap": C] [, "test_levels": [...]]}
nlohmann::ordered_json to_json(const Params& p);
// The tasks in use, for text headers: "rho 0.9" for the paper's low-rank tasks, else
// "task spectrum t1:w1,t2:w2,..." (eigenvalue:weight, 6 significant digits).
std::string task_description(const Params& p);
// {"params", "method", "converged", "status", "residual_norm", "iterations", "message",
//  "order": {q, m, chi, qbar, chibar, mbar, m0, q0, qhat, mhat, chihat, qbarhat, chibarhat}
//  (letey: without chi, chibar and the conjugates), "error": {tm, idg, odg},
//  "decomposition": {tm|idg|odg: {algo, mem, struct}}, "regime", "effective_ridge", "z", "e",
//  "nu" [, "test_shift": {"overlap", "levels", "error", "decomposition": {algo, mem, struct}}]
//  [, "last_iterate": {"order", "error", "decomposition", "z", "e" [, "test_shift"]}]}
// A solution that did not converge has NaN values (null in dump()) and, when the solver
// produced one, its last iterate under "last_iterate" (for diagnosis only).
nlohmann::ordered_json to_json(const Solution& s);
// One block of to_json(s), built alone ("params", "order", "error", "bayes_optimal",
// "decomposition", "last_iterate" (null when absent), or a scalar key): the same value as
// to_json(s).at(key), without building the rest (Python's Solution.error etc., per point).
nlohmann::ordered_json to_json_block(const Solution& s, const std::string& key);
// Without converged(): the status and message only, no values.
std::string to_text(const Solution& s);

// Columns after the parameters: converged, residual, iterations, tm, idg, odg, the nine
// decomposition pieces, the order parameters, z, e, and with test_shift the shifted protocol's
// shift, shift_algo, shift_mem, shift_struct (docs/theory.md §20). A failed point gets nan
// values, a point without a shifted protocol nan shift columns.
std::vector<std::string> solution_columns(bool test_shift = false);
std::vector<double> solution_row(const Solution& s, bool test_shift = false);
// Whether a table of these solutions needs the shift columns (any of them has a shifted protocol).
bool any_test_shift(const std::vector<Solution>& solutions);

}  // namespace icl::theory
