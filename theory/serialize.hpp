// The one serializer of the theory's result types, on top of the rest of theory/: JSON (the
// `icl solve --json` layout, also Python's to_dict()), text (`icl solve`), the TSV columns shared
// by sweeps and phase grids (built from theory/quantity.hpp), and the results of optimize and
// boundary.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/table.hpp"
#include "theory/boundary.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "theory/optimize.hpp"
#include "theory/params.hpp"
#include "theory/sensitivity.hpp"

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
//  [, "last_iterate": {"order", "error", "decomposition", "z", "e" [, "test_shift"]}]
//  [, "gradient": to_json(Gradient), "gradient_status": gradient_status_json(Gradient)]}
// A solution that did not converge has NaN values (null in dump()) and, when the solver
// produced one, its last iterate under "last_iterate" (for diagnosis only).
nlohmann::ordered_json to_json(const Solution& s);
// One block of to_json(s), built alone ("params", "order", "error", "bayes_optimal",
// "decomposition", "last_iterate" (null when absent), or a scalar key): the same value as
// to_json(s).at(key), without building the rest (Python's Solution.error etc., per point).
nlohmann::ordered_json to_json_block(const Solution& s, const std::string& key);
// Without converged(): the status and message only, no values.
std::string to_text(const Solution& s);

// Columns after the parameters: converged, residual, iterations, then the quantities of
// solution_quantities() that are columns (theory/quantity.hpp): tm, idg, odg, the nine
// decomposition pieces, the order parameters, z, e, and with test_shift the shifted protocol's
// shift, shift_algo, shift_mem, shift_struct (docs/general_covariance.md §20). A failed point gets
// nan values, a point without a shifted protocol nan shift columns (Quantity::value).
std::vector<std::string> solution_columns(bool test_shift = false);
std::vector<double> solution_row(const Solution& s, bool test_shift = false);
// The same into `row` (its capacity reused: one allocation for a whole table).
void solution_row(const Solution& s, bool test_shift, std::vector<double>& row);
// Whether a table of these solutions needs the shift columns (any of them has a shifted protocol).
bool any_test_shift(const std::vector<Solution>& solutions);

// The exact derivatives (docs/sensitivity.md §22): {output: {parameter: d output / d
// parameter}} over the gradient's rows and columns (NaN, null in dump(), unless converged), the
// "gradient" block of to_json(Solution); its status, message and condition number are the
// block "gradient_status" = gradient_status_json(g).
nlohmann::ordered_json to_json(const Gradient& g);
nlohmann::ordered_json gradient_status_json(const Gradient& g);
// The text of `icl solve --gradient`: the errors (and shift) against every parameter, the
// status line; every other output in the JSON.
std::string to_text(const Gradient& g);
// The gradient columns of sweeps and phase grids (with a gradient, SolveOptions::gradient):
// d_<E>_d_<parameter> and the elasticities el_<E>_<parameter> = (parameter / E) d E /
// d parameter, for E in tm idg odg (and shift with a shifted protocol), over
// gradient_parameters(p, method); nan where a point has no converged gradient.
std::vector<std::string> gradient_columns(const Params& p, Method method);
std::vector<double> gradient_row(const Solution& s, const std::vector<std::string>& columns);

// The finite-D prediction (docs/finite_dim.md §21), the "finite_dim" block of `icl solve --json
// --finite-dim D` and Python's FiniteDimResult.to_dict():
// {"dim", "status", "message", "residual_norm", "sized": to_json(sized params),
//  "error": {tm, idg, odg}, "limit": {tm, idg, odg} (the D -> infinity solution at the sized
//  parameters), "slope": {tm, idg, odg} (d error / d(1/D)), "order": {q, m, qbar, mbar, m0, q0},
//  "sources": {name: {"slope": {tm, idg, odg}, "correction": {tm, idg, odg}}, ...} (in the
//  result's order), "omitted": [name, ...], "validity": {"valid", "reason",
//  "relative_correction": {tm, idg, odg}, "remainder": {tm, idg, odg}, "max_relative_correction"}
//  (docs/finite_dim.md §21.9), "finite_d_switches": to_json(FiniteDSwitches)}.
//  Not converged: every value NaN (null in dump()), limit included.
nlohmann::ordered_json to_json(const FiniteDimResult& r);
// The "finite D = 40" section of `icl solve --finite-dim 40`: sized parameters, error, limit and
// correction per error, one line per source (its three corrections), the omitted effects.
// Without converged(): the status and message only.
std::string to_text(const FiniteDimResult& r);
// The sweep columns fd_tm, fd_idg, fd_odg: the finite-D errors, with test_shift fd_shift (the
// shifted protocol's, docs/finite_dim.md §21.11); fd_tm_algo, fd_idg_algo, fd_odg_algo (the
// algo part at D, §21.17); fd_bayes_idg, fd_bayes_odg, with test_shift fd_bayes_shift (the
// Bayes-optimal baselines at D, §21.16); and fd_valid (1 inside the expansion's range, 0
// outside, §21.9); nan for a failed point and for a point the finite-D theory does not cover
// (r == nullptr).
std::vector<std::string> finite_dim_columns(bool test_shift = false);
std::vector<double> finite_dim_row(const FiniteDimResult* r, bool test_shift = false);

// Optimal hyperparameters (docs/errors_phases.md §18), the `icl optimize --json` layout:
// {"objective", "over", "argmin", "minimum", "slope", "converged", "status", "message", "evaluations",
//  "interior_minima", "range": [lo, hi], "scale": "log"|"linear", "params"} (slope: the exact
// d objective / dt at the argmin, docs/sensitivity.md §22; params:
// to_json(Params) at the argmin).
nlohmann::ordered_json to_json(const OptimizeResult& r);
// `icl optimize`: "minimum idg = V at lambda = X (message; N solves)", numbers in full
// precision; without converged() "no minimum (status): message (N solves)".
std::string to_text(const OptimizeResult& r);

// Phase boundaries (docs/errors_phases.md §19), the `icl boundary --json` layout:
// {"criterion": {"type", "quantity"[, "level"]}, "x": NAME, "y": NAME, "range": [lo, hi],
//  "scale", ["derivative",] "converged", "status", "message",
//  "points": [{"<y>": y, "<x>": x|null, "value", ["slope",] "converged", "status", "message",
//              "candidates", "evaluations"}],
//  ["trace": {"status", "message", "turning_points", "largest_residual", "evaluations",
//             "points": [{"<x>", "<y>", "value", "residual", "arclength"}]},]
//  "params"} (params: to_json(Params) of the base).
nlohmann::ordered_json to_json(const BoundaryResult& r);
// The TSV: <y>, <x>, value, [slope (Steepest),] converged, candidates, evaluations; one row per y.
numerics::Table to_table(const BoundaryResult& r);
// The traced curve (BoundaryOptions::trace): <x> <y> value residual arclength, one row per point.
numerics::Table trace_table(const BoundaryResult& r);

}  // namespace icl::theory
