// The exact rank-1 patch and its consequences (docs/patch.md §3-§9, §12). The experiments built
// on it (check, dynamics, thought, align, train) are in verify/patch/experiments.hpp.
#pragma once
#include <string>
#include <vector>

#include "verify/patch/model.hpp"

namespace icl::verify::patch {

enum class PatchStatus {
  Ok,                // patch computed
  DegenerateAnchor,  // ||a|| below the relative threshold: no patch (dW = 0), identity not claimed
};
std::string to_string(PatchStatus s);

// The relative threshold below which an anchor is degenerate (docs/patch.md §3).
inline constexpr double kAnchorTol = 1e-8;

// Rank-1 patch of a matrix W (docs/patch.md §3): for the MLP input u_full (full context) and the anchor
// a = u_red (reduced context),
//     dW = (W delta) a^T / ||a||^2,   delta = u_full - a,     so (W + dW) a = W u_full.
// The bias-only alternative is db = W delta. Guard: status DegenerateAnchor when
// ||a|| <= anchor_tol * max(||u_full||, ||a||) (or ||a|| == 0).
template <class S>
struct Rank1Patch {
  Mat<S> dW;
  Vec<S> db;           // bias-only variant W delta
  S anchor_norm = 0;   // ||a||
  PatchStatus status = PatchStatus::Ok;
};
template <class S>
Rank1Patch<S> rank1_patch(const Mat<S>& W, const Vec<S>& u_full, const Vec<S>& anchor,
                          double anchor_tol = kAnchorTol);

enum class PatchMode {  // docs/patch.md §4
  Full,        // dW on W1 and, for residual blocks, db2 = H_C - H_0 on the last MLP bias
  BiasOnly,    // db1 = W1 delta on the first MLP bias (+ db2 for residual blocks)
  BiasFree,    // dW on W1 and, for residual blocks, dW2 = (H_C - H_0) s^T/||s||^2 on the last
               // MLP matrix (s = input of the last dense layer after the dW patch)
  WeightOnly,  // dW only (a negative control for residual blocks: NOT exact)
  NormScale,   // post-norm blocks: dW on W1 (and W_g) and, instead of db2, an elementwise patch of
               // the scale g2 of the norm after the residual add (docs/patch.md §16): bias-free
  GateOnly,    // gated MLPs: dW on the gate matrix W_g only, not on W1 (+ db2 as Full): a
               // negative control, NOT exact
};
std::string to_string(PatchMode m);
PatchMode patch_mode_from_string(const std::string& s);  // InvalidParams("mode") if unknown

// Patch of one block so that block(reduced)_red_pos equals block(full)_pos (docs/patch.md §3-§6,
// §16):
//   u_C = MLP input at `pos` of the full sequence, u_0 = MLP input at `red_pos` of the reduced,
//   dW = W1 (u_C - u_0) u_0^T / ||u_0||^2 (gated MLPs: the same on W_g, same anchor);
//   for residual blocks db2 = H_C - H_0 (the stream gap; parallel blocks: (Z + A)_C - (Z + A)_0).
template <class S>
struct BlockPatch {
  Mat<S> dW1;   // first MLP matrix (the up matrix of a gated MLP)
  Mat<S> db1;   // first MLP bias (BiasOnly)
  Mat<S> dWg;   // gate matrix (gated MLPs; empty otherwise)
  Mat<S> dbg;   // gate bias (BiasOnly; gated MLPs)
  Mat<S> dWL;   // last MLP matrix (BiasFree on residual blocks)
  Mat<S> dbL;   // last MLP bias
  Mat<S> dg2;   // scale of the norm after the residual add (NormScale; post-norm blocks)
  S anchor_norm = 0;
  PatchStatus status = PatchStatus::Ok;
};
template <class S>
BlockPatch<S> block_patch(const ModelConfig& c, const BlockWeights<S>& w, const Mat<S>& z_full,
                          int pos, const Mat<S>& z_red, int red_pos, PatchMode mode,
                          double anchor_tol = kAnchorTol);
// The same from the forward caches of the block on the full and the reduced sequence (saves the
// two forward passes when they are already known, as in stack_check).
template <class S>
BlockPatch<S> block_patch(const ModelConfig& c, const BlockWeights<S>& w, const BlockCache<S>& full,
                          int pos, const BlockCache<S>& red, int red_pos, PatchMode mode,
                          double anchor_tol = kAnchorTol);
// W + patch (shapes checked).
template <class S>
BlockWeights<S> apply_patch(const BlockWeights<S>& w, const BlockPatch<S>& p);

// Differences between two outputs: max_abs = ||a - b||_inf, max_rel = max_abs / ||a||_inf.
struct Diff {
  double max_abs = 0;
  double max_rel = 0;
  void merge(const Diff& o);
};
template <class S>
Diff compare(const Mat<S>& reference, const Mat<S>& other);

// Numerical rank of a matrix (docs/patch.md §12): number of singular values > rel_tol * sigma_max; also the ratio
// sigma_2 / sigma_1 (0 for rank <= 1 matrices in exact arithmetic).
struct RankInfo {
  int rank = 0;
  double sigma1 = 0;
  double sigma2_over_sigma1 = 0;
};
template <class S>
RankInfo numerical_rank(const Mat<S>& m, double rel_tol = 1e-10);

// ---- one-block chunk patch (docs/patch.md §3) ------------------------------------------------
// Remove the context chunk [chunk_begin, chunk_end) of `tokens` (query = last column, never
// removed), patch block 0 of a ONE-block model, and compare the query outputs:
//   model(tokens)_query  vs  model_{W + dW}(tokens \ chunk)_query.
template <class S>
struct ChunkCheck {
  Diff diff;
  RankInfo rank;
  BlockPatch<S> patch;
  Mat<S> y_full, y_patched;
};
template <class S>
ChunkCheck<S> chunk_check(const Weights<S>& w, const Mat<S>& tokens, int chunk_begin,
                          int chunk_end, PatchMode mode = PatchMode::Full);

// ---- stacks (docs/patch.md §7, negative controls §8) -------------------------------------------
// Full-context pass on `tokens`; query-only pass on the query token (last column), patching
// block l from the full sequence entering it (position `pos`) and the patched query-only
// representation entering it. `patch_layers` = number of leading blocks patched (-1: all;
// 1: first block only, the negative control). Compares the model output at `pos` with the
// query-only output, and the representation after every block.
template <class S>
struct StackCheck {
  Diff diff;                       // final output
  std::vector<Diff> per_layer;     // representation after block l
  std::vector<RankInfo> ranks;     // rank of dW1 per patched block
  std::vector<RankInfo> ranks_gate;  // rank of dWg per patched block (gated MLPs)
  std::vector<RankInfo> ranks_last;  // rank of dWL per patched block (BiasFree)
  std::vector<BlockPatch<S>> patches;
  Mat<S> y_full, y_patched;
  int degenerate = 0;              // blocks whose anchor was degenerate
};
template <class S>
StackCheck<S> stack_check(const Weights<S>& w, const Mat<S>& tokens, int pos, PatchMode mode,
                          int patch_layers = -1);

// ---- implicit dynamics (docs/patch.md §9) -----------------------------------------------------
// One plain block (no residual). Prefix outputs A_i = A(c_1..c_i, x), A_0 = A(x),
// dW_i = W (A_i - A_0) A_0^T / ||A_0||^2. Checks:
//   prefix:  T_{W + dW_i}(x) = T_W(c_1..c_i, x) for every i        (max rel diff)
//   GD:      dW_{i+1} = dW_i - h G_i, h = 1/||A_0||^2, G_i = W (A_i - A_{i+1}) A_0^T
//            computed recursively from dW_0 = 0, against the closed form (max rel diff)
//   steps:   s_i = ||dW_i - dW_{i-1}||_F = ||W (A_i - A_{i-1})|| / ||A_0||, i = 1..n
//   slope:   least-squares slope of log s_i vs log i over i in [fit_from, n].
struct ImplicitDynamics {
  std::vector<double> steps;   // s_1..s_n
  double prefix_max_rel = 0;
  double gd_max_rel = 0;
  double slope = 0, intercept = 0;
  int fit_from = 0;
};
ImplicitDynamics implicit_dynamics(const Weights<double>& w, const Mat<double>& tokens,
                                 int fit_from = 0 /* 0: max(2, n/8) */);
// Least-squares fit log y = intercept + slope log x over the given points (y > 0).
std::pair<double, double> loglog_fit(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace icl::verify::patch
