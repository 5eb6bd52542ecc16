// Data step of figure 7: one softmax-attention layer trained on the low-rank pretraining data
// (docs/softmax.md) against the linear-attention theory and simulation. The runs are
// verify::softmax::run, the table's columns verify::softmax::sweep_columns() (the
// `icl softmax --sweep-rho` TSV) plus alpha and softmax_ok.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "numerics/seed.hpp"
#include "paper_figs/figures_extra.hpp"
#include "theory/lowrank.hpp"
#include "theory/sweep.hpp"
#include "verify/softmax/experiment.hpp"
#include "verify/softmax/serialize.hpp"

namespace icl::paperfigs {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

theory::Params softmax_params(double alpha, double rho) {
  theory::Params p;
  p.alpha = alpha;
  p.alpha_test = -1;  // = alpha
  p.tau = 1.5;
  p.kappa = 0.5;
  p.rho = rho;
  p.sigma = 0.01;
  p.sigma_test = 0.01;  // the authors' evaluation adds the same label noise
  p.lambda = 0;
  return p;
}

nlohmann::json params_json(const theory::Params& p) {
  return {{"tau", p.tau},     {"kappa", p.kappa},           {"sigma", p.sigma},
          {"sigma_test", p.sigma_test}, {"lambda", p.lambda}, {"alpha_test", "alpha"}};
}

}  // namespace

FigureData fig_softmax(const Settings& s, const numerics::Progress& progress) {
  const std::vector<double> alphas = {2, 4, 6};
  const std::vector<double> rhos = s.quick ? std::vector<double>{0.2, 0.6, 1.0}
                                           : std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5,
                                                                 0.6, 0.7, 0.8, 0.9, 1.0};
  verify::softmax::SoftmaxOptions o;
  o.dim = s.quick ? 8 : 20;
  o.seeds = s.quick ? 2 : 5;
  // The paper's 5 seeds take about 20 minutes on 2 free cores; ICL_FIGS_SOFTMAX_SEEDS=N
  // overrides the seed count (recorded in the sidecar and shown in the caption).
  if (const char* env = std::getenv("ICL_FIGS_SOFTMAX_SEEDS"); env && *env) {
    const int n = std::atoi(env);
    if (n >= 1) o.seeds = n;
  }
  o.base_seed = numerics::derive_seed(s.base_seed, "figure-softmax");
  o.threads = std::max(1, s.threads);
  o.attn_dim = 4;
  o.init = verify::softmax::Init::Glorot;
  o.train.lr = 1e-3;
  o.train.max_epochs = s.quick ? 300 : 3000;
  o.train.tol = 1e-5;
  o.test_prompts = s.quick ? 300 : 3000;
  o.odg = verify::lowrank::OdgKind::Isotropic;
  o.assignment = verify::lowrank::Assignment::Random;
  o.compare_linear = true;  // the linear simulator (and theory) at every point

  std::vector<theory::Params> points;
  for (double a : alphas)
    for (double r : rhos) points.push_back(softmax_params(a, r));
  FigureData out;

  // Softmax attention: every (alpha, rho, seed) run in one thread pool; then the linear
  // simulator (same D, seeds, base seed: the same pretraining tasks) at every point.
  std::vector<verify::softmax::PointResult> res;
  nlohmann::json errors = nlohmann::json::array();
  try {
    res = verify::softmax::run(
        points, o, [&](std::size_t done, std::size_t total, const std::string& what) {
          if (progress)
            progress(done, total, what == "linear" ? "linear simulation" : "softmax training");
        });
  } catch (const std::exception& e) {
    errors.push_back(std::string("softmax: ") + e.what());
  }

  DataTable pts;
  pts.stem = "softmax";
  pts.table.columns = {"alpha", "softmax_ok"};
  const std::vector<std::string> cols = verify::softmax::sweep_columns();
  pts.table.columns.insert(pts.table.columns.end(), cols.begin(), cols.end());
  for (std::size_t k = 0; k < points.size(); ++k) {
    const auto& p = points[k];
    std::vector<double> row = {p.alpha};
    if (k < res.size()) {
      row.push_back(1.0);
      const std::vector<double> r = verify::softmax::sweep_row(res[k]);
      row.insert(row.end(), r.begin(), r.end());
      if (!res[k].linear.simulation_note.empty())
        errors.push_back("linear simulation alpha " + std::to_string(p.alpha) + " rho " +
                         std::to_string(p.rho) + ": " + res[k].linear.simulation_note);
    } else {
      row.push_back(0.0);
      row.push_back(p.rho);
      row.resize(pts.table.columns.size(), kNaN);
    }
    pts.table.rows.push_back(std::move(row));
  }
  nlohmann::json common = {{"figure", 7},
                           {"figure_command", s.command},
                           {"mode", s.quick ? "quick" : "full"},
                           {"params", params_json(points.front())},
                           {"alphas", alphas},
                           {"base_seed", s.base_seed}};
  pts.meta = common;
  pts.meta["what"] = "softmax attention and linear-attention simulation, mean and s.e. over seeds";
  pts.meta["simulation"] = {
      {"dim", o.dim}, {"seeds", o.seeds}, {"paper_seeds", 5}, {"points", rhos},
      {"seed_rule", "seed k of every point: derive_seed(derive_seed(base_seed, "
                    "\"figure-softmax\"), k) for both softmax and linear simulations (same "
                    "pretraining tasks)"}};
  pts.meta["softmax"] = {{"attn_dim", o.attn_dim},
                         {"init", verify::softmax::to_string(o.init)},
                         {"optimizer", "full-batch Adam"},
                         {"lr", o.train.lr},
                         {"max_epochs", o.train.max_epochs},
                         {"tol", o.train.tol},
                         {"test_prompts", o.test_prompts},
                         {"precision", "double (the authors trained in float32)"}};
  pts.meta["simulation_errors"] = errors;
  out.tables.push_back(std::move(pts));

  // Theory lines: a fine rho grid per alpha.
  const auto fine = theory::linspace(0.05, 1.0, s.quick ? 20 : 96);
  for (double a : alphas) {
    const theory::Params base = softmax_params(a, 0.5);
    const std::vector<theory::Solution> sols = theory::sweep(base, "rho", fine);
    DataTable th;
    th.stem = "softmax_theory_a" + std::to_string(int(a));
    th.table.columns = {"rho", "converged", "tm", "idg", "odg"};
    std::size_t failed = 0;
    for (std::size_t i = 0; i < sols.size(); ++i) {
      const bool c = sols[i].converged();
      failed += !c;
      th.table.rows.push_back({fine[i], c ? 1.0 : 0.0, c ? sols[i].error.tm : kNaN,
                               c ? sols[i].error.idg : kNaN, c ? sols[i].error.odg : kNaN});
    }
    out.failed_theory_points += failed;
    th.meta = common;
    th.meta["alpha"] = a;
    th.meta["what"] = "linear-attention theory (D = infinity)";
    th.meta["theory"] = {{"method", "saddle"}, {"vary", "rho"}, {"points", fine.size()}};
    th.meta["failed_theory_points"] = failed;
    out.tables.push_back(std::move(th));
  }
  return out;
}

}  // namespace icl::paperfigs
