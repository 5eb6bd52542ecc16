// One serializer per result of verify/patch: the JSON layouts of `icl patch ... --json` (and of
// the figure sidecars), and the TSV columns of the commands that write a table.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/patch/experiments.hpp"

namespace icl::verify::patch {

using Json = nlohmann::ordered_json;

// {token_dim, embed, width, layers, kind, heads, head_dim, causal, mlp_hidden, mlp_depth, act,
//  residual, layernorm, parameters}
Json to_json(const ModelConfig& c);
Json to_json(const Diff& d);              // {max_abs_diff, max_rel_diff}
Json to_json(const TrainResult& r);       // {status, message, steps, ..., log: [...]}
Json to_json(const CheckResult& r);
Json to_json(const DynamicsMeasure& m);
Json to_json(const DynamicsResult& r);
Json to_json(const ThoughtResult& r);
Json to_json(const AlignResult& r);
Json to_json(const TrainRunResult& r);

// A table: one header row of column names, numeric rows.
struct TableData {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
};
TableData to_table(const DynamicsResult& r);  // i, step_attention, step_rnn[, ..._trained]
TableData to_table(const ThoughtResult& r);   // prompt, m, train_err, ... (per prompt)
TableData to_table(const AlignResult& r);     // sgd_steps, cos_mean, cos_sem, cos_mismatched_mean
TableData to_table(const TrainResult& r);     // step, train_loss, eval_loss, ...

}  // namespace icl::verify::patch
