// One parameter of Params as a coordinate (docs/errors_phases.md §18.1, §19.1).
#include "theory/param_path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::fmt;

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

void validate_search(const std::string& name, double lo, double hi, int scan_points, int bits,
                     int max_iterations) {
  const bool lo_nan = std::isnan(lo), hi_nan = std::isnan(hi);
  if (lo_nan != hi_nan)
    throw InvalidParams(lo_nan ? "lo" : "hi", "set both ends of the range or neither");
  if (!lo_nan) validate_range(name, lo, hi, "lo", "hi");
  const auto in = [](const char* field, int v, int a, int b) {
    if (v < a || v > b)
      throw InvalidParams(field, "must be in [" + std::to_string(a) + ", " + std::to_string(b) +
                                     "] (got " + std::to_string(v) + ")");
  };
  in("scan_points", scan_points, 5, 100000);
  in("bits", bits, 4, 52);
  in("max_iterations", max_iterations, 1, 100000);
}

std::pair<double, double> search_range(const std::string& name, double lo, double hi,
                                       const std::string& field) {
  return std::isnan(lo) ? default_range(name, field) : std::make_pair(lo, hi);
}

Params with_param(const Params& base, const std::string& name, double v) {
  Params p = base;  // Params::set refuses rho under a task spectrum
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

double exact_slope(const Solution& s, const std::string& quantity, const std::string& name,
                   bool log_scale) {
  if (!s.gradient || !s.gradient->converged()) return std::numeric_limits<double>::quiet_NaN();
  const double d = s.gradient->of(quantity, name);
  return log_scale ? s.params.get(name) * d : d;
}

}  // namespace icl::theory
