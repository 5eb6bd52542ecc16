// JSON and text renderings of a theory Solution (architecture.md's `icl solve --json`), and the
// TSV columns shared by sweeps and phase grids.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theory/lowrank.hpp"

namespace icl::cli {

nlohmann::ordered_json solution_to_json(const lowrank::Solution& s);
std::string solution_to_text(const lowrank::Solution& s);

// Columns after the parameters: converged, residual, iterations, tm, idg, odg, the nine
// decomposition pieces, the order parameters, z, e. A failed point gets nan values.
std::vector<std::string> solution_columns();
std::vector<double> solution_row(const lowrank::Solution& s);

}  // namespace icl::cli
