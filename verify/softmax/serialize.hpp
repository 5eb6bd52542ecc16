// The one serializer of each softmax-check result type (experiment.hpp): the JSON of one point
// (`icl softmax --json`) and the TSV columns, rows and JSON sidecar of a rho sweep
// (`icl softmax --sweep-rho`). Absent linear comparisons are JSON null / NaN columns.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/table.hpp"
#include "verify/softmax/experiment.hpp"

namespace icl::verify::softmax {

// Keys in order: params, dim, seeds, base_seed, sizes, test_prompts, odg_kind, assignment,
// model, error.{tm,idg,odg}.{mean,sem}, zero_predictor, training (options, epochs
// {mean,sem,min,max}, initial_loss, final_loss, converged = seeds that met the stopping rule,
// not_converged, status, message, residual_norm), linear_theory, linear_simulation, timing.
nlohmann::ordered_json to_json(const SoftmaxResult& r);
// The same as a short table (`icl softmax` without --json): softmax, linear theory and linear
// simulation per protocol, then the training facts.
std::string to_text(const SoftmaxResult& r);

// rho, softmax_<p>_mean/_sem, theory_<p>, linsim_<p>_mean/_sem (p = tm, idg, odg), epochs_mean,
// epochs_max, converged, train_loss_mean, zero_idg_mean, theory_converged, not_converged.
std::vector<std::string> sweep_columns();
std::vector<double> sweep_row(const PointResult& p);
numerics::Table to_table(const SweepResult& r);  // sweep_columns(), one sweep_row per point
// The sidecar of the sweep's TSV: the fixed parameters, sizes, model, training options, the
// meaning of the columns and the timing.
nlohmann::ordered_json sweep_meta(const SweepResult& r);

}  // namespace icl::verify::softmax
