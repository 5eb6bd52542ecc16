#include "theory/params.hpp"

#include <algorithm>

#include <cmath>
#include <cstdio>

#include "numerics/error.hpp"
#include "numerics/suggest.hpp"
#include "numerics/format.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::require_finite;
using detail::fmt;

}  // namespace

void Params::validate() const {
  require_finite("alpha", alpha);
  require_finite("alpha_test", alpha_test);
  require_finite("tau", tau);
  require_finite("kappa", kappa);
  require_finite("rho", rho);
  require_finite("sigma", sigma);
  require_finite("sigma_test", sigma_test);
  require_finite("lambda", lambda);
  if (!(alpha > 0)) throw InvalidParams("alpha", "must be > 0 (got " + fmt(alpha) + ")");
  if (alpha_test == 0)
    throw InvalidParams("alpha_test", "must be > 0, or negative for 'same as alpha' (got 0)");
  if (!(tau > 0)) throw InvalidParams("tau", "must be > 0 (got " + fmt(tau) + ")");
  if (!(kappa > 0)) throw InvalidParams("kappa", "must be > 0 (got " + fmt(kappa) + ")");
  if (!(rho > 0 && rho <= 1))
    throw InvalidParams("rho", "must be in (0, 1] (got " + fmt(rho) + ")");
  if (sigma < 0) throw InvalidParams("sigma", "must be >= 0 (got " + fmt(sigma) + ")");
  if (sigma_test < 0)
    throw InvalidParams("sigma_test", "must be >= 0 (got " + fmt(sigma_test) + ")");
  if (lambda < 0) throw InvalidParams("lambda", "must be >= 0 (got " + fmt(lambda) + ")");
  if (!task_spectrum.empty()) {
    double total = 0, mean = 0;
    for (const auto& a : task_spectrum) {
      if (!std::isfinite(a.position) || a.position < 0)
        throw InvalidParams("task_spectrum", "eigenvalues must be finite and >= 0 (got " +
                                                 fmt(a.position) + ")");
      if (!std::isfinite(a.mass) || !(a.mass > 0))
        throw InvalidParams("task_spectrum", "weights must be > 0 (got " + fmt(a.mass) + ")");
      total += a.mass;
      mean += a.mass * a.position;
    }
    if (std::abs(total - 1) > 1e-9)
      throw InvalidParams("task_spectrum", "weights must sum to 1 (got " + fmt(total) +
                                               ", off by " + fmt(total - 1) + ")");
    if (std::abs(mean - 1) > 1e-9)
      throw InvalidParams("task_spectrum",
                          "mean eigenvalue must be 1 so that |w|^2/D = 1 (got " + fmt(mean) +
                              ", off by " + fmt(mean - 1) + ")");
  }
  if (test_overlap && !test_levels.empty())
    throw InvalidParams("test_overlap", "give test_overlap (low-rank tasks) or test_levels "
                                        "(a general task_spectrum), not both");
  if (test_overlap) {
    const double c = *test_overlap;
    require_finite("test_overlap", c);
    if (!(c >= 0 && c <= 1))
      throw InvalidParams("test_overlap", "must be in [0, 1] (got " + fmt(c) + ")");
    if (!task_spectrum.empty())
      throw InvalidParams("test_overlap", "is defined for the paper's low-rank tasks; with a "
                                          "task_spectrum give test_levels");
    if (rho == 1 && c != 1)
      throw InvalidParams("test_overlap", "must be 1 when rho = 1: span(A) is the whole space, "
                                          "there is no complement to put energy in (got " +
                                              fmt(c) + ")");
  }
  if (!test_levels.empty()) {
    if (task_spectrum.empty())
      throw InvalidParams("test_levels", "needs a task_spectrum (for low-rank tasks give "
                                         "test_overlap)");
    if (test_levels.size() != task_spectrum.size())
      throw InvalidParams("test_levels", "needs one eigenvalue per task_spectrum level (" +
                                             std::to_string(task_spectrum.size()) + "), got " +
                                             std::to_string(test_levels.size()));
    double mean = 0;
    for (std::size_t k = 0; k < test_levels.size(); ++k) {
      const double t = test_levels[k];
      if (!std::isfinite(t) || t < 0)
        throw InvalidParams("test_levels", "eigenvalues must be finite and >= 0 (got " +
                                               fmt(t) + ")");
      mean += task_spectrum[k].mass * t;
    }
    if (std::abs(mean - 1) > 1e-9)
      throw InvalidParams("test_levels", "weighted mean sum_k w_k t'_k must be 1 so that "
                                         "|w|^2/D = 1 (got " + fmt(mean) + ")");
  }
}

std::vector<double> Params::test_eigenvalues() const {
  if (!test_levels.empty()) return test_levels;
  if (!test_overlap) return {};
  const double c = *test_overlap;
  // population_spectrum(): {(1/rho, rho), (0, 1 - rho)}; energy C on span(A), 1 - C off it.
  if (rho == 1) return {1.0};
  return {c / rho, (1.0 - c) / (1.0 - rho)};
}

std::vector<numerics::Atom> Params::population_spectrum() const {
  if (!task_spectrum.empty()) return task_spectrum;
  std::vector<numerics::Atom> pop{{1.0 / rho, rho}};
  if (rho < 1) pop.push_back({0.0, 1.0 - rho});
  return pop;
}

double Params::structural_rank() const {
  // The low-rank spectrum {(1/rho, rho), (0, 1 - rho)} has rho there (0 + rho, exactly), without
  // building it: every solve asks (regime()).
  if (task_spectrum.empty()) return rho;
  double r = 0;
  for (const auto& a : task_spectrum)
    if (a.position > 0) r += a.mass;
  return r;
}

void Params::validate_for_saddle_point() const {
  validate();
  if (on_ridgeless_branch())
    throw InvalidParams("lambda",
                        "lambda = 0 needs tau > 1 (got tau = " + fmt(tau) +
                            "): the ridgeless saddle point has no unique solution below the "
                            "interpolation threshold; use lambda > 0 or --method letey");
}

const std::vector<std::string>& Params::names() {
  static const std::vector<std::string> n = {"alpha", "alpha_test", "tau",   "gamma",     "kappa",
                                             "rho",   "sigma",      "sigma_test", "lambda", "test_overlap"};
  return n;
}

void Params::check_name(const std::string& name, const std::string& field) {
  const auto& n = names();
  if (std::find(n.begin(), n.end(), name) != n.end()) return;
  std::string list;
  for (const auto& k : n) list += (list.empty() ? "" : ", ") + k;
  throw InvalidParams(field, "unknown parameter '" + name + "'" +
                                 numerics::did_you_mean(name, n) + "; one of " + list);
}

Params::Getter Params::getter(const std::string& name) {
  using P = const Params&;
  if (name == "alpha") return [](P p) { return p.alpha; };
  if (name == "alpha_test") return [](P p) { return p.effective_alpha_test(); };
  if (name == "tau") return [](P p) { return p.tau; };
  if (name == "gamma") return [](P p) { return p.gamma(); };
  if (name == "kappa") return [](P p) { return p.kappa; };
  if (name == "rho") return [](P p) { return p.rho; };
  if (name == "sigma") return [](P p) { return p.sigma; };
  if (name == "sigma_test") return [](P p) { return p.sigma_test; };
  if (name == "lambda") return [](P p) { return p.lambda; };
  if (name == "test_overlap") return [](P p) { return p.test_overlap.value_or(std::nan("")); };
  check_name(name);
  return [](P) { return std::nan(""); };
}

double Params::get(const std::string& name) const { return getter(name)(*this); }

void Params::set(const std::string& name, double value) {
  if (name == "alpha") alpha = value;
  else if (name == "alpha_test") alpha_test = value;
  else if (name == "tau") tau = value;
  else if (name == "gamma") tau = value * kappa;
  else if (name == "kappa") kappa = value;
  else if (name == "rho") {
    // A spectrum, fixed when it was built, is the whole task covariance: rho would change
    // nothing (docs/general_covariance.md §12.1).
    if (!task_spectrum.empty())
      throw InvalidParams("rho", "cannot be set with a task spectrum: the spectrum is the whole "
                                 "task covariance and does not use rho (build one spectrum per "
                                 "rho instead)");
    rho = value;
  } else if (name == "sigma") sigma = value;
  else if (name == "sigma_test") sigma_test = value;
  else if (name == "lambda") lambda = value;
  else if (name == "test_overlap") test_overlap = value;
  else check_name(name);
}

}  // namespace icl::theory

namespace icl::theory {

std::vector<numerics::Atom> power_law_spectrum(double exponent, int levels) {
  if (!std::isfinite(exponent) || exponent < 0)
    throw InvalidParams("exponent", "must be finite and >= 0");
  if (levels < 1) throw InvalidParams("levels", "must be >= 1");
  std::vector<numerics::Atom> s(levels);
  double mean = 0;
  for (int k = 0; k < levels; ++k) {
    s[k] = {std::pow(k + 1.0, -exponent), 1.0 / levels};
    mean += s[k].position / levels;
  }
  for (auto& a : s) a.position /= mean;
  return s;
}

std::vector<numerics::Atom> low_rank_plus_complement_spectrum(double rho, double epsilon) {
  if (!(rho > 0 && rho <= 1)) throw InvalidParams("rho", "must be in (0, 1]");
  if (!std::isfinite(epsilon) || epsilon < 0) throw InvalidParams("epsilon", "must be >= 0");
  const double a = 1.0 / (rho + epsilon * (1 - rho));
  std::vector<numerics::Atom> s{{a, rho}};
  if (rho < 1) s.push_back({epsilon * a, 1 - rho});
  return s;
}

}  // namespace icl::theory
