// Data step of figure 19 (beyond the papers): which parameter the IDG error is most sensitive
// to, across the (rho, kappa) plane. The elasticities d ln IDG / d ln x of the exact gradient
// (docs/sensitivity.md §22) at every point of a phase grid; the dominant parameter is the one
// of largest |elasticity| (a relative change of 1% in it moves IDG the most).
#include <cmath>
#include <string>
#include <vector>

#include "paper_figs/figures_extra.hpp"
#include "theory/phase_grid.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"

namespace icl::paperfigs {

FigureData fig_sensitivity(const Settings& s, const numerics::Progress& progress) {
  theory::Params base = decomposition_params();
  base.lambda = 0.01;  // a small ridge, so that lambda competes too (its elasticity is 0 at 0)
  const int n = s.quick ? 12 : 60;
  const std::vector<double> rhos = theory::linspace(0.05, 1.0, n);
  const std::vector<double> kappas = theory::linspace(0.1, 2.0, n);
  theory::PhaseOptions o;
  o.threads = s.threads;
  o.solve.gradient = true;
  const std::vector<theory::Solution> sols =
      theory::phase_grid(base, "rho", rhos, "kappa", kappas, o, progress);
  const std::vector<std::string> params = {"alpha", "tau", "kappa", "rho", "sigma", "lambda"};
  DataTable t;
  t.stem = "sensitivity";
  t.table.columns = {"rho", "kappa", "converged", "idg"};
  std::vector<std::string> columns;
  for (const std::string& x : params) columns.push_back("el_idg_" + x);
  t.table.columns.insert(t.table.columns.end(), columns.begin(), columns.end());
  t.table.columns.push_back("dominant");      // index into `params`
  t.table.columns.push_back("dominant_abs");  // its |elasticity|
  FigureData out;
  for (const theory::Solution& sol : sols) {
    std::vector<double> row = {sol.params.rho, sol.params.kappa, sol.converged() ? 1.0 : 0.0,
                               sol.converged() ? sol.error.idg : std::nan("")};
    const std::vector<double> el = theory::gradient_row(sol, columns);
    row.insert(row.end(), el.begin(), el.end());
    int dominant = -1;
    for (int k = 0; k < int(el.size()); ++k)
      if (std::isfinite(el[k]) && (dominant < 0 || std::abs(el[k]) > std::abs(el[dominant])))
        dominant = k;
    row.push_back(dominant);
    row.push_back(dominant < 0 ? std::nan("") : std::abs(el[dominant]));
    out.failed_theory_points += dominant < 0;
    t.table.rows.push_back(std::move(row));
  }
  t.meta = table_meta(s, 19, base, "theory");
  t.meta["theory"] = {{"method", "saddle"},
                      {"grid", {{"rho", {0.05, 1.0, n}}, {"kappa", {0.1, 2.0, n}}}},
                      {"elasticity", "d ln IDG / d ln x, exact (docs/sensitivity.md §22)"},
                      {"parameters", params}};
  out.tables.push_back(std::move(t));
  return out;
}

}  // namespace icl::paperfigs
