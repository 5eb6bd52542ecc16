// The parameters as a user gives them, before the input rules (docs/model.md §1.6): each value
// optional (absent = the default of Params{}), as the command line's flags and Python's keyword
// arguments hold them. The one home of the rules that concern how a point is given rather than
// its values: gamma instead of tau, alpha_test omitted, a task spectrum given as text, and rho
// next to a spectrum that does not use it. The front ends fill a ParamInput and call
// resolve(), so that both refuse the same input naming the same field.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "numerics/spectral_measure.hpp"
#include "theory/params.hpp"

namespace icl::theory {

struct ParamInput {
  std::optional<double> alpha, alpha_test, tau, gamma, kappa, rho, sigma, sigma_test, lambda;
  std::optional<double> test_overlap;
  std::vector<double> test_levels;
  // At most one of the two: a spectrum as text (task_spectrum_from_string) or as atoms.
  std::optional<std::string> task_spectrum_text;
  std::optional<std::vector<numerics::Atom>> task_spectrum;

  // The Params with the input rules applied, not validated:
  //   tau and gamma both given: InvalidParams("gamma"); gamma: tau = gamma * kappa;
  //   both spectrum forms: InvalidParams("task_spectrum");
  //   rho given with a spectrum that does not use it (every one but the text complement:EPS,
  //   which takes rho as its fraction of strong directions): InvalidParams("rho");
  //   a malformed spectrum text: InvalidParams("task_spectrum").
  Params build() const;
  Params resolve() const;  // build(), then Params::validate()
};

// A population task spectrum from its text (the CLI's --task-spectrum):
//   powerlaw:EXP:LEVELS  power_law_spectrum(EXP, LEVELS), EXP >= 0, LEVELS in [1, 10^6]
//   complement:EPS       low_rank_plus_complement_spectrum(rho, EPS), EPS >= 0
//   t1:w1,t2:w2,...      the atoms as given (Params::validate checks weights and mean)
// InvalidParams("task_spectrum") naming what is wrong.
std::vector<numerics::Atom> task_spectrum_from_string(const std::string& text, double rho);
// Whether the text form takes rho (complement:EPS).
bool task_spectrum_uses_rho(const std::string& text);

}  // namespace icl::theory
