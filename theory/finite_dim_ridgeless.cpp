// The finite-D theory on the ridgeless branch (docs/finite_dim.md §21.10): lambda = 0 below the
// interpolation threshold, the minimum-norm solution. At every D it is the lambda -> 0+ limit of
// the ridge solution, so its O(1/D) slope of every source is the limit of the ridge slopes of
// §21.2, taken here by Richardson extrapolation in lambda; the D -> infinity part is the
// Letey/Lu ridgeless solution (docs/errors_phases.md §11) at the sizes of D.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "theory/finite_dim.hpp"

namespace icl::theory {

namespace {

// The ridges lambda_k = kFirstRidge / 2^k, k = 0 .. kMaxHalvings (docs/finite_dim.md §21.10):
// the first is small against the effective ridge -z = O(1) of the branch; the last, 6e-8, is
// where the ridge root's own accuracy (a relative 1e-14 on chi ~ 1/lambda) is no longer below
// the agreement asked for.
constexpr double kFirstRidge = 1e-3;
constexpr int kMaxHalvings = 14;
// Two successive second-order extrapolations agree to this, relative to max(1, |slope|), for
// every source's error slopes and the order parameters' slopes.
constexpr double kAgreement = 1e-4;

// Slopes per source in slopes_of: TM, IDG, ODG, the shifted error and the order parameters'.
constexpr std::size_t kPerSource = 4 + std::size(detail::kSourceOrderFields);

// The slopes a finite-D result carries, flattened: first the channel's rest beyond O(1/D)
// (docs/finite_dim.md §21.18, TM, IDG, ODG), whose lambda -> 0+ limit is taken alike; then per
// source TM, IDG, ODG, the shifted error's (NaN without a shifted protocol) and the slopes of
// the order parameters it moves (detail::kSourceOrderFields).
std::vector<double> slopes_of(const FiniteDimResult& r) {
  std::vector<double> v = {r.second_order.tm, r.second_order.idg, r.second_order.odg};
  for (const FiniteDimSource& s : r.sources) {
    v.insert(v.end(), {s.slope.tm, s.slope.idg, s.slope.odg, s.shift_slope});
    for (double OrderParams::*f : detail::kSourceOrderFields) v.push_back(s.order_slope.*f);
  }
  return v;
}

// a * x + b * y, element by element.
std::vector<double> combine(double a, const std::vector<double>& x, double b,
                            const std::vector<double>& y) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = a * x[i] + b * y[i];
  return out;
}

// The largest relative difference; entries NaN in both (a shifted slope without a shifted
// protocol) are skipped, a NaN in one of them is a disagreement.
double disagreement(const std::vector<double>& x, const std::vector<double>& y) {
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    const double e = std::abs(x[i] - y[i]) / std::max(1.0, std::abs(y[i]));
    d = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(d, e);
  }
  return d;
}

// The extrapolated slopes written into r's sources, their sums and the corrected values.
void write_slopes(FiniteDimResult& r, const std::vector<double>& v) {
  r.second_order = {v[0], v[1], v[2]};
  for (std::size_t k = 0; k < r.sources.size(); ++k) {
    const double* s = v.data() + 3 + kPerSource * k;
    FiniteDimSource& src = r.sources[k];
    src.slope = {s[0], s[1], s[2]};
    src.shift_slope = s[3];
    src.order_slope = OrderParams{};
    const double* o = s + 4;
    for (double OrderParams::*f : detail::kSourceOrderFields) src.order_slope.*f = *o++;
  }
  detail::sum_sources(r);
}

std::string format(const char* fmt, double a, double b, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

}  // namespace

namespace detail {

FiniteDimResult solve_finite_dim_ridgeless(const Params& p, const FiniteDimOptions& options) {
  FiniteDimResult r;
  r.options = options;
  r.sized = at_dimension(p, options.dim);
  if (r.sized.tau == 1)
    throw InvalidParams("tau", "the minimum-norm solution at the interpolation peak (N = D^2 "
                               "sequences at the sizes of D) has no finite-D expansion: its "
                               "error diverges (docs/finite_dim.md §21.10)");
  SolveOptions so = options.solve;
  so.method = Method::Letey;
  r.limit = solve(r.sized, so);
  r.residual_norm = r.limit.residual_norm;
  if (!r.limit.converged()) {
    r.status = r.limit.status;
    r.message = "the D -> infinity (Letey/Lu) solve did not converge: " + r.limit.message;
    r.sources = detail::unset_sources();
    return failed(r);
  }
  // The ridge slopes s(lambda) = s0 + a lambda + b lambda^2 + ... on lambda_k = lambda_0 2^-k;
  // first- and second-order Richardson tables give s0 (§21.10).
  std::vector<double> first_prev, second_prev, slopes_prev;
  double agreement = NAN, ridge = kFirstRidge;
  bool settled = false, rest_missing = false;
  std::string failure;
  for (int k = 0; k <= kMaxHalvings && !settled; ++k, ridge /= 2) {
    Params at_ridge = r.sized;
    at_ridge.lambda = ridge;
    const FiniteDimResult ridge_result = solve_finite_dim_saddle(at_ridge, options);
    if (!ridge_result.converged()) {
      failure = format("the ridge prediction at lambda = %.3g failed (", ridge, 0) +
                ridge_result.message + ")";
      break;
    }
    if (k == 0) {
      r.sources = ridge_result.sources;
      r.omitted = ridge_result.omitted;
    }
    r.residual_norm = std::max(r.residual_norm, ridge_result.residual_norm);
    // The channel's second order (docs/finite_dim.md §21.18) only when every ridge has it.
    for (const auto& name : ridge_result.omitted)
      if (name == detail::kChannelSecondOrder) rest_missing = true;
    std::vector<double> slopes = slopes_of(ridge_result);
    if (rest_missing)  // extrapolate no partial second order: 0 at every ridge
      for (std::vector<double>* v : {&slopes, &slopes_prev, &first_prev, &second_prev})
        for (std::size_t i = 0; i < std::min<std::size_t>(3, v->size()); ++i) (*v)[i] = 0;
    if (k >= 1) {
      const std::vector<double> first = combine(2, slopes, -1, slopes_prev);
      if (k >= 2) {
        const std::vector<double> second = combine(4.0 / 3, first, -1.0 / 3, first_prev);
        if (k >= 3) {
          agreement = disagreement(second, second_prev);
          if (agreement <= kAgreement) {
            write_slopes(r, second);
            settled = true;
          }
        }
        second_prev = second;
      }
      first_prev = first;
    }
    slopes_prev = slopes;
  }
  if (r.sources.empty()) r.sources = detail::unset_sources();
  if (!settled) {
    r.status = numerics::Status::NotConverged;
    r.message = failure.empty()
                    ? format("the lambda -> 0+ limit of the ridge slopes did not settle down to "
                             "lambda = %.3g (last agreement %.2g; near the interpolation peak "
                             "the slopes vary on a ridge scale that shrinks to 0)",
                             2 * ridge, agreement)
                    : "the lambda -> 0+ limit of the ridge slopes: " + failure;
    return failed(r);
  }
  if (rest_missing) {
    r.second_order = {0, 0, 0};
    if (std::find(r.omitted.begin(), r.omitted.end(), detail::kChannelSecondOrder) == r.omitted.end())
      r.omitted.push_back(detail::kChannelSecondOrder);
    detail::sum_sources(r);
  }
  r.status = numerics::Status::Converged;
  r.message = format("ridgeless branch: the Letey/Lu limit at the sizes of D plus the lambda -> "
                     "0+ limit of the ridge slopes (Richardson down to lambda = %.3g, agreement "
                     "%.1e)",
                     2 * ridge, agreement);
  r.validity = finite_dim_validity(r);
  return r;
}

}  // namespace detail

}  // namespace icl::theory
