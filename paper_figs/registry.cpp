// The registry of the figures: number, name, paper, description and data step of each.
#include <string>
#include <vector>

#include "paper_figs/figures.hpp"
#include "paper_figs/figures_extra.hpp"

namespace icl::paperfigs {
namespace {

constexpr const char* kLowRank = "low-rank";
constexpr const char* kSoftmax = "softmax";
constexpr const char* kDynamics = "implicit-dynamics";
constexpr const char* kBeyond = "beyond-the-papers";  // the registry has no groups: this says so

struct Row {
  const char* name;
  const char* paper;
  FigureStep* data;
  const char* description;
};

// The figures in number order (the number is the position).
constexpr Row kRows[] = {
    {"decomposition", kLowRank, fig_decomposition,
     "TM/IDG/ODG error against alpha and its algo/mem/struct decomposition (theory + simulation)"},
    {"order_params", kLowRank, fig_order_params,
     "order parameters m, q, mbar, qbar, m0, q0 against kappa (theory + simulation)"},
    {"test_context", kLowRank, fig_test_context,
     "errors against the test context alpha_test / alpha"},
    {"implicit_reg", kLowRank, fig_implicit_reg,
     "implicit regularization: effective ridge -z, qbarhat, qbar asymptotes; gradient-descent "
     "initialization spread"},
    {"phase", kLowRank, fig_phase,
     "phase transition at rho = kappa: errors against rho, (rho, kappa) diagram, trade-off"},
    {"spectrum", kLowRank, fig_spectrum,
     "eigenvalues of the empirical task covariance against Marchenko-Pastur with its atom"},
    {"softmax", kSoftmax, fig_softmax,
     "softmax attention: TM/IDG/ODG against rho for alpha 2, 4, 6 (with the linear theory and "
     "simulation)"},
    {"patch_loss", kDynamics, fig_patch_loss,
     "loss with context vs loss of the patched query-only model along training"},
    {"patch_layers", kDynamics, fig_patch_layers,
     "equivalence error per layer of the 10-layer Pre-LN model, float64 and float32"},
    {"patch_steps", kDynamics, fig_patch_steps,
     "implicit step norms against token index, attention vs RNN (log-log)"},
    {"patch_align", kDynamics, fig_patch_align,
     "alignment cos_F with explicit gradient updates, four protocols"},
    {"thought_patch", kDynamics, fig_thought_patch,
     "thought patch: train and held-out error against calibration size"},
    {"transition_alpha", kBeyond, fig_transition_alpha,
     "where the IDG transition sits at finite alpha: steepest point along rho for several "
     "kappa, approaching rho = kappa"},
    {"bayes_gap", kBeyond, fig_bayes_gap,
     "IDG/ODG error of linear attention against the Bayes-optimal predictor, against alpha"},
    {"optimal_ridge", kBeyond, fig_optimal_ridge,
     "the optimal ridge per protocol and the error it reaches, against alpha"},
    {"test_overlap", kBeyond, fig_test_overlap,
     "error against the train/test task overlap C, task-rich and task-poor (theory + "
     "simulation)"},
    {"patch_blocks", kDynamics, fig_patch_blocks,
     "equivalence error per layer for each block kind (pre/post-norm, parallel; LayerNorm, "
     "RMSNorm; GELU, SwiGLU, GeGLU), float64 and float32"},
    {"finite_dim", kBeyond, fig_finite_dim,
     "the finite-D prediction against simulations at D = 20-60 and the D -> infinity theory, "
     "paper's point, task-poor tau < 1 point and ridgeless minimum-norm point"},
    {"sensitivity", kBeyond, fig_sensitivity,
     "which parameter IDG is most sensitive to across the (rho, kappa) plane: the largest "
     "exact elasticity d ln IDG / d ln x"},
    {"cot", kBeyond, fig_cot,
     "test-time iteration: E_t against t (theory and simulations at two D) for the four "
     "behaviours, and the regimes in the (alpha, tau) plane with their two boundaries"},
    {"depth", kBeyond, fig_depth,
     "depth L against test-time steps: the optimal shared step, the per-layer envelope and the "
     "trained map applied L times (tau = 4, 8, infinity), noiseless and sigma = 0.5"},
    {"finite_dim_grid", kBeyond, fig_finite_dim_grid,
     "the finite-D prediction at every point of the verify grid, D = 20-80: the residual of the "
     "simulations after it against 1/D^2 with its error bar, and after the D -> infinity theory"},
};

std::vector<Figure> make_registry() {
  std::vector<Figure> f;
  for (const Row& r : kRows)
    f.push_back(Figure{static_cast<int>(f.size()) + 1, r.name, r.paper, r.description, r.data});
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
