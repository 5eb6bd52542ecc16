// The shifted test protocol at finite D (docs/finite_dim.md §21.11): the limit's shifted error
// plus each source's slope of it (the IDG formula with the test covariance in place of Sigma,
// theory/finite_dim.cpp), and the affine case's identity: when the test covariance is a Sigma +
// b I (a + b = 1) the exact finite-D error is a IDG + b ODG for every trained Gamma.
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
  s.decomposition = {nan, nan, nan};  // add_decomposition's (§21.11, §21.17)
  s.error = nan;
  s.m = s.q = nan;
  // The limit plus each source's slope of the shifted error (the IDG formula with C_test in place
  // of Sigma, source by source: §21.11).
  if (r.converged()) {
    s.error = r.limit.test_shift->error;
    for (const FiniteDimSource& src : r.sources) s.error += src.shift_slope / r.options.dim;
    // The channel's second order (§21.18) where the shift is a IDG + b ODG.
    if (const auto w = shift_as_idg_odg(r.sized))
      s.error += w->first * r.second_order.idg + w->second * r.second_order.odg;
  }
  r.test_shift = s;
}

}  // namespace detail

}  // namespace icl::theory
