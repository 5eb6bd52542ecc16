// Figure 22 (beyond the papers): the finite-D prediction at every point of the verify grid
// (docs/finite_dim.md §21.12, docs/verification.md): the residual of the simulation after the
// prediction against 1/D^2, next to the residual after the D -> infinity theory.
#include <cstdint>
#include <string>
#include <vector>

#include "paper_figs/figures_extra.hpp"
#include "verify/lowrank/compare.hpp"

namespace icl::paperfigs {

namespace {

// The errors of the table, coded as numbers (TSV columns are numeric): 0 TM, 1 IDG, 2 ODG,
// 3 the shifted protocol.
int error_code(const std::string& quantity) {
  if (quantity == "error.tm") return 0;
  if (quantity == "error.idg") return 1;
  if (quantity == "error.odg") return 2;
  if (quantity == "error.shift") return 3;
  return -1;
}

}  // namespace

FigureData fig_finite_dim_grid(const Settings& s, const numerics::Progress& progress) {
  // The verify grid as `icl verify` runs it (full: D = 20, 30, 40, 60, 80; quick: its quick
  // options), so the figure is the finite-D table of docs/verification.md drawn.
  verify::lowrank::VerifyOptions o =
      s.quick ? verify::lowrank::VerifyOptions::quick() : verify::lowrank::VerifyOptions{};
  o.threads = s.threads;
  o.base_seed = numerics::derive_seed(s.base_seed, "finite_dim_grid");
  const verify::lowrank::VerifyResult r = verify::lowrank::run(o, progress);
  DataTable t;
  t.stem = "finite_dim_grid";
  t.table.columns = {"point",      "error",     "dim",  "inv_dim", "inv_dim2", "mean",
                     "sem",        "prediction", "limit", "uncertainty", "z",  "z_limit"};
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t k = 0; k < r.points.size(); ++k) {
    const auto& pr = r.points[k];
    points.push_back({{"point", k + 1},
                      {"label", pr.point.label},
                      {"available", pr.finite_dim.available},
                      {"message", pr.finite_dim.message},
                      {"omitted", pr.finite_dim.omitted}});
    for (const auto& row : pr.finite_dim.rows) {
      const int code = error_code(row.quantity);
      if (code < 0) continue;
      const double D = row.dim;
      t.table.rows.push_back({double(k + 1), double(code), D, 1 / D, 1 / (D * D), row.mean,
                              row.sem, row.prediction, row.limit, row.uncertainty, row.z,
                              row.z_limit});
    }
  }
  t.meta = table_meta(s, 22, o.points.front().params, "simulation");
  t.meta["points"] = points;
  t.meta["error_codes"] = {"tm", "idg", "odg", "shift"};
  t.meta["simulation"] = {{"dims", o.dims},
                          {"seeds", o.seeds},
                          {"seed_rule", "icl verify with base seed derive_seed(base_seed, "
                                        "\"finite_dim_grid\")"}};
  FigureData out;
  out.tables.push_back(std::move(t));
  return out;
}

}  // namespace icl::paperfigs
