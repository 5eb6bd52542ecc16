// The serializers of verify/patch, beside its types: the JSON layouts of `icl patch ... --json`
// (and of the figure sidecars and the Python results), the text reports of `icl patch ...`
// without --json, and the TSV tables of the commands that write one (--out).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "numerics/table.hpp"
#include "verify/patch/experiments.hpp"

namespace icl::verify::patch {

using Json = nlohmann::ordered_json;

// {token_dim, embed, width, layers, kind, heads, head_dim, causal, mlp_hidden, mlp_depth, act,
//  residual, layernorm, parameters, block, norm, mlp, gated}: act, residual, layernorm and gated
//  are derived from the block (the keys of the layouts before Block, kept).
Json to_json(const ModelConfig& c);
Json to_json(const Diff& d);              // {max_abs_diff, max_rel_diff}
Json to_json(const TrainResult& r);       // {status, message, steps, ..., log: [...]}
Json to_json(const CheckResult& r);
Json to_json(const DynamicsMeasure& m);
Json to_json(const DynamicsResult& r);
Json to_json(const ThoughtResult& r);
// {protocol, x_name, x, summary{mean, sem, count}, summary_mismatched, summary_random,
//  [left, right: per-token protocols], cos_mean, cos_sem, mismatched_*, random_*, cos_per_prompt}
Json to_json(const AlignCurve& c);
Json to_json(const AlignResult& r);       // {..., sgd_lr, trained, random_control, protocols: [...]}
Json to_json(const TrainRunResult& r);

// The text reports of `icl patch check|dynamics|thought|align|train` (without --json).
std::string to_text(const CheckResult& r);
std::string to_text(const DynamicsResult& r);
std::string to_text(const ThoughtResult& r);
std::string to_text(const AlignResult& r);
std::string to_text(const TrainRunResult& r);

// The tables (numerics::Table) of --out and of the Python results.
numerics::Table to_table(const DynamicsResult& r);  // i, step_attention, step_rnn[, ..._trained]
numerics::Table to_table(const ThoughtResult& r);   // prompt, m, train_err, ... (per prompt)
// protocol (0 fullbatch, 1 online, 2 per-token, 3 per-token-context: AlignProtocol), x (SGD
// steps or example i), cos_mean, cos_sem, mismatched_mean, mismatched_sem, random_mean, random_sem
numerics::Table to_table(const AlignResult& r);
numerics::Table to_table(const TrainResult& r);     // step, train_loss, eval_loss, ...

}  // namespace icl::verify::patch
