// One parameter of Params as a coordinate; the quantities of a Solution by name
// (docs/theory.md §18.1, §19.1).
#include "theory/param_path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/serialize.hpp"

namespace icl::theory {
namespace {

std::string fmt(double v) { return numerics::format_significant(v); }

// The bookkeeping columns of solution_columns() that are not quantities of the theory.
bool bookkeeping(const std::string& c) {
  return c == "converged" || c == "residual" || c == "iterations";
}

}  // namespace

bool is_param_name(const std::string& name) {
  const auto& n = Params::names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

ParamDomain param_domain(const std::string& name) {
  if (name == "rho") return {0.0, true, 1.0};
  if (name == "test_overlap") return {0.0, false, 1.0};
  if (name == "sigma" || name == "sigma_test" || name == "lambda")
    return {0.0, false, std::numeric_limits<double>::infinity()};
  return {0.0, true, std::numeric_limits<double>::infinity()};
}

std::pair<double, double> default_range(const std::string& name, const std::string& field) {
  if (name == "lambda") return {1e-4, 10.0};
  if (name == "rho") return {0.01, 1.0};
  if (name == "test_overlap") return {0.0, 1.0};
  if (name == "sigma" || name == "sigma_test") return {0.0, 2.0};
  if (is_param_name(name)) return {0.1, 20.0};
  throw InvalidParams(field, "unknown parameter name '" + name + "'");
}

void validate_range(const std::string& name, double lo, double hi, const std::string& lo_field,
                    const std::string& hi_field) {
  if (!std::isfinite(lo)) throw InvalidParams(lo_field, "must be finite (got " + fmt(lo) + ")");
  if (!std::isfinite(hi)) throw InvalidParams(hi_field, "must be finite (got " + fmt(hi) + ")");
  if (!(lo < hi))
    throw InvalidParams(hi_field, "must be > " + lo_field + " (got " + lo_field + " = " +
                                      fmt(lo) + ", " + hi_field + " = " + fmt(hi) + ")");
  const ParamDomain d = param_domain(name);
  if (d.lower_open ? !(lo > d.lower) : !(lo >= d.lower))
    throw InvalidParams(lo_field, name + " must be " + (d.lower_open ? "> " : ">= ") +
                                      fmt(d.lower) + " (got " + fmt(lo) + ")");
  if (hi > d.upper)
    throw InvalidParams(hi_field, name + " must be <= " + fmt(d.upper) + " (got " + fmt(hi) + ")");
}

Params with_param(const Params& base, const std::string& name, double v) {
  if (name == "rho" && !base.task_spectrum.empty())
    throw InvalidParams("rho", "cannot vary with a task spectrum: the spectrum is the whole task "
                               "covariance and does not change with rho (build one spectrum "
                               "per rho instead)");
  Params p = base;
  p.set(name, v);
  return p;
}

void validate_for(const Params& p, Method method) {
  if (method == Method::Letey) p.validate();
  else p.validate_for_saddle_point();
}

Solution solve_near(const Params& p, const SolveOptions& options, const OrderParams* warm) {
  Solution s = solve(p, options);
  if (!s.converged() && warm && options.method == Method::Saddle) {
    SolveOptions w = options;
    w.start = *warm;
    Solution again = solve(p, w);
    if (again.converged() || again.residual_norm < s.residual_norm) s = std::move(again);
  }
  return s;
}

const std::vector<std::string>& quantity_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& c : solution_columns(true))
      if (!bookkeeping(c)) n.push_back(c);
    n.push_back("bayes_idg");
    n.push_back("bayes_odg");
    n.push_back("bayes_shift");
    return n;
  }();
  return names;
}

bool is_quantity_name(const std::string& name) {
  const auto& n = quantity_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

void check_quantity_name(const std::string& name, const std::string& field) {
  if (!is_quantity_name(name))
    throw InvalidParams(field, "unknown quantity '" + name + "' (one of tm idg odg, tm_algo ... "
                               "odg_struct, the order parameters, z, e, shift ... shift_struct, "
                               "bayes_idg, bayes_odg, bayes_shift)");
}

double quantity_value(const Solution& s, const std::string& name, const std::string& field) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  // The common ones without building the row.
  if (name == "tm") return s.converged() ? s.error.tm : nan;
  if (name == "idg") return s.converged() ? s.error.idg : nan;
  if (name == "odg") return s.converged() ? s.error.odg : nan;
  // The Bayes baselines depend on the parameters only, but a point whose solve failed is not
  // used as a value either (one rule for every quantity).
  if (name == "bayes_idg") return s.converged() ? s.bayes_optimal.idg : nan;
  if (name == "bayes_odg") return s.converged() ? s.bayes_optimal.odg : nan;
  if (name == "bayes_shift") return s.converged() ? s.bayes_optimal.shift : nan;
  // The shift columns are NaN without a shifted test protocol (docs/theory.md §20).
  static const std::vector<std::string> columns = solution_columns(true);
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end() || bookkeeping(name)) check_quantity_name(name, field);  // throws
  return solution_row(s, true)[static_cast<std::size_t>(it - columns.begin())];
}

}  // namespace icl::theory
