// The finite-D theory's inputs (docs/finite_dim.md §21.1, §21.8): the names of its sources, its
// options, a front end's request for it, and the parameters at the integer sizes of dimension D
// (docs/simulation.md §13.1). The theory itself is theory/finite_dim.cpp.
#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "theory/finite_dim.hpp"

namespace icl::theory {

const std::vector<std::string>& finite_dim_source_names() {
  static const std::vector<std::string> names = {
      "test_context", "context_mean", "context_scalars", "context_quadratic_forms",
      "query_norms",  "task_sampling", "task_norms",     "task_counts"};
  return names;
}

void FiniteDimOptions::validate() const {
  switches.validate();
  if (dim < 2) throw InvalidParams("dim", "must be >= 2 (got " + std::to_string(dim) + ")");
}

std::optional<FiniteDimOptions> finite_dim_request(std::optional<int> dim,
                                                   const FiniteDSwitches& switches,
                                                   bool used_elsewhere,
                                                   const std::string& elsewhere) {
  switches.validate();
  if (!dim) {
    const auto on = switches.names_on();
    if (!on.empty() && !used_elsewhere)
      throw InvalidParams(on.front(), "a finite-D switch needs finite_dim (the finite-D "
                                      "prediction)" + (elsewhere.empty() ? "" : " or " + elsewhere));
    return std::nullopt;
  }
  FiniteDimOptions o;
  o.dim = *dim;
  o.switches = switches;
  o.validate();
  return o;
}

Params at_dimension(const Params& p, int dim) {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2 (got " + std::to_string(dim) + ")");
  p.validate();
  // The simulator's integer sizes (docs/simulation.md §13.1), each at least 1.
  const double D = dim;
  auto size = [](double x) { return std::max(1.0, std::round(x)); };
  Params s = p;
  if (p.task_spectrum.empty()) s.rho = size(p.rho * D) / D;
  s.kappa = size(p.kappa * D) / D;
  s.tau = size(p.tau * D * D) / (D * D);
  s.alpha = size(p.alpha * D) / D;
  if (p.alpha_test >= 0) s.alpha_test = size(p.alpha_test * D) / D;
  return s;
}

}  // namespace icl::theory
