#include "theory/param_input.hpp"

#include <cmath>
#include <sstream>

#include "numerics/error.hpp"

namespace icl::theory {

bool task_spectrum_uses_rho(const std::string& text) { return text.rfind("complement:", 0) == 0; }

std::vector<numerics::Atom> task_spectrum_from_string(const std::string& text, double rho) {
  auto bad = [&](const std::string& why) {
    return InvalidParams("task_spectrum", "'" + text + "': " + why +
                                              " (powerlaw:EXP:LEVELS | complement:EPS | "
                                              "t1:w1,t2:w2,...)");
  };
  auto number = [&](const std::string& s) {
    std::size_t pos = 0;
    double v = 0;
    try {
      v = std::stod(s, &pos);
    } catch (...) {
      throw bad("not a number: '" + s + "'");
    }
    if (pos != s.size() || !std::isfinite(v)) throw bad("not a finite number: '" + s + "'");
    return v;
  };
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ':');) parts.push_back(item);
  if (!parts.empty() && parts[0] == "powerlaw") {
    if (parts.size() != 3) throw bad("powerlaw needs EXP:LEVELS");
    const double exponent = number(parts[1]), levels = number(parts[2]);
    if (exponent < 0) throw bad("EXP must be >= 0");
    if (levels < 1 || levels > 1e6 || levels != std::floor(levels))
      throw bad("LEVELS must be a whole number in [1, 1000000]");
    return power_law_spectrum(exponent, static_cast<int>(levels));
  }
  if (!parts.empty() && parts[0] == "complement") {
    if (parts.size() != 2) throw bad("complement needs EPS");
    const double epsilon = number(parts[1]);
    if (epsilon < 0) throw bad("EPS must be >= 0");
    return low_rank_plus_complement_spectrum(rho, epsilon);  // InvalidParams("rho") if out of range
  }
  std::vector<numerics::Atom> out;
  std::stringstream pairs(text);
  for (std::string pair; std::getline(pairs, pair, ',');) {
    const auto colon = pair.find(':');
    if (colon == std::string::npos) throw bad("expected t:w pairs");
    out.push_back({number(pair.substr(0, colon)), number(pair.substr(colon + 1))});
  }
  if (out.empty()) throw bad("empty");
  return out;
}

Params ParamInput::build() const {
  if (tau && gamma) throw InvalidParams("gamma", "give tau or gamma = tau/kappa, not both");
  if (task_spectrum_text && task_spectrum)
    throw InvalidParams("task_spectrum", "give the spectrum as text or as atoms, not both");
  Params p;
  if (alpha) p.alpha = *alpha;
  if (alpha_test) p.alpha_test = *alpha_test;
  if (tau) p.tau = *tau;
  if (kappa) p.kappa = *kappa;
  if (gamma) p.tau = *gamma * p.kappa;
  if (sigma) p.sigma = *sigma;
  if (sigma_test) p.sigma_test = *sigma_test;
  if (lambda) p.lambda = *lambda;
  if (rho) p.rho = *rho;
  // rho is the rank fraction of the paper's tasks and the strong fraction of complement:EPS;
  // every other spectrum is the whole task covariance, so a given rho would be ignored
  // silently (docs/general_covariance.md §12.1).
  const bool spectrum = task_spectrum_text || task_spectrum;
  if (rho && spectrum && !(task_spectrum_text && task_spectrum_uses_rho(*task_spectrum_text)))
    throw InvalidParams("rho", "conflicts with the task spectrum" +
                                   (task_spectrum_text ? " '" + *task_spectrum_text + "'"
                                                       : std::string()) +
                                   ": that spectrum is the whole task covariance and does not "
                                   "use rho (only complement:EPS takes rho, its fraction of "
                                   "strong directions); drop rho");
  if (task_spectrum_text) p.task_spectrum = task_spectrum_from_string(*task_spectrum_text, p.rho);
  if (task_spectrum) p.task_spectrum = *task_spectrum;
  p.test_overlap = test_overlap;
  p.test_levels = test_levels;
  return p;
}

Params ParamInput::resolve() const {
  Params p = build();
  p.validate();
  return p;
}

}  // namespace icl::theory
