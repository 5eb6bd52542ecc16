// Data steps of the multi-step figures (beyond the papers, docs/multistep.md,
// docs/multistep_depth.md): figure 20, the test-time iteration's E_t against t with simulations
// at two D and its regimes in the (alpha, tau) plane; figure 21, depth against test-time steps.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "numerics/seed.hpp"
#include "paper_figs/figures_extra.hpp"
#include "theory/cot.hpp"
#include "theory/depth.hpp"
#include "theory/sweep.hpp"
#include "verify/multistep/cot_simulator.hpp"

namespace icl::paperfigs {
namespace {

nlohmann::json cot_meta(const Settings& s, int figure, const std::string& what) {
  return {{"figure", figure},
          {"figure_command", s.command},
          {"mode", s.quick ? "quick" : "full"},
          {"what", what},
          {"base_seed", s.base_seed}};
}

}  // namespace

FigureData fig_cot(const Settings& s, const numerics::Progress& progress) {
  // Four curves, one per behaviour (docs/multistep.md §4): convergent to the null-space limit
  // (alpha < 1), convergent to 0, oscillatory divergence, monotone divergence.
  struct Curve {
    const char* label;
    theory::CotParams p;
  };
  // sigma = 0.5, where both boundaries of the (alpha, tau) plane matter (tau_monotone = 2.25
  // above tau_c for alpha < 1).
  const std::vector<Curve> curves = {{"convergent, alpha < 1", {0.5, 4.0, 0.5, 0}},
                                     {"convergent, alpha > 1", {2.0, 4.0, 0.5, 0}},
                                     {"oscillatory", {3.0, 1.5, 0.5, 0}},
                                     {"monotone", {0.5, 2.15, 0.5, 0}}};
  const int steps = s.quick ? 15 : 40;
  const std::vector<int> dims = s.quick ? std::vector<int>{20, 40} : std::vector<int>{50, 200};
  FigureData out;
  DataTable th, sim;
  th.stem = "cot_dynamics";
  th.table.columns = {"curve", "alpha", "tau", "sigma", "t", "error", "error_tau_infinity",
                      "converged"};
  sim.stem = "cot_dynamics_sim";
  sim.table.columns = {"curve", "dim", "t", "mean", "sem", "median"};
  nlohmann::json labels = nlohmann::json::array(), errors = nlohmann::json::array();
  std::size_t done = 0;
  const std::size_t total = curves.size() * dims.size();
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const Curve& c = curves[k];
    labels.push_back({{"curve", k}, {"label", c.label}, {"alpha", c.p.alpha}, {"tau", c.p.tau},
                      {"sigma", c.p.sigma}});
    theory::CotOptions o;
    o.steps = steps;
    const theory::CotResult r = theory::run(c.p, o);
    if (!r.converged()) ++out.failed_theory_points;
    for (int t = 0; t <= steps; ++t)
      th.table.rows.push_back({double(k), c.p.alpha, c.p.tau, c.p.sigma, double(t),
                               r.error[static_cast<std::size_t>(t)],
                               r.error_tau_infinity[static_cast<std::size_t>(t)],
                               r.converged() ? 1.0 : 0.0});
    for (int dim : dims) {
      verify::multistep::CotSimOptions so;
      so.dim = dim;
      so.seeds = s.quick ? 3 : 10;
      so.test_tasks = s.quick ? 200 : 1000;
      so.steps = steps;
      so.threads = s.threads;
      so.seed = numerics::derive_seed(s.base_seed, "cot_dynamics", k * 1000 + std::size_t(dim));
      const auto r_sim = verify::multistep::simulate(c.p, so);
      if (!r_sim.converged()) errors.push_back({{"curve", k}, {"dim", dim}, {"message", r_sim.message}});
      for (int t = 0; t <= steps; ++t) {
        const auto i = static_cast<std::size_t>(t);
        sim.table.rows.push_back({double(k), double(dim), double(t), r_sim.error.mean[i],
                                  r_sim.error.sem[i], r_sim.error.median[i]});
      }
      report(progress, "cot simulation", ++done, total);
    }
  }
  th.meta = cot_meta(s, 20, "theory");
  th.meta["curves"] = labels;
  th.meta["failed_theory_points"] = out.failed_theory_points;
  sim.meta = cot_meta(s, 20, "simulation");
  sim.meta["curves"] = labels;
  sim.meta["simulation"] = {{"dims", dims}, {"seeds", s.quick ? 3 : 10},
                            {"test_tasks", s.quick ? 200 : 1000}};
  sim.meta["simulation_errors"] = errors;
  out.tables.push_back(std::move(th));
  out.tables.push_back(std::move(sim));

  // The regimes in the (alpha, tau) plane at sigma = 0.5: E_T on a grid, and the boundaries.
  const auto alphas = theory::linspace(0.1, 4.0, s.quick ? 8 : 40);
  const auto taus = theory::linspace(1.05, 5.0, s.quick ? 8 : 40);
  theory::CotOptions po;
  po.steps = s.quick ? 15 : 40;
  const theory::CotParams base{1.0, 2.0, 0.5, 0};
  const auto g = theory::cot_phase_grid(base, "alpha", alphas, "tau", taus, po, s.threads);
  DataTable ph;
  ph.stem = "cot_regimes";
  ph.table = theory::cot_phase_table("alpha", alphas, "tau", taus, g);
  for (const auto& r : g)
    if (!r.converged()) ++out.failed_theory_points;
  ph.meta = cot_meta(s, 20, "theory grid");
  ph.meta["params"] = theory::to_json(base);
  ph.meta["steps"] = po.steps;
  out.tables.push_back(std::move(ph));
  DataTable b;
  b.stem = "cot_boundaries";
  b.table.columns = {"alpha", "tau_c", "tau_monotone"};
  for (double a : theory::linspace(0.05, 4.0, 200))
    b.table.rows.push_back({a, theory::cot_tau_c(a, base.sigma), theory::cot_tau_monotone(a, base.sigma)});
  b.meta = cot_meta(s, 20, "boundaries");
  b.meta["params"] = theory::to_json(base);
  out.tables.push_back(std::move(b));
  return out;
}

}  // namespace icl::paperfigs

namespace icl::paperfigs {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

FigureData fig_depth(const Settings& s, const numerics::Progress& progress) {
  // Depth error against L: the optimal shared step and the per-layer envelope at sigma = 0 and
  // 0.5; next to them, noiseless, the trained map applied L times at test time (tau = 4, 8 and
  // infinity): shared depth equals test-time at tau = infinity there. With sigma > 0 the two
  // models differ in their test prompts (noisy for depth, noise-free for the test-time iteration,
  // docs/multistep.md §1), so the test-time columns are NaN.
  const double alpha = 2.0;
  const int max_layers = s.quick ? 8 : 32;
  FigureData out;
  DataTable t;
  t.stem = "depth";
  t.table.columns = {"sigma", "layers", "shared", "gamma_opt", "per_layer", "realizable",
                     "test_time_inf", "test_time_tau4", "test_time_tau8"};
  theory::CotOptions co;
  co.steps = max_layers;
  const auto tt4 = theory::run(theory::CotParams{alpha, 4.0, 0.0, 0}, co);
  const auto tt8 = theory::run(theory::CotParams{alpha, 8.0, 0.0, 0}, co);
  if (!tt4.converged()) ++out.failed_theory_points;
  if (!tt8.converged()) ++out.failed_theory_points;
  std::size_t done = 0;
  for (double sigma : {0.0, 0.5}) {
    for (int layers = 1; layers <= max_layers; ++layers) {
      theory::DepthParams d;
      d.alpha = alpha;
      d.sigma = sigma;
      d.layers = layers;
      theory::DepthOptions o;
      o.by_depth = false;
      const auto r = theory::run(d, o);
      if (!r.converged()) ++out.failed_theory_points;
      const auto l = static_cast<std::size_t>(layers);
      const bool noiseless = sigma == 0;
      t.table.rows.push_back({sigma, double(layers), r.error, r.gamma_opt, r.per_layer_error,
                              r.per_layer_realizable ? 1.0 : 0.0,
                              noiseless ? tt4.error_tau_infinity[l] : kNaN,
                              noiseless ? tt4.error[l] : kNaN, noiseless ? tt8.error[l] : kNaN});
      report(progress, "depth", ++done, 2 * static_cast<std::size_t>(max_layers));
    }
  }
  t.meta = {{"figure", 21}, {"figure_command", s.command}, {"mode", s.quick ? "quick" : "full"},
            {"what", "theory"}, {"alpha", alpha}, {"max_layers", max_layers}};
  out.tables.push_back(std::move(t));
  return out;
}

}  // namespace icl::paperfigs
