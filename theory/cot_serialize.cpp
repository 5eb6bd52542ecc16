// The one serializer of the test-time iteration's theory (theory/cot.hpp): the JSON of
// `icl cot --json` and Python's cot() (docs/multistep.md §6), and its text form.
#include <sstream>

#include "numerics/format.hpp"
#include "theory/cot.hpp"

namespace icl::theory {

nlohmann::ordered_json to_json(const CotParams& p) {
  return {{"alpha", p.alpha}, {"tau", p.tau}, {"sigma", p.sigma}, {"lambda", p.lambda}};
}

// Non-finite numbers stay in the value (Python gets nan/inf); dump() writes them as null.
nlohmann::ordered_json to_json(const CotResult& r) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (std::size_t t = 0; t < r.error.size(); ++t) steps.push_back(t);
  nlohmann::ordered_json j = {{"params", to_json(r.params)},
          {"converged", r.converged()},
          {"status", numerics::to_string(r.status)},
          {"message", r.message},
          {"precision_bits", r.precision_bits},
          {"precision_agreement", r.precision_agreement},
          {"steps", steps},
          {"error", r.error},
          {"error_tau_infinity", r.error_tau_infinity},
          {"tau_c", r.tau_c},
          {"tau_monotone", r.tau_monotone},
          {"tau_crit", r.tau_crit},
          {"regime", to_string(r.regime)},
          {"limit", r.limit},
          {"growth_rate", r.growth_rate},
          {"t_opt", r.t_opt >= 0 ? nlohmann::ordered_json(r.t_opt) : nlohmann::ordered_json()},
          {"error_t_opt", r.error_t_opt}};
  if (r.options.finite_dim > 0)
    j["finite_dim"] = {{"dim", r.options.finite_dim},
                       {"error", r.error_finite_dim},
                       {"error_tau_infinity", r.error_tau_infinity_finite_dim}};
  return j;
}

std::string to_text(const CotResult& r) {
  std::ostringstream os;
  const auto num = [](double v) { return numerics::format_significant(v, 10); };
  os << "test-time iteration  alpha " << num(r.params.alpha) << "  tau " << num(r.params.tau)
     << "  sigma " << num(r.params.sigma) << "  (" << numerics::to_string(r.status) << ": "
     << r.message << ")\n";
  const bool fd = r.options.finite_dim > 0;
  os << "t\tE_t\tE_t(tau=inf)";
  if (fd) os << "\tE_t(D=" << r.options.finite_dim << ")";
  os << "\n";
  for (std::size_t t = 0; t < r.error.size(); ++t) {
    os << t << '\t' << num(r.error[t]) << '\t' << num(r.error_tau_infinity[t]);
    if (fd) os << '\t' << num(r.error_finite_dim[t]);
    os << '\n';
  }
  os << "regime " << to_string(r.regime) << "  tau_c " << num(r.tau_c) << "  tau_monotone "
     << num(r.tau_monotone) << "  tau_crit " << num(r.tau_crit) << "\n";
  os << "limit " << num(r.limit) << "  growth_rate " << num(r.growth_rate) << "  t_opt " << r.t_opt
     << "  E(t_opt) " << num(r.error_t_opt) << "\n";
  return os.str();
}

}  // namespace icl::theory
