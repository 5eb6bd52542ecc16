// The test-time iteration's phase diagram (theory/cot.hpp, docs/multistep.md §4.3): the theory on
// a grid of two parameters, and its table.
#include <cmath>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "numerics/parallel.hpp"
#include "theory/cot.hpp"

namespace icl::theory {
namespace {

double& field_of(CotParams& p, const std::string& name, const char* flag) {
  if (name == "alpha") return p.alpha;
  if (name == "tau") return p.tau;
  if (name == "sigma") return p.sigma;
  throw InvalidParams(flag, "'" + name + "' is not a parameter of the grid (alpha, tau, sigma)");
}

}  // namespace

std::vector<CotResult> cot_phase_grid(const CotParams& base, const std::string& x_name,
                                      const std::vector<double>& xs, const std::string& y_name,
                                      const std::vector<double>& ys, const CotOptions& options,
                                      int threads) {
  CotParams probe = base;
  field_of(probe, x_name, "x");
  field_of(probe, y_name, "y");
  if (x_name == y_name) throw InvalidParams("y", "must differ from x (both '" + x_name + "')");
  if (xs.empty()) throw InvalidParams("x", "the grid has no value");
  if (ys.empty()) throw InvalidParams("y", "the grid has no value");
  numerics::check_threads(threads, true);
  options.validate();
  std::vector<CotParams> points;
  points.reserve(xs.size() * ys.size());
  for (double x : xs)
    for (double y : ys) {
      CotParams p = base;
      field_of(p, x_name, "x") = x;
      field_of(p, y_name, "y") = y;
      p.validate();
      check_cot_theory_applies(p);
      points.push_back(p);
    }
  std::vector<CotResult> out(points.size());
  numerics::parallel_for(points.size(), threads,
                         [&](std::size_t k) { out[k] = run(points[k], options); });
  return out;
}

numerics::Table cot_phase_table(const std::string& x_name, const std::vector<double>& xs,
                                const std::string& y_name, const std::vector<double>& ys,
                                const std::vector<CotResult>& grid) {
  numerics::Table t;
  t.columns = {x_name,   y_name,        "converged", "regime",      "tau_c",
               "tau_monotone", "tau_crit", "limit",  "growth_rate", "t_opt",
               "error_t_opt",  "error_last", "precision_bits"};
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (std::size_t j = 0; j < ys.size(); ++j) {
      const CotResult& r = grid[i * ys.size() + j];
      t.rows.push_back({xs[i], ys[j], r.converged() ? 1.0 : 0.0,
                        static_cast<double>(static_cast<int>(r.regime)), r.tau_c, r.tau_monotone,
                        r.tau_crit, r.limit, r.growth_rate,
                        r.t_opt >= 0 ? static_cast<double>(r.t_opt) : std::nan(""),
                        r.error_t_opt, r.error.empty() ? 0.0 : r.error.back(),
                        static_cast<double>(r.precision_bits)});
    }
  return t;
}

}  // namespace icl::theory
