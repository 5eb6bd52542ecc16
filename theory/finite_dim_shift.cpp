// The shifted test protocol at finite D (docs/finite_dim.md §21.11): when the test covariance is
// an affine combination a Sigma + b I of the training covariance and the identity (a + b = 1),
// the exact finite-D test error is the same combination of IDG and ODG for every trained Gamma,
// so the finite-D prediction of the shifted error is a IDG(D) + b ODG(D), with no new source.
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "theory/finite_dim.hpp"

namespace icl::theory {

std::optional<std::pair<double, double>> shift_as_idg_odg(const Params& p) {
  const std::vector<double> test = p.test_eigenvalues();
  const std::vector<numerics::Atom> levels = p.population_spectrum();
  if (test.empty() || test.size() != levels.size()) return std::nullopt;
  // t'_k = a t_k + b on every level: a from the two training levels farthest apart, then
  // checked on all (the weighted means of t and t' are both 1, so a + b = 1 follows). With one
  // distinct training level (Sigma = I, e.g. rho = 1) C_test must equal Sigma: a = 1, b = 0.
  std::size_t j = 0;
  auto gap = [&](std::size_t k) { return std::abs(levels[k].position - levels[0].position); };
  for (std::size_t k = 1; k < levels.size(); ++k)
    if (gap(k) > gap(j)) j = k;
  const double a = j == 0 ? 1.0 : (test[j] - test[0]) / (levels[j].position - levels[0].position);
  const double b = test[0] - a * levels[0].position;
  for (std::size_t k = 0; k < levels.size(); ++k)
    if (std::abs(test[k] - (a * levels[k].position + b)) > 1e-12 * (1 + std::abs(test[k])))
      return std::nullopt;
  return std::pair{a, b};
}

namespace detail {

void add_test_shift(FiniteDimResult& r) {
  if (!r.limit.test_shift) return;
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  TestShift s = *r.limit.test_shift;
  s.decomposition = {nan, nan, nan};  // add_decomposition's (§21.17)
  s.error = nan;
  const auto w = shift_as_idg_odg(r.sized);
  if (!w) {
    r.omitted.push_back("test_shift_levels");
  } else if (r.converged()) {
    s.error = w->first * r.error.idg + w->second * r.error.odg;
  }
  r.test_shift = s;
}

}  // namespace detail

}  // namespace icl::theory
