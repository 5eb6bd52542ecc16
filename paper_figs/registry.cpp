// The registry of the figures: number, name, paper, description and data step of each.
#include <string>
#include <utility>
#include <vector>

#include "paper_figs/figures.hpp"
#include "paper_figs/figures_extra.hpp"

namespace icl::paperfigs {
namespace {

std::vector<Figure> make_registry() {
  std::vector<Figure> f;
  auto add = [&](int number, std::string name, std::string paper, std::string description,
                 DataStep data) {
    f.push_back(Figure{number, std::move(name), std::move(paper), std::move(description),
                       std::move(data)});
  };
  add(1, "decomposition", "low-rank",
      "TM/IDG/ODG error against alpha and its algo/mem/struct decomposition (theory + simulation)",
      fig_decomposition);
  add(2, "order_params", "low-rank",
      "order parameters m, q, mbar, qbar, m0, q0 against kappa (theory + simulation)",
      fig_order_params);
  add(3, "test_context", "low-rank", "errors against the test context alpha_test / alpha",
      fig_test_context);
  add(4, "implicit_reg", "low-rank",
      "implicit regularization: effective ridge -z, qbarhat, qbar asymptotes; gradient-descent "
      "initialization spread",
      fig_implicit_reg);
  add(5, "phase", "low-rank",
      "phase transition at rho = kappa: errors against rho, (rho, kappa) diagram, trade-off",
      fig_phase);
  add(6, "spectrum", "low-rank",
      "eigenvalues of the empirical task covariance against Marchenko-Pastur with its atom",
      fig_spectrum);
  add(7, "softmax", "softmax",
      "softmax attention: TM/IDG/ODG against rho for alpha 2, 4, 6 (with the linear theory and "
      "simulation)",
      fig_softmax);
  add(8, "patch_loss", "implicit-dynamics",
      "loss with context vs loss of the patched query-only model along training", fig_patch_loss);
  add(9, "patch_layers", "implicit-dynamics",
      "equivalence error per layer of the 10-layer Pre-LN model, float64 and float32",
      fig_patch_layers);
  add(10, "patch_steps", "implicit-dynamics",
      "implicit step norms against token index, attention vs RNN (log-log)", fig_patch_steps);
  add(11, "patch_align", "implicit-dynamics", "alignment cos_F with explicit gradient updates, four protocols",
      fig_patch_align);
  add(12, "thought_patch", "implicit-dynamics",
      "thought patch: train and held-out error against calibration size", fig_thought_patch);
  // Beyond the papers (the registry has no groups: the paper field says so).
  add(13, "transition_alpha", "beyond-the-papers",
      "where the IDG transition sits at finite alpha: steepest point along rho for several "
      "kappa, approaching rho = kappa",
      fig_transition_alpha);
  add(14, "bayes_gap", "beyond-the-papers",
      "IDG/ODG error of linear attention against the Bayes-optimal predictor, against alpha",
      fig_bayes_gap);
  add(15, "optimal_ridge", "beyond-the-papers",
      "the optimal ridge per protocol and the error it reaches, against alpha", fig_optimal_ridge);
  add(16, "test_overlap", "beyond-the-papers",
      "error against the train/test task overlap C, task-rich and task-poor (theory + "
      "simulation)",
      fig_test_overlap);
  add(17, "patch_blocks", "implicit-dynamics",
      "equivalence error per layer for each block kind (pre/post-norm, parallel; LayerNorm, "
      "RMSNorm; GELU, SwiGLU, GeGLU), float64 and float32",
      fig_patch_blocks);
  add(18, "finite_dim", "beyond-the-papers",
      "the finite-D prediction against simulations at D = 20-60 and the D -> infinity theory, "
      "paper's point and task-poor tau < 1 point",
      fig_finite_dim);
  return f;
}

}  // namespace

const std::vector<Figure>& registry() {
  static const std::vector<Figure> r = make_registry();
  return r;
}

const Figure* find_figure(const std::string& name_or_number) {
  for (const auto& f : registry())
    if (f.name == name_or_number || std::to_string(f.number) == name_or_number) return &f;
  return nullptr;
}

}  // namespace icl::paperfigs
