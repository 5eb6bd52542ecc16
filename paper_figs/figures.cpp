// Data steps of the paper figures. Each returns tables; the `icl figs` command writes
// them (TSV + JSON sidecar) and runs the figure's plot script.
#include "paper_figs/figures.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>

#include "numerics/spectral_measure.hpp"
#include "paper_figs/figures_extra.hpp"
#include "theory/serialize.hpp"
#include "theory/lowrank.hpp"
#include "theory/quantity.hpp"
#include "theory/phase_grid.hpp"
#include "theory/sweep.hpp"
#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/gd_demo.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::paperfigs {

using theory::Params;
using theory::Solution;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using verify::lowrank::kProtocols;

// Common sidecar fields of one table.
nlohmann::json table_meta(const Settings& s, int figure, const Params& base,
                          const std::string& what) {
  return {{"figure", figure},
          {"figure_command", s.command},
          {"mode", s.quick ? "quick" : "full"},
          {"what", what},
          {"params", theory::to_json(base)},
          {"base_seed", s.base_seed}};
}

void report(const numerics::Progress& progress, const std::string& what, std::size_t done,
            std::size_t total) {
  if (progress) progress(done, total, what);
}

namespace {

// ---- theory rows -----------------------------------------------------------------------------

// The theory columns of the figure tables: converged, residual, these quantities of the Solution
// (theory/quantity.hpp), then nu.
const std::vector<const theory::Quantity*>& figure_quantities() {
  static const std::vector<const theory::Quantity*> q = [] {
    std::vector<const theory::Quantity*> v;
    for (const char* name : {"tm", "idg", "odg", "tm_algo", "tm_mem", "tm_struct", "idg_algo",
                             "idg_mem", "idg_struct", "odg_algo", "odg_mem", "odg_struct", "m",
                             "q", "mbar", "qbar", "m0", "q0", "chi", "chibar", "qhat", "qbarhat",
                             "z", "e"})
      v.push_back(&theory::find_quantity(name));
    return v;
  }();
  return q;
}

std::vector<std::string> theory_columns() {
  std::vector<std::string> c = {"converged", "residual"};
  for (const theory::Quantity* q : figure_quantities()) c.push_back(q->name);
  c.push_back("nu");
  return c;
}

// A failed point keeps its row: nan values, converged = 0, its residual.
std::vector<double> theory_row(const Solution& s) {
  std::vector<double> r = {s.converged() ? 1.0 : 0.0, s.residual_norm};
  for (const theory::Quantity* q : figure_quantities()) r.push_back(q->value(s));
  r.push_back(s.converged() ? s.nu : kNaN);
  return r;
}

std::size_t count_failed(const std::vector<Solution>& sols) {
  return static_cast<std::size_t>(
      std::count_if(sols.begin(), sols.end(), [](const Solution& s) { return !s.converged(); }));
}

// Theory along `name` (saddle point, warm-started sweep) as table `stem` of figure `figure`: the
// x column, then theory_columns(); its failed points are added to out.failed_theory_points.
DataTable theory_table(const std::string& stem, const Params& base, const std::string& name,
                       const std::vector<double>& xs, const Settings& s, int figure,
                       FigureData& out) {
  const std::vector<Solution> sols = theory::sweep(base, name, xs);
  DataTable t;
  t.stem = stem;
  t.table.columns = {name};
  for (const auto& c : theory_columns()) t.table.columns.push_back(c);
  for (std::size_t i = 0; i < sols.size(); ++i) {
    std::vector<double> row = {xs[i]};
    const auto r = theory_row(sols[i]);
    row.insert(row.end(), r.begin(), r.end());
    t.table.rows.push_back(std::move(row));
  }
  const std::size_t f = count_failed(sols);
  out.failed_theory_points += f;
  t.meta = table_meta(s, figure, base, "theory");
  t.meta["failed_theory_points"] = f;
  t.meta["theory"] = {{"method", "saddle"}, {"vary", name}, {"points", xs.size()}};
  return t;
}

// ---- simulation rows -------------------------------------------------------------------------

struct SimSpec {
  int dim = 20;
  int seeds = 2;
};

// Every random stream of a figure is a named stream of the base seed: the simulation of point k
// of table `stem` runs with base seed derive_seed(base_seed, stem, k).
std::string seed_rule(const std::string& stem, const std::string& point) {
  return point + " uses base seed derive_seed(base_seed, \"" + stem + "\", k)";
}

nlohmann::json sim_meta(const SimSpec& sim, const std::vector<double>& xs, const std::string& stem) {
  return {{"dim", sim.dim}, {"seeds", sim.seeds}, {"points", xs},
          {"seed_rule", seed_rule(stem, "point k")}};
}

// One simulated column: its name and where a SimulationResult holds it (nullptr: not measured).
struct SimColumn {
  std::string name;
  std::function<const numerics::Estimate*(const verify::lowrank::SimulationResult&)> get;
};

std::vector<SimColumn> quantity_columns(std::size_t first, std::size_t count) {
  std::vector<SimColumn> c;
  const auto& q = verify::lowrank::compared_quantities();
  for (std::size_t i = first; i < first + count; ++i) c.push_back({q[i].name, q[i].simulated});
  return c;
}
// The three test errors and the six order parameters (verify/lowrank/compare.hpp's table).
std::vector<SimColumn> error_columns() { return quantity_columns(0, 3); }
std::vector<SimColumn> order_columns() { return quantity_columns(3, 6); }

// The measured decomposition: algo, excess, span, null of every protocol.
std::vector<SimColumn> decomposition_columns() {
  using Pieces = verify::lowrank::DecompositionPieces<numerics::Estimate>;
  const std::pair<const char*, numerics::Estimate Pieces::*> parts[] = {
      {"algo", &Pieces::algo}, {"excess", &Pieces::excess}, {"span", &Pieces::span},
      {"null", &Pieces::null}};
  std::vector<SimColumn> c;
  for (int k = 0; k < 3; ++k)
    for (const auto& [part, member] : parts)
      c.push_back({std::string("decomp.") + kProtocols[k] + "." + part,
                   [k, member](const verify::lowrank::SimulationResult& r) {
                     return r.decomposition ? &(r.decomposition->protocol[k].*member) : nullptr;
                   }});
  return c;
}

std::vector<std::string> sim_columns(const std::vector<SimColumn>& cols) {
  std::vector<std::string> c = {"sim_ok"};
  for (const auto& col : cols) {
    std::string shortname = col.name.substr(col.name.find('.') + 1);
    std::replace(shortname.begin(), shortname.end(), '.', '_');
    c.push_back("sim_" + shortname);
    c.push_back("sim_" + shortname + "_sem");
  }
  return c;
}

// Mean and s.e. over seeds of `cols` at p with the given base seed; a failed simulation gives
// sim_ok = 0 and nan values (the message is added to `errors`).
std::vector<double> simulate_row(const Params& p, const SimSpec& sim, const Settings& s,
                                 std::uint64_t base_seed, const std::vector<SimColumn>& cols,
                                 const Solution* theory, nlohmann::json& errors) {
  verify::lowrank::SimOptions o;
  o.dim = sim.dim;
  o.seeds = sim.seeds;
  o.threads = std::max(1, s.threads);
  o.base_seed = base_seed;
  o.prediction_prompts = 0;
  if (theory && theory->converged()) o.theory = verify::lowrank::theory_ref(*theory);
  std::vector<double> row = {1.0};
  try {
    const verify::lowrank::SimulationResult r = verify::lowrank::run(p, o);
    if (!r.converged()) throw std::runtime_error(r.message);
    for (const auto& col : cols) {
      const numerics::Estimate* e = col.get(r);
      row.push_back(e ? e->mean : kNaN);
      row.push_back(e ? e->sem : kNaN);
    }
  } catch (const std::exception& ex) {
    row.assign(1 + 2 * cols.size(), kNaN);
    row[0] = 0.0;
    errors.push_back(ex.what());
  }
  return row;
}

std::vector<SimColumn> concat(std::vector<SimColumn> a, const std::vector<SimColumn>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Simulation along `name` at the values xs: table with x, sim_ok, sim_* columns.
DataTable sim_table(const std::string& stem, const Params& base, const std::string& name,
                    const std::vector<double>& xs, const SimSpec& sim, const Settings& s,
                    int figure, const std::vector<SimColumn>& names, bool with_theory_ref,
                    const std::string& label, const numerics::Progress& progress) {
  DataTable t;
  t.stem = stem;
  t.table.columns = {name};
  for (const auto& c : sim_columns(names)) t.table.columns.push_back(c);
  nlohmann::json errors = nlohmann::json::array();
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Params p = base;
    p.set(name, xs[k]);
    Solution th;
    if (with_theory_ref) th = theory::solve(p);
    std::vector<double> row = {xs[k]};
    const auto r = simulate_row(p, sim, s, numerics::derive_seed(s.base_seed, stem, k), names,
                                with_theory_ref ? &th : nullptr, errors);
    row.insert(row.end(), r.begin(), r.end());
    t.table.rows.push_back(std::move(row));
    report(progress, label, k + 1, xs.size());
  }
  t.meta = table_meta(s, figure, base, "simulation");
  t.meta["simulation"] = sim_meta(sim, xs, stem);
  t.meta["simulation"]["vary"] = name;
  t.meta["simulation_errors"] = errors;
  return t;
}

}  // namespace

// ---- figure 1: decomposition -----------------------------------------------------------------

Params decomposition_params() {
  // alpha_test -1: = alpha; tau 2.25: gamma 1.5.
  return {.alpha = 2, .alpha_test = -1, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3,
          .lambda = 0};
}

FigureData fig_decomposition(const Settings& s, const numerics::Progress& progress) {
  const Params base = decomposition_params();
  FigureData out;
  const auto xs = theory::logspace(0.1, 100, s.quick ? 25 : 81);
  out.tables.push_back(theory_table("decomposition", base, "alpha", xs, s, 1, out));
  report(progress, "decomposition theory", 1, 1);

  const SimSpec sim = s.quick ? SimSpec{20, 2} : SimSpec{60, 5};
  const std::vector<double> sx = s.quick ? std::vector<double>{0.5, 2, 8}
                                         : std::vector<double>{0.25, 0.5, 1, 2, 4, 8, 16, 32};
  const std::vector<SimColumn> names = concat(error_columns(), decomposition_columns());
  out.tables.push_back(sim_table("decomposition_sim", base, "alpha", sx, sim, s, 1, names, true,
                                 "decomposition simulation", progress));
  out.tables.back().meta["measured_decomposition"] =
      "algo = exact error of Gbar = S (S - z)^{-1} (z from the theory); excess = total - algo "
      "(theory: mem + struct); span/null = the fluctuation Gamma - Gbar restricted to span(S) / "
      "null(S)";
  return out;
}

// ---- figure 2: order parameters against kappa ------------------------------------------------

FigureData fig_order_params(const Settings& s, const numerics::Progress& progress) {
  const Params base{.alpha = 2.3, .tau = 1.7, .kappa = 1.0, .rho = 0.2, .sigma = 0.003,
                    .lambda = 3};
  FigureData out;
  const auto xs = theory::linspace(0.25, 2.0, s.quick ? 15 : 71);
  out.tables.push_back(theory_table("order_params", base, "kappa", xs, s, 2, out));
  report(progress, "order_params theory", 1, 1);
  const SimSpec sim = s.quick ? SimSpec{20, 2} : SimSpec{70, 10};
  const auto sx = theory::linspace(0.25, 2.0, s.quick ? 4 : 8);
  out.tables.push_back(sim_table("order_params_sim", base, "kappa", sx, sim, s, 2,
                                 concat(error_columns(), order_columns()), false,
                                 "order_params simulation", progress));
  return out;
}

// ---- figure 3: errors against the test context -----------------------------------------------

FigureData fig_test_context(const Settings& s, const numerics::Progress& progress) {
  const Params base{.alpha = 4, .alpha_test = 4, .tau = 1.2, .kappa = 3, .rho = 0.5, .sigma = 0.9,
                    .sigma_test = 0, .lambda = 0.1};
  FigureData out;
  auto ratio_to_alpha_test = [&](std::vector<double> r) {
    for (double& v : r) v *= base.alpha;
    return r;
  };
  const auto ratios = theory::logspace(0.1, 4.0, s.quick ? 20 : 61);
  DataTable th =
      theory_table("test_context", base, "alpha_test", ratio_to_alpha_test(ratios), s, 3, out);
  th.table.columns.insert(th.table.columns.begin(), "ratio");
  for (std::size_t i = 0; i < th.table.rows.size(); ++i)
    th.table.rows[i].insert(th.table.rows[i].begin(), ratios[i]);
  out.tables.push_back(std::move(th));
  report(progress, "test_context theory", 1, 1);

  // One pretraining draw per seed shared by all test contexts (same derived seed at every
  // point): the curve is one set of trained models evaluated at different alpha_test.
  const SimSpec sim = s.quick ? SimSpec{20, 2} : SimSpec{60, 5};
  const std::vector<double> sr = s.quick ? std::vector<double>{0.25, 1, 4}
                                         : std::vector<double>{0.1, 0.2, 0.4, 0.7, 1, 1.5, 2.5, 4};
  DataTable t;
  t.stem = "test_context_sim";
  t.table.columns = {"ratio", "alpha_test"};
  for (const auto& c : sim_columns(error_columns())) t.table.columns.push_back(c);
  nlohmann::json errors = nlohmann::json::array();
  for (std::size_t k = 0; k < sr.size(); ++k) {
    Params p = base;
    p.alpha_test = sr[k] * base.alpha;
    std::vector<double> row = {sr[k], p.alpha_test};
    const auto r = simulate_row(p, sim, s, numerics::derive_seed(s.base_seed, t.stem),
                                error_columns(), nullptr, errors);
    row.insert(row.end(), r.begin(), r.end());
    t.table.rows.push_back(std::move(row));
    report(progress, "test_context simulation", k + 1, sr.size());
  }
  t.meta = table_meta(s, 3, base, "simulation");
  t.meta["simulation"] = sim_meta(sim, ratio_to_alpha_test(sr), t.stem);
  t.meta["simulation"]["vary"] = "alpha_test";
  t.meta["simulation"]["seed_rule"] =
      "every alpha_test uses base seed derive_seed(base_seed, \"test_context_sim\"): the same "
      "pretraining data and trained "
      "Gamma per seed, evaluated at each test context";
  t.meta["simulation_errors"] = errors;
  out.tables.push_back(std::move(t));
  return out;
}

// ---- figure 4: implicit regularization -------------------------------------------------------

FigureData fig_implicit_reg(const Settings& s, const numerics::Progress& progress) {
  const Params base = decomposition_params();  // tau 2.25, kappa 1.5, rho 0.9, sigma 0.3, lambda 0
  FigureData out;
  const auto xs = theory::logspace(0.1, 1e4, s.quick ? 25 : 91);
  // lambda = 0 with sigma 0.3 and sigma 0, and a small explicit ridge for contrast.
  struct Variant {
    const char* stem;
    double sigma, lambda;
  };
  const Variant variants[] = {{"implicit_reg", 0.3, 0.0},
                              {"implicit_reg_sigma0", 0.0, 0.0},
                              {"implicit_reg_ridge", 0.3, 0.01}};
  for (const auto& v : variants) {
    Params p = base;
    p.sigma = v.sigma;
    p.lambda = v.lambda;
    DataTable th = theory_table(v.stem, p, "alpha", xs, s, 4, out);
    const double k = std::min(p.rho, p.kappa), s2 = p.sigma * p.sigma;
    th.meta["asymptotes"] = {
        {"minus_z", "nu = (1 + sigma^2)/alpha (exact at lambda = 0)"},
        {"qbarhat", "nu qhat = nu (tau - 1)/kappa at lambda = 0"},
        {"qbar", "k + alpha sigma^2 (1 - k)/((1 + sigma^2)(tau - 1)), k = min(rho, kappa)"},
        {"k", k},
        {"qbar_slope", s2 * (1 - k) / ((1 + s2) * (p.tau - 1))}};
    out.tables.push_back(std::move(th));
  }
  report(progress, "implicit_reg theory", 1, 1);

  // Simulated qbar (and errors) at moderate alpha.
  const SimSpec sim = s.quick ? SimSpec{16, 2} : SimSpec{40, 4};
  const std::vector<double> sx =
      s.quick ? std::vector<double>{1, 8} : std::vector<double>{0.5, 2, 8, 32, 128};
  out.tables.push_back(sim_table("implicit_reg_sim", base, "alpha", sx, sim, s, 4,
                                 concat(error_columns(), order_columns()), false,
                                 "implicit_reg simulation", progress));

  // Gradient descent from several initializations (ill-posedness at large alpha).
  const int gd_dim = s.quick ? 16 : 40;
  const int gd_steps = s.quick ? 300 : 2000;
  const std::vector<double> inits = {0.0, 1.0, 2.0, 4.0};
  const std::vector<double> ga = s.quick ? std::vector<double>{1, 16, 256}
                                         : std::vector<double>{1, 4, 16, 64, 256, 1024};
  DataTable g;
  g.stem = "implicit_reg_gd";
  g.table.columns = {"alpha", "init_scale", "is_ridge_solution", "ok", "loss", "tm", "idg",
                     "odg", "null_norm2", "null_dist2", "span_dist2"};
  nlohmann::json errors = nlohmann::json::array();
  for (std::size_t k = 0; k < ga.size(); ++k) {
    Params p = base;
    p.alpha = ga[k];
    try {
      verify::lowrank::GdDemoOptions go;
      go.dim = gd_dim;
      go.base_seed = numerics::derive_seed(s.base_seed, g.stem, k);
      go.init_scales = inits;
      go.steps = gd_steps;
      const verify::lowrank::GdDemoResult d = verify::lowrank::run(p, go);
      if (!d.converged()) throw std::runtime_error(d.message);
      g.table.rows.push_back(
          {ga[k], kNaN, 1, 1, d.cg_loss, d.cg_tm, d.cg_idg, d.cg_odg, d.cg_null_norm2, 0, 0});
      for (const auto& r : d.runs)
        g.table.rows.push_back({ga[k], r.init_scale, 0, 1, r.loss, r.tm, r.idg, r.odg, r.null_norm2,
                                r.null_dist2, r.span_dist2});
    } catch (const std::exception& ex) {
      errors.push_back(ex.what());
      g.table.rows.push_back({ga[k], kNaN, 1, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
    }
    report(progress, "implicit_reg gradient descent", k + 1, ga.size());
  }
  g.meta = table_meta(s, 4, base, "gradient descent from several initializations");
  g.meta["gd"] = {{"dim", gd_dim}, {"steps", gd_steps}, {"init_scales", inits}, {"alphas", ga},
                  {"seed_rule", "alpha k: the data of seed 0 of base seed "
                                "derive_seed(base_seed, \"implicit_reg_gd\", k)"},
                  {"note", "Gamma0 = scale Z, Z iid N(0, 1/D); step 1/(1.05 lambda_max); the "
                           "ridge solution is CG to 1e-10"}};
  g.meta["errors"] = errors;
  out.tables.push_back(std::move(g));
  return out;
}

// ---- figure 5: phase transition --------------------------------------------------------------

FigureData fig_phase(const Settings& s, const numerics::Progress& progress) {
  Params base = decomposition_params();
  base.kappa = 0.5;  // tau 2.25 kept
  FigureData out;
  const std::vector<double> alphas = {2, 8, 32, 128, 1024};
  const std::vector<double> sigmas = {0.3, 0.0};
  const auto rhos = theory::linspace(0.01, 1.0, s.quick ? 34 : 100);
  DataTable lines;
  lines.stem = "phase";
  lines.table.columns = {"sigma", "alpha", "rho"};
  for (const auto& c : theory_columns()) lines.table.columns.push_back(c);
  std::size_t failed = 0;
  for (double sg : sigmas)
    for (double a : alphas) {
      Params p = base;
      p.sigma = sg;
      p.alpha = a;
      const auto sols = theory::sweep(p, "rho", rhos);
      for (std::size_t i = 0; i < sols.size(); ++i) {
        std::vector<double> row = {sg, a, rhos[i]};
        const auto r = theory_row(sols[i]);
        row.insert(row.end(), r.begin(), r.end());
        lines.table.rows.push_back(std::move(row));
      }
      failed += count_failed(sols);
    }
  out.failed_theory_points += failed;
  lines.meta = table_meta(s, 5, base, "theory against rho");
  lines.meta["theory"] = {{"method", "saddle"}, {"alphas", alphas}, {"sigmas", sigmas},
                          {"rho_points", rhos.size()}};
  lines.meta["failed_theory_points"] = failed;
  out.tables.push_back(std::move(lines));
  report(progress, "phase theory lines", 1, 1);

  // Simulation at the affordable alphas.
  const SimSpec sim = s.quick ? SimSpec{20, 2} : SimSpec{60, 3};
  const std::vector<double> sim_alphas = s.quick ? std::vector<double>{2, 8}
                                                 : std::vector<double>{2, 8, 32};
  const std::vector<double> sim_rhos = s.quick ? std::vector<double>{0.2, 0.5, 0.8}
                                               : std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5,
                                                                     0.6, 0.7, 0.8, 0.9, 1.0};
  DataTable st;
  st.stem = "phase_sim";
  st.table.columns = {"sigma", "alpha", "rho"};
  for (const auto& c : sim_columns(error_columns())) st.table.columns.push_back(c);
  nlohmann::json errors = nlohmann::json::array();
  const std::size_t total = sigmas.size() * sim_alphas.size() * sim_rhos.size();
  std::size_t k = 0;
  for (double sg : sigmas)
    for (double a : sim_alphas)
      for (double r : sim_rhos) {
        Params p = base;
        p.sigma = sg;
        p.alpha = a;
        p.rho = r;
        std::vector<double> row = {sg, a, r};
        const auto v = simulate_row(p, sim, s, numerics::derive_seed(s.base_seed, st.stem, k),
                                    error_columns(), nullptr, errors);
        row.insert(row.end(), v.begin(), v.end());
        st.table.rows.push_back(std::move(row));
        report(progress, "phase simulation", ++k, total);
      }
  st.meta = table_meta(s, 5, base, "simulation against rho");
  st.meta["simulation"] = {{"dim", sim.dim}, {"seeds", sim.seeds}, {"alphas", sim_alphas},
                           {"sigmas", sigmas}, {"rhos", sim_rhos},
                           {"seed_rule", seed_rule(st.stem, "point k")}};
  st.meta["simulation_errors"] = errors;
  out.tables.push_back(std::move(st));

  // (rho, kappa) phase diagram at alpha 32, sigma 0.3.
  Params pg = base;
  pg.alpha = 32;
  const auto grho = theory::linspace(0.02, 1.0, s.quick ? 15 : 50);
  const auto gkappa = theory::linspace(0.05, 1.5, s.quick ? 15 : 50);
  theory::PhaseOptions po;
  po.threads = std::max(1, s.threads);
  const auto grid = theory::phase_grid(pg, "rho", grho, "kappa", gkappa, po,
                                       [&](std::size_t d, std::size_t n, const std::string&) {
                                         if (d == n || d % 250 == 0)
                                           report(progress, "phase diagram", d, n);
                                       });
  DataTable pd;
  pd.stem = "phase_diagram";
  pd.table.columns = {"rho", "kappa", "task_rich", "atom_mass"};
  for (const auto& c : theory_columns()) pd.table.columns.push_back(c);
  for (const auto& sol : grid) {
    std::vector<double> row = {sol.params.rho, sol.params.kappa,
                               theory::regime(sol.params) == theory::Regime::TaskRich ? 1.0 : 0.0,
                               theory::atom_mass(sol.params)};
    const auto r = theory_row(sol);
    row.insert(row.end(), r.begin(), r.end());
    pd.table.rows.push_back(std::move(row));
  }
  const std::size_t gf = count_failed(grid);
  out.failed_theory_points += gf;
  pd.meta = table_meta(s, 5, pg, "phase diagram (rho, kappa)");
  pd.meta["grid"] = {{"rho", grho}, {"kappa", gkappa}, {"note", "tau fixed (setting kappa keeps tau)"}};
  pd.meta["failed_theory_points"] = gf;
  out.tables.push_back(std::move(pd));
  return out;
}

}  // namespace icl::paperfigs
