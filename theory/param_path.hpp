// One parameter of Params as a coordinate (docs/errors_phases.md §18.1, §19.1): its valid values, a
// default search range, the log or linear scale of a search, and a solve at one of its values
// with a warm-start fallback. Shared by theory/sweep.hpp, optimize.hpp and boundary.hpp (the
// quantities they search on are in theory/quantity.hpp).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "theory/lowrank.hpp"
#include "theory/params.hpp"

namespace icl::theory {

// True for the names of Params::names().
bool is_param_name(const std::string& name);

// The valid values of a parameter (Params::validate, docs/model.md §1.6): (0, inf) for the
// ratios, (0, 1] for rho, [0, 1] for test_overlap, [0, inf) for the noise levels and the ridge.
struct ParamDomain {
  double lower = 0;
  bool lower_open = true;
  double upper = 0;  // inclusive
};
ParamDomain param_domain(const std::string& name);

// A default range per parameter: lambda [1e-4, 10], alpha/alpha_test/tau/gamma/kappa
// [0.1, 20], rho [0.01, 1], test_overlap [0, 1], sigma/sigma_test [0, 2]. Throws InvalidParams(field) for an unknown
// name.
std::pair<double, double> default_range(const std::string& name, const std::string& field = "over");

// Checks lo < hi, both finite and inside param_domain(name); throws InvalidParams naming
// lo_field or hi_field.
void validate_range(const std::string& name, double lo, double hi, const std::string& lo_field,
                    const std::string& hi_field);

// The options a search along `name` shares (theory/optimize.hpp, theory/boundary.hpp,
// docs/errors_phases.md §18.1, §19.1): the range [lo, hi] (both NaN for default_range(name), else
// validate_range), scan_points in [5, 100000], bits in [4, 52], max_iterations in [1, 100000];
// throws InvalidParams naming "lo", "hi", "scan_points", "bits" or "max_iterations".
void validate_search(const std::string& name, double lo, double hi, int scan_points, int bits,
                     int max_iterations);
// The range a search uses: [lo, hi], or default_range(name, field) when both are NaN.
std::pair<double, double> search_range(const std::string& name, double lo, double hi,
                                       const std::string& field);

// base with `name` set to v (Params::set: gamma sets tau, kappa keeps tau): a point of a
// sweep, grid, scan or boundary. Varying rho under a task_spectrum throws InvalidParams("rho")
// (Params::set: the spectrum, fixed when it was built, is the whole task covariance).
Params with_param(const Params& base, const std::string& name, double v);

// The exact derivative of `quantity` in the search coordinate t along the parameter `name` (t = x,
// or ln x on a log scale: x d/dx), from s.gradient (docs/sensitivity.md §22); NaN without a
// converged gradient.
double exact_slope(const Solution& s, const std::string& quantity, const std::string& name,
                   bool log_scale);

// Validates p as the method needs (Letey: validate(); otherwise validate_for_saddle_point()).
void validate_for(const Params& p, Method method);

// solve(p, options); for the saddle point, when that does not converge and `warm` is given, once
// more from the order parameters `warm` (a converged neighbour), keeping the better attempt
// (converged first, then the smaller residual).
Solution solve_near(const Params& p, const SolveOptions& options, const OrderParams* warm);

}  // namespace icl::theory
