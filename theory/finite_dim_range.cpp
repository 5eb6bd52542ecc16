// The range of the finite-D expansion (docs/finite_dim.md §21.9): how large the O(1/D)
// correction is against the limit it corrects, the estimated O(1/D^2) remainder, and the
// verdict valid / not valid with its reason.
#include <cmath>
#include <cstdio>
#include <string>

#include "theory/finite_dim.hpp"

namespace icl::theory {

FiniteDimValidity finite_dim_validity(const FiniteDimResult& r) {
  FiniteDimValidity v;
  if (!r.converged()) {
    v.reason = "no finite-D prediction (" + r.message + ")";
    const double nan = std::nan("");
    v.relative_correction = v.remainder = {nan, nan, nan};
    return v;
  }
  // Per error: eps = sum_s |c_s| / |E_inf| (absolute values: sources that cancel in the sum
  // still contribute their products to the O(1/D^2) rest).
  const auto eps_of = [&](const auto& correction, double limit) {
    double sum = 0;
    for (const FiniteDimSource& s : r.sources) sum += std::abs(correction(s));
    return sum / std::abs(limit);
  };
  const struct {
    const char* name;
    double Errors::*member;
  } errors[] = {{"TM", &Errors::tm}, {"IDG", &Errors::idg}, {"ODG", &Errors::odg}};
  const char* worst = errors[0].name;
  double worst_eps = -1;
  for (const auto& e : errors) {
    const double eps =
        eps_of([&](const FiniteDimSource& s) { return s.correction.*e.member; },
               r.limit.error.*e.member);
    v.relative_correction.*e.member = eps;
    v.remainder.*e.member = eps * eps * std::abs(r.limit.error.*e.member);
    if (!(eps <= worst_eps)) {  // NaN counts as the worst
      worst_eps = eps;
      worst = e.name;
    }
  }
  if (r.limit.test_shift) {
    const double limit = r.limit.test_shift->error;
    const double eps =
        eps_of([&](const FiniteDimSource& s) { return s.shift_slope / r.options.dim; }, limit);
    v.shift_remainder = eps * eps * std::abs(limit);
  }
  v.valid = worst_eps <= kMaxRelativeCorrection;
  if (v.valid) return v;
  // eps scales as 1/D at fixed ratios: the first D that passes, as a guide.
  const double needed = std::ceil(r.options.dim * worst_eps / kMaxRelativeCorrection);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "outside the O(1/D) expansion's range at D = %d: the corrections of %s add up to "
                "%.0f%% of its D -> infinity value (at most %.0f%%, so that the estimated "
                "O(1/D^2) rest stays below a quarter of the correction); about D >= %.0f is "
                "needed",
                r.options.dim, worst, 100 * worst_eps, 100 * kMaxRelativeCorrection, needed);
  v.reason = buf;
  return v;
}

}  // namespace icl::theory
