// run(CheckOptions): the block-by-block patch identity with its variants, float32 pass and negative
// controls (docs/patch.md §3-§8, §12).
#include <algorithm>
#include <chrono>

#include "numerics/error.hpp"
#include "numerics/seed.hpp"
#include "verify/patch/detail/experiment_common.hpp"
#include "verify/patch/experiments.hpp"

namespace icl::verify::patch {
namespace {

using detail::short_number;

// Elementwise max of per-layer differences (sizes may grow).
void merge_layers(std::vector<Diff>& acc, const std::vector<Diff>& d) {
  if (acc.size() < d.size()) acc.resize(d.size());
  for (std::size_t l = 0; l < d.size(); ++l) acc[l].merge(d[l]);
}

// The model of the negative controls when the given one cannot show them (docs/patch.md §8):
// Pre-LN residual (post-norm or parallel when the given blocks are), width 32 with an
// embedding, at least 4 blocks.
ModelConfig control_config(ModelConfig c) {
  if (!c.block.residual() || c.block.kind == BlockKind::Residual) c.block.kind = BlockKind::PreLn;
  if (!c.block.normalized()) c.block.norm = Norm::LayerNorm;
  if (!c.embed) {
    c.embed = true;
    c.width = 32;
  }
  c.layers = std::max(c.layers, 4);
  return c;
}

template <class S>
void accumulate(const StackCheck<S>& s, CheckResult& r) {
  r.diff.merge(s.diff);
  r.degenerate_anchors += s.degenerate;
  for (const auto& ri : s.ranks) {
    r.rank = std::max(r.rank, ri.rank);
    r.sigma2_over_sigma1 = std::max(r.sigma2_over_sigma1, ri.sigma2_over_sigma1);
  }
  for (const auto& ri : s.ranks_gate) {
    r.rank_gate = std::max(r.rank_gate, ri.rank);
    r.sigma2_over_sigma1_gate = std::max(r.sigma2_over_sigma1_gate, ri.sigma2_over_sigma1);
  }
  merge_layers(r.per_layer_max, s.per_layer);
}

}  // namespace

void CheckOptions::validate() const {
  detail::validate_common(model, context, 1, prompts, training);
  if (pos < -1 || pos > context)
    throw InvalidParams("pos", "must be in [0, context] (or -1: the query)");
  if (chunk_begin != -1 || chunk_end != -1) {
    if (chunk_begin < 0 || chunk_end < chunk_begin || chunk_end > context)
      throw InvalidParams("chunk", "B:E needs 0 <= B <= E <= context, got " +
                                       std::to_string(chunk_begin) + ":" + std::to_string(chunk_end));
  }
  if (!(tol > 0)) throw InvalidParams("tol", "must be > 0");
  if (patch_layers < -1) throw InvalidParams("patch_layers", "must be >= -1 (-1: all)");
}

CheckResult run(const CheckOptions& o, const numerics::Progress& progress) {
  o.validate();
  Weights<double> w = make_model(o.model, numerics::derive_seed(o.base_seed, "weights"));
  CheckResult r;
  r.options = o;
  r.training = pretrain(w, o.training, o.base_seed, o.context, progress);
  const ModelConfig& c = w.config;
  r.model = w;
  r.has_chunk = o.controls && o.chunk_begin >= 0;
  if (r.has_chunk && c.layers != 1)
    throw InvalidParams("chunk", "needs a one-block model (layers 1)");
  const int pos = o.position();
  const auto prompts = make_prompts(c.token_dim - 1, o.context, o.prompts,
                                    numerics::derive_seed(o.base_seed, "prompts"));
  const bool first_on_given = c.layers > 1, weight_on_given = c.block.residual();
  const ModelConfig cc = control_config(c);
  Weights<double> control;
  if (o.controls && (!first_on_given || !weight_on_given))
    control = init_weights(cc, {.seed = numerics::derive_seed(o.base_seed, "control-model")});
  const BlockKind ck = cc.block.kind;
  const std::string control_name =
      "control (" +
      std::string(ck == BlockKind::PostLn ? "post-norm" : ck == BlockKind::Parallel ? "parallel" : "Pre-LN") +
      ", 32 wide, " + std::to_string(cc.layers) + " layers)";
  r.first_block_only.given_model = first_on_given;
  r.first_block_only.model = first_on_given ? "given" : control_name;
  r.weight_only.given_model = weight_on_given;
  r.weight_only.model = weight_on_given ? "given" : control_name;
  r.has_norm_scale = o.controls && c.block.kind == BlockKind::PostLn;
  r.has_gate_only = o.controls && c.block.gated();
  r.gate_only.model = "given";
  const Weights<float> w32 = cast_weights<float>(w);
  double seconds = 0;
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    const Mat<double>& tok = prompts[k].tokens;
    const Mat<float> tok32 = tok.cast<float>();
    const auto t0 = std::chrono::steady_clock::now();
    if (o.precision == Precision::Double) {
      const auto s = stack_check(w, tok, pos, o.mode, o.patch_layers);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      accumulate(s, r);
      if (k == 0) r.per_layer = s.per_layer;
    } else {
      const auto s = stack_check(w32, tok32, pos, o.mode, o.patch_layers);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      accumulate(s, r);
      if (k == 0) r.per_layer = s.per_layer;
    }
    if (o.controls) {
      const auto s32 = stack_check(w32, tok32, pos, PatchMode::Full);
      r.float32.merge(s32.diff);
      merge_layers(r.per_layer_float32_max, s32.per_layer);
      const auto first = stack_check(first_on_given ? w : control, tok, pos, PatchMode::Full, 1);
      r.first_block_only.diff.merge(first.diff);
      merge_layers(r.per_layer_first_only_max, first.per_layer);
      r.bias_only.merge(stack_check(w, tok, pos, PatchMode::BiasOnly).diff);
      const auto bf = stack_check(w, tok, pos, PatchMode::BiasFree);
      r.bias_free.merge(bf.diff);
      for (const auto& ri : bf.ranks_last) r.rank_last = std::max(r.rank_last, ri.rank);
      if (r.has_norm_scale) {
        const auto ns = stack_check(w, tok, pos, PatchMode::NormScale);
        r.norm_scale.merge(ns.diff);
        r.degenerate_anchors += ns.degenerate;
      }
      if (r.has_gate_only)
        r.gate_only.diff.merge(stack_check(w, tok, pos, PatchMode::GateOnly).diff);
      if (r.has_chunk) {
        const auto ch = chunk_check(w, tok, o.chunk_begin, o.chunk_end, PatchMode::Full);
        r.chunk.merge(ch.diff);
        r.chunk_rank = std::max(r.chunk_rank, ch.rank.rank);
        if (ch.patch.status != PatchStatus::Ok) ++r.degenerate_anchors;
      }
      const auto wo = stack_check(weight_on_given ? w : control, tok, pos, PatchMode::WeightOnly);
      r.weight_only.diff.merge(wo.diff);
      merge_layers(r.per_layer_weight_only_max, wo.per_layer);
    }
    if (progress) progress(k + 1, prompts.size(), "prompt");
  }
  r.seconds_per_check = seconds / o.prompts;
  const bool pass = r.diff.max_rel <= o.tol && r.degenerate_anchors == 0 &&
                    r.bias_only.max_rel <= o.tol && r.bias_free.max_rel <= o.tol &&
                    r.chunk.max_rel <= o.tol && r.norm_scale.max_rel <= o.tol;
  r.status = pass ? numerics::Status::Converged : numerics::Status::CheckFailed;
  if (pass) {
    r.message = "identity holds: max_rel_diff " + short_number(r.diff.max_rel) + " <= tol " + short_number(o.tol);
  } else {
    r.message = "patch identity failed: max_rel_diff " + short_number(r.diff.max_rel);
    if (o.controls)
      r.message += ", bias-only " + short_number(r.bias_only.max_rel) + ", bias-free " +
                   short_number(r.bias_free.max_rel) +
                   (r.has_norm_scale ? ", norm-scale " + short_number(r.norm_scale.max_rel) : "") +
                   (r.has_chunk ? ", chunk " + short_number(r.chunk.max_rel) : "");
    r.message += " (tol " + short_number(o.tol) + "), degenerate anchors " +
                 std::to_string(r.degenerate_anchors);
  }
  return r;
}

}  // namespace icl::verify::patch
