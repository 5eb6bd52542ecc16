// Data step of figure 13 (beyond the papers): where the IDG transition sits at finite context
// length. For several kappa, the steepest point of IDG along rho (theory/boundary.hpp,
// docs/errors_phases.md §19) against alpha, at the D -> infinity point of §10.2 (sigma = 0, lambda
// = 0, tau = 2.25), where the transition is the kink at rho = kappa as alpha -> infinity.
#include <string>
#include <vector>

#include "numerics/format.hpp"
#include "paper_figs/figures_extra.hpp"
#include "theory/boundary.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"

namespace icl::paperfigs {

FigureData fig_transition_alpha(const Settings& s, const numerics::Progress& progress) {
  theory::Params base = decomposition_params();
  base.sigma = 0;
  base.lambda = 0;  // tau = 2.25 > 1: the ridgeless saddle point is unique (docs/errors_phases.md §10.4)
  const std::vector<double> kappas = {0.3, 0.5, 0.7};
  theory::BoundaryOptions o;
  o.criterion = theory::Criterion::Steepest;
  o.quantity = "idg";
  o.x = "rho";
  o.lo = 0.05;
  o.hi = 1.0;
  o.y = "alpha";
  o.ys = theory::logspace(1, 1e4, s.quick ? 7 : 25);
  o.scan_points = s.quick ? 41 : 81;
  o.threads = s.threads;

  DataTable t;
  t.stem = "transition_alpha";
  t.table.columns = {"kappa"};
  t.meta = table_meta(s, 13, base, "steepest point of IDG along rho against alpha");
  nlohmann::json messages = nlohmann::json::object();
  std::size_t failed = 0, k = 0;
  for (double kappa : kappas) {
    theory::Params p = base;
    p.kappa = kappa;
    const theory::BoundaryResult r = theory::run(p, o);
    const numerics::Table b = theory::to_table(r);
    if (t.table.columns.size() == 1)
      for (const auto& c : b.columns) t.table.columns.push_back(c);
    for (auto row : b.rows) {
      row.insert(row.begin(), kappa);
      t.table.rows.push_back(std::move(row));
    }
    nlohmann::json m = nlohmann::json::array();
    for (const auto& pt : r.points) {
      m.push_back(pt.message);
      // A y without an interior steepest point (small alpha on the linear axis: the slope is
      // largest at the lower end of the range) is an answer, not a failed solve.
      failed += !pt.converged() && pt.status != numerics::Status::CheckFailed;
    }
    messages[numerics::format_significant(kappa)] = m;
    report(progress, "transition_alpha", ++k, kappas.size());
  }
  t.meta["boundary"] = {{"criterion", "steepest"}, {"quantity", "idg"}, {"x", "rho"},
                        {"range", {o.lo, o.hi}}, {"scale", "linear"}, {"y", "alpha"},
                        {"scan_points", o.scan_points}, {"kappas", kappas}};
  // The alpha -> infinity limit (docs/errors_phases.md §10.2): IDG -> (1 - kappa/rho)(1 +
  // kappa/(tau-1)) for rho > kappa, whose slope in rho at rho = kappa+ is (1 + kappa/(tau - 1))
  // / kappa (the x axis is linear, the library's default).
  t.meta["limit"] = {{"rho", "kappa"}, {"slope", "(1 + kappa/(tau - 1)) / kappa"}};
  t.meta["messages"] = messages;
  t.meta["failed_points"] = failed;
  FigureData out;
  out.failed_theory_points = failed;
  out.tables.push_back(std::move(t));
  return out;
}

}  // namespace icl::paperfigs
