// Alignment of the implicit patch with explicit gradient updates on the same context examples,
// under four protocols (docs/patch.md §11). The experiment entry (AlignOptions, run,
// AlignResult) is in verify/patch/experiments.hpp; this header holds the per-model kernels.
//
// All four compare matrices on W1 (the first MLP matrix of block 0) of a one-block model.
// "Example i" is the context token c_i = (x_i, y_i); its explicit loss is
//     l_i(W1') = (pred_{W1'}((x_i, 0)) - y_i)^2,
// the query-only model fed the example's input as the one-token sequence (x_i, 0), the
// prediction being the last output coordinate. dW(C_i) is the Full patch of block 0 for the
// prefix C_i = (c_1..c_i) at the prompt's query (docs/patch.md §3, §9), dW(C_0) = 0.
//   fullbatch: dW(C) against W1(k) - W1 after k full-batch gradient steps on (1/n) sum_i l_i.
//   online:    dW(C_i) against W1(i) - W1, W1(i) = W1(i-1) - lr grad l_i(W1(i-1)), i = 1..n
//              (one example per step, in context order).
//   per-token: the implicit step dW(C_i) - dW(C_{i-1}) against -grad l_i at the point the
//              implicit trajectory has reached, the query-only model patched by P(C_{i-1})
//              (W1 + dW(C_{i-1}), plus the last-bias patch for residual blocks).
//   per-token-context: the same implicit step against -grad of the in-context loss of example i,
//              (T_W(c_1..c_{i-1}, (x_i, 0))_pred - y_i)^2 at the unpatched W1: the next-example
//              loss the model is trained on, with the preceding examples as its context.
#pragma once
#include <string>
#include <vector>

#include "numerics/statistics.hpp"
#include "verify/patch/model.hpp"
#include "verify/patch/train.hpp"

namespace icl::verify::patch {

enum class AlignProtocol { FullBatch, Online, PerToken, PerTokenContext };
// "fullbatch", "online", "per-token", "per-token-context"
std::string to_string(AlignProtocol p);
// Throws icl::InvalidParams("protocol", ...) for an unknown name.
AlignProtocol align_protocol_from_string(const std::string& s);
std::vector<AlignProtocol> all_align_protocols();
// The protocols named by `names`, in order; "all" stands for all_align_protocols().
// InvalidParams("protocol", ...) for another name.
std::vector<AlignProtocol> align_protocols_from_strings(const std::vector<std::string>& names);

// cos_F(a, b) = <a, b>_F / (|a|_F |b|_F); 0 if either is zero.
double cos_frobenius(const Mat<double>& a, const Mat<double>& b);

// The matrix pairs of one protocol on one prompt, one per point x[j] of the protocol's axis
// (fullbatch: the SGD step counts `steps`; the others: i = 1..n).
struct AlignPairs {
  std::vector<Mat<double>> implicit, explicit_;
  // per-token protocols only: both matrices are rank 1 (implicit: W1 (u_i - u_{i-1}) u_0^T /
  // |u_0|^2, explicit: -delta_i a_i^T with a_i the MLP input of the example's loss), so
  // cos_F = left * right with
  //   left = cos(W1 (u_i - u_{i-1}), -delta_i)  (hidden space),  right = cos(u_0, a_i)  (input).
  // Empty for the other protocols.
  std::vector<double> left, right;
};
AlignPairs align_pairs(const Weights<double>& w, const Prompt& prompt, AlignProtocol protocol,
                       const std::vector<int>& steps, double lr);

// One protocol over prompts. `same`, `mismatched` (dW_impl of prompt p against the explicit
// update of prompt p + 1, cyclically) and `random` (the same protocol on random weights, filled
// by run(AlignOptions)) are estimates over prompts at each x[j]. The summaries average each
// prompt's curve over j, then estimate over prompts.
struct AlignCurve {
  AlignProtocol protocol = AlignProtocol::FullBatch;
  std::string x_name;                       // "sgd_steps" or "example"
  std::vector<int> x;
  std::vector<std::vector<double>> cos;     // [prompt][j]
  std::vector<numerics::Estimate> same, mismatched, random;
  numerics::Estimate summary, summary_mismatched, summary_random;
  numerics::Estimate left, right;           // per-token protocols only (per-prompt means over i)
};
AlignCurve align_curve(const Weights<double>& w, const std::vector<Prompt>& prompts,
                       AlignProtocol protocol, const std::vector<int>& steps, double lr);

}  // namespace icl::verify::patch
