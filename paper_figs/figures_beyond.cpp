// Data steps of the "beyond the papers" figures: the Bayes-optimal gap (docs/errors_phases.md §17),
// the optimal ridge per protocol (§18), the error against the train/test task overlap
// (docs/general_covariance.md §20) and the finite-D prediction against simulations
// (docs/finite_dim.md §21).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "numerics/seed.hpp"
#include "paper_figs/figures_extra.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "theory/optimize.hpp"
#include "theory/quantity.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"
#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::paperfigs {

using theory::Params;
using theory::Solution;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The theory along `name` = values as the `icl sweep` table (one serializer: solution_columns),
// after a first column with the varied value.
DataTable sweep_table(const std::string& stem, const Params& base, const std::string& name,
                      const std::vector<double>& values, std::size_t& failed) {
  const std::vector<Solution> sols = theory::sweep(base, name, values, {});
  const bool shift = theory::any_test_shift(sols);
  DataTable t;
  t.stem = stem;
  t.table.columns = {name};
  for (const auto& c : theory::solution_columns(shift)) t.table.columns.push_back(c);
  t.table.columns.push_back("bayes_idg");
  t.table.columns.push_back("bayes_odg");
  for (std::size_t i = 0; i < sols.size(); ++i) {
    std::vector<double> row = {values[i]};
    const auto r = theory::solution_row(sols[i], shift);
    row.insert(row.end(), r.begin(), r.end());
    row.push_back(sols[i].bayes_optimal.idg);
    row.push_back(sols[i].bayes_optimal.odg);
    t.table.rows.push_back(std::move(row));
    failed += !sols[i].converged();
  }
  return t;
}

}  // namespace

// ---- figure 14: the gap to the Bayes-optimal predictor -----------------------------------------

FigureData fig_bayes_gap(const Settings& s, const numerics::Progress& progress) {
  // The paper's decomposition point; the test prompt has the pretraining context length
  // (alpha_test = alpha) and label noise sigma_test = sigma, so that the baseline sees the same
  // kind of prompt as the model and the comparison is between predictors, not prompts.
  Params base = decomposition_params();
  base.sigma_test = base.sigma;
  FigureData out;
  const auto alphas = theory::logspace(0.1, 20.0, s.quick ? 16 : 60);
  DataTable t = sweep_table("bayes_gap", base, "alpha", alphas, out.failed_theory_points);
  t.meta = table_meta(s, 14, base, "theory");
  t.meta["theory"] = {{"method", "saddle"}, {"vary", "alpha"}, {"points", alphas.size()},
                      {"baseline", "Bayes-optimal from the test prompt alone, docs/errors_phases.md §17"}};
  out.tables.push_back(std::move(t));
  report(progress, "bayes_gap theory", 1, 1);
  return out;
}

// ---- figure 15: the optimal ridge per protocol --------------------------------------------------

FigureData fig_optimal_ridge(const Settings& s, const numerics::Progress& progress) {
  const Params base = decomposition_params();
  const auto alphas = theory::logspace(0.25, 16.0, s.quick ? 8 : 30);
  FigureData out;
  DataTable t;
  t.stem = "optimal_ridge";
  t.table.columns = {"alpha"};
  const theory::Objective objectives[3] = {theory::Objective::Tm, theory::Objective::Idg,
                                           theory::Objective::Odg};
  for (const theory::Objective o : objectives)
    for (const char* c : {"_converged", "_lambda_opt", "_min", "_ridgeless"})
      t.table.columns.push_back(theory::to_string(o) + std::string(c));
  std::size_t done = 0;
  for (double alpha : alphas) {
    Params p = base;
    p.alpha = alpha;
    // lambda = 0 is valid here (tau = 2.25 > 1): the ridgeless error to compare with.
    const Solution ridgeless = theory::solve(p);
    std::vector<double> row = {alpha};
    for (const theory::Objective objective : objectives) {
      const theory::OptimizeOptions o{.objective = objective, .over = "lambda", .lo = 1e-5,
                                      .hi = 100.0};
      const theory::OptimizeResult r = theory::run(p, o);
      const double e0 = theory::find_quantity(theory::to_string(o.objective)).value(ridgeless);
      row.insert(row.end(), {r.converged() ? 1.0 : 0.0, r.argmin, r.minimum, e0});
      out.failed_theory_points += !r.converged();
    }
    t.table.rows.push_back(std::move(row));
    report(progress, "optimal_ridge", ++done, alphas.size());
  }
  t.meta = table_meta(s, 15, base, "theory");
  t.meta["theory"] = {{"method", "saddle"},
                      {"vary", "alpha"},
                      {"optimize", "lambda in [1e-5, 100], scan + Brent (docs/errors_phases.md §18)"}};
  out.tables.push_back(std::move(t));
  return out;
}

// ---- figure 16: the error against the train/test task overlap -----------------------------------

FigureData fig_test_overlap(const Settings& s, const numerics::Progress& progress) {
  // Two points of the verify grid's kind: the paper's point (task-rich) and a task-poor one.
  Params rich = decomposition_params();
  Params poor = rich;
  poor.kappa = 0.5;
  FigureData out;
  const auto overlaps = theory::linspace(0.0, 1.0, s.quick ? 11 : 51);
  const verify::lowrank::SimOptions sim_base = [&] {
    verify::lowrank::SimOptions o;
    o.dim = s.quick ? 20 : 40;
    o.seeds = s.quick ? 2 : 8;
    o.threads = s.threads;
    return o;
  }();
  const std::vector<double> sim_overlaps = s.quick ? std::vector<double>{0.0, 0.5, 1.0}
                                                   : std::vector<double>{0.0, 0.2, 0.4, 0.6, 0.8, 1.0};
  std::size_t done = 0;
  const std::size_t total = 2 * sim_overlaps.size();
  for (const auto& [label, base] : {std::pair<std::string, Params>{"rich", rich},
                                    std::pair<std::string, Params>{"poor", poor}}) {
    DataTable th = sweep_table("test_overlap_" + label, base, "test_overlap", overlaps,
                               out.failed_theory_points);
    th.meta = table_meta(s, 16, base, "theory");
    th.meta["theory"] = {{"method", "saddle"}, {"vary", "test_overlap"}, {"points", overlaps.size()}};
    out.tables.push_back(std::move(th));

    // One pretraining draw per seed for every overlap (the same derived base seed at every C):
    // each curve is one set of trained models evaluated on differently shifted test tasks.
    DataTable sim;
    sim.stem = "test_overlap_" + label + "_sim";
    sim.table.columns = {"test_overlap", "sim_shift", "sim_shift_sem", "sim_idg", "sim_idg_sem",
                         "sim_odg", "sim_odg_sem"};
    verify::lowrank::SimOptions o = sim_base;
    o.base_seed = numerics::derive_seed(s.base_seed, sim.stem);
    nlohmann::json errors = nlohmann::json::array();
    for (double c : sim_overlaps) {
      Params p = base;
      p.test_overlap = c;
      const auto r = verify::lowrank::run(p, o);
      if (!r.converged() || !r.shift) {
        errors.push_back({{"test_overlap", c}, {"message", r.message}});
        sim.table.rows.push_back({c, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
      } else {
        sim.table.rows.push_back({c, r.shift->mean, r.shift->sem, r.error.idg.mean, r.error.idg.sem,
                                  r.error.odg.mean, r.error.odg.sem});
      }
      report(progress, "test_overlap simulation", ++done, total);
    }
    sim.meta = table_meta(s, 16, base, "simulation");
    sim.meta["simulation"] = {{"dim", o.dim},
                              {"seeds", o.seeds},
                              {"base_seed", o.base_seed},
                              {"vary", "test_overlap"},
                              {"seed_rule", "every overlap uses base seed derive_seed(base_seed, \"" +
                                                sim.stem + "\"): the same trained Gamma per "
                                                           "seed, evaluated on each test law"}};
    sim.meta["simulation_errors"] = errors;
    out.tables.push_back(std::move(sim));
  }
  return out;
}

// ---- figure 18: the finite-D prediction against simulations ------------------------------------

FigureData fig_finite_dim(const Settings& s, const numerics::Progress& progress) {
  // Three points of the verify grid (docs/simulation.md §14.1): the paper's (1), the task-poor
  // tau < 1 one (5), whose 1/D slopes are among the smallest and the largest of the grid, and
  // the ridgeless minimum-norm one (7, docs/finite_dim.md §21.10); the shifted test protocol of
  // their grid entries is not plotted.
  const auto grid = verify::lowrank::verify_grid(false);
  Params paper = grid.at(0).params, poor = grid.at(4).params, ridgeless = grid.back().params;
  paper.test_overlap.reset();
  poor.test_overlap.reset();
  ridgeless.test_overlap.reset();
  FigureData out;
  // Dimensions at which every size of both points is an integer (docs/simulation.md §13.1).
  const std::vector<int> sim_dims = s.quick ? std::vector<int>{10, 20} : std::vector<int>{20, 30, 40, 60};
  const std::vector<int> sim_seeds = s.quick ? std::vector<int>{8, 2} : std::vector<int>{256, 128, 64, 32};
  std::vector<int> curve_dims;
  for (int D = 10; D <= 200; D += (D < 40 ? 1 : 5)) curve_dims.push_back(D);
  std::size_t done = 0;
  const std::size_t total = 3 * sim_dims.size();
  for (const auto& [label, base] : {std::pair<std::string, Params>{"paper", paper},
                                    std::pair<std::string, Params>{"poor", poor},
                                    std::pair<std::string, Params>{"ridgeless", ridgeless}}) {
    // The prediction at every D, its D -> infinity value at the same sizes, and the slope.
    DataTable th;
    th.stem = "finite_dim_" + label;
    th.table.columns = {"dim", "inv_dim", "converged", "fd_tm", "fd_idg", "fd_odg", "limit_tm",
                        "limit_idg", "limit_odg"};
    for (int D : curve_dims) {
      theory::FiniteDimOptions fo;
      fo.dim = D;
      const auto r = theory::solve_finite_dim(base, fo);
      th.table.rows.push_back({double(D), 1.0 / D, r.converged() ? 1.0 : 0.0, r.error.tm,
                               r.error.idg, r.error.odg, r.limit.error.tm, r.limit.error.idg,
                               r.limit.error.odg});
      out.failed_theory_points += !r.converged();
    }
    th.meta = table_meta(s, 18, base, "theory");
    theory::SolveOptions method;
    if (base.on_ridgeless_branch()) method.method = theory::Method::Letey;
    const Solution inf = theory::solve(base, method);
    th.meta["theory"] = {{"finite_dim", "solve_finite_dim at each D (docs/finite_dim.md §21)"},
                         {"limit_at_infinity", {{"tm", inf.error.tm}, {"idg", inf.error.idg},
                                                {"odg", inf.error.odg}}}};
    out.tables.push_back(std::move(th));

    DataTable sim;
    sim.stem = "finite_dim_" + label + "_sim";
    sim.table.columns = {"dim", "inv_dim", "sim_tm", "sim_tm_sem", "sim_idg", "sim_idg_sem",
                         "sim_odg", "sim_odg_sem"};
    nlohmann::json errors = nlohmann::json::array();
    for (std::size_t k = 0; k < sim_dims.size(); ++k) {
      verify::lowrank::SimOptions o;
      o.dim = sim_dims[k];
      o.seeds = sim_seeds[k];
      o.threads = s.threads;
      o.min_norm = verify::lowrank::ridgeless_point(base);
      o.base_seed = numerics::derive_seed(numerics::derive_seed(s.base_seed, sim.stem),
                                          static_cast<std::uint64_t>(o.dim));
      const auto r = verify::lowrank::run(base, o);
      if (!r.converged()) {
        errors.push_back({{"dim", o.dim}, {"message", r.message}});
        sim.table.rows.push_back({double(o.dim), 1.0 / o.dim, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
      } else {
        sim.table.rows.push_back({double(o.dim), 1.0 / o.dim, r.error.tm.mean, r.error.tm.sem,
                                  r.error.idg.mean, r.error.idg.sem, r.error.odg.mean,
                                  r.error.odg.sem});
      }
      report(progress, "finite_dim simulation", ++done, total);
    }
    sim.meta = table_meta(s, 18, base, "simulation");
    sim.meta["simulation"] = {
        {"dims", sim_dims},
        {"seeds", sim_seeds},
        {"seed_rule", "dimension D uses base seed derive_seed(derive_seed(base_seed, \"" +
                          sim.stem + "\"), D)"}};
    sim.meta["simulation_errors"] = errors;
    out.tables.push_back(std::move(sim));
  }
  return out;
}

}  // namespace icl::paperfigs
