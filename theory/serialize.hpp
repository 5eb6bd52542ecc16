// The one serializer of the theory's result types: JSON (the `icl solve --json` layout, also
// Python's to_dict()), text (`icl solve`), and the TSV columns shared by sweeps and phase grids.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theory/finite_dim.hpp"
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

// The finite-D prediction (docs/theory.md §21), the "finite_dim" block of `icl solve --json
// --finite-dim D` and Python's FiniteDimResult.to_dict():
// {"dim", "status", "message", "residual_norm", "sized": to_json(sized params),
//  "error": {tm, idg, odg}, "limit": {tm, idg, odg} (the D -> infinity solution at the sized
//  parameters), "slope": {tm, idg, odg} (d error / d(1/D)), "order": {q, m, qbar, mbar, m0, q0},
//  "sources": {name: {"slope": {tm, idg, odg}, "correction": {tm, idg, odg}}, ...} (in the
//  result's order), "omitted": [name, ...], "finite_d_switches": to_json(FiniteDSwitches)}.
//  Not converged: every value NaN (null in dump()), limit included.
nlohmann::ordered_json to_json(const FiniteDimResult& r);
// The "finite D = 40" section of `icl solve --finite-dim 40`: sized parameters, error, limit and
// correction per error, one line per source (its three corrections), the omitted effects.
// Without converged(): the status and message only.
std::string to_text(const FiniteDimResult& r);
// The sweep columns fd_tm, fd_idg, fd_odg: the finite-D errors; nan for a failed point and for
// a point the finite-D theory does not cover (r == nullptr).
std::vector<std::string> finite_dim_columns();
std::vector<double> finite_dim_row(const FiniteDimResult* r);

}  // namespace icl::theory
