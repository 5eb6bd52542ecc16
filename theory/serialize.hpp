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
//  [, "task_spectrum": [[eigenvalue, weight], ...]]}
nlohmann::ordered_json to_json(const Params& p);
// The tasks in use, for text headers: "rho 0.9" for the paper's low-rank tasks, else
// "task spectrum t1:w1,t2:w2,..." (eigenvalue:weight, 6 significant digits).
std::string task_description(const Params& p);
// {"params", "method", "converged", "status", "residual_norm", "iterations", "message",
//  "order": {q, m, chi, qbar, chibar, mbar, m0, q0, qhat, mhat, chihat, qbarhat, chibarhat}
//  (letey: without chi, chibar and the conjugates), "error": {tm, idg, odg},
//  "decomposition": {tm|idg|odg: {algo, mem, struct}}, "regime", "effective_ridge", "z", "e",
//  "nu" [, "last_iterate": {"order", "error", "decomposition", "z", "e"}]}
// A solution that did not converge has NaN values (null in dump()) and, when the solver
// produced one, its last iterate under "last_iterate" (for diagnosis only).
nlohmann::ordered_json to_json(const Solution& s);
// Without converged(): the status and message only, no values.
std::string to_text(const Solution& s);

// Columns after the parameters: converged, residual, iterations, tm, idg, odg, the nine
// decomposition pieces, the order parameters, z, e. A failed point gets nan values.
std::vector<std::string> solution_columns();
std::vector<double> solution_row(const Solution& s);

}  // namespace icl::theory
