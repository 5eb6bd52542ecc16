// One parameter of Params as a coordinate (docs/theory.md §18.1, §19.1): its valid values, a
// default search range, the log or linear scale of a search, a solve at one of its values with a
// warm-start fallback, and the scalar quantities of a Solution that a search can target. Shared by
// theory::optimize and theory::boundary.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "theory/lowrank.hpp"
#include "theory/params.hpp"

namespace icl::theory {

// True for the names of Params::names().
bool is_param_name(const std::string& name);

// The valid values of a parameter (Params::validate, docs/theory.md §1.6): (0, inf) for the
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

// base with `name` set to v (Params::set: gamma sets tau, kappa keeps tau): a point of a
// sweep, grid, scan or boundary. Varying rho under a task_spectrum throws InvalidParams("rho"):
// the spectrum, fixed when it was built, is the whole task covariance and rho would change
// nothing (docs/theory.md §12.1).
Params with_param(const Params& base, const std::string& name, double v);

// Validates p as the method needs (Letey: validate(); otherwise validate_for_saddle_point()).
void validate_for(const Params& p, Method method);

// solve(p, options); for the saddle point, when that does not converge and `warm` is given, once
// more from the order parameters `warm` (a converged neighbour), keeping the better attempt
// (converged first, then the smaller residual).
Solution solve_near(const Params& p, const SolveOptions& options, const OrderParams* warm);

// The scalars of a Solution that a search can target: the TSV columns of a sweep
// (solution_columns(): tm idg odg, the nine decomposition pieces tm_algo ... odg_struct, the
// order parameters q m chi qbar chibar mbar m0 q0 qhat mhat chihat qbarhat chibarhat, z, e, the
// shifted protocol's shift shift_algo shift_mem shift_struct, NaN without one, docs/theory.md
// §20) without the bookkeeping columns converged/residual/iterations, plus bayes_idg, bayes_odg
// and bayes_shift (Solution::bayes_optimal, docs/theory.md §17).
const std::vector<std::string>& quantity_names();
bool is_quantity_name(const std::string& name);
// Throws InvalidParams(field) naming the quantities unless is_quantity_name(name).
void check_quantity_name(const std::string& name, const std::string& field = "quantity");
// The quantity at s; NaN when s did not converge (or the method does not define it). Throws
// InvalidParams(field) for an unknown name.
double quantity_value(const Solution& s, const std::string& name, const std::string& field = "quantity");

}  // namespace icl::theory
