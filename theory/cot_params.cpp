// The checks of the test-time iteration's parameters and options (theory/cot.hpp): one home for
// the CLI (`icl cot`), Python (cot) and the simulator.
#include <cmath>
#include <string>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "theory/cot.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::fmt;
using detail::require_finite;

}  // namespace

void CotParams::validate() const {
  require_finite("alpha", alpha);
  require_finite("tau", tau);
  require_finite("sigma", sigma);
  require_finite("lambda", lambda);
  if (!(alpha > 0)) throw InvalidParams("alpha", "must be > 0 (got " + fmt(alpha) + ")");
  if (!(tau > 0)) throw InvalidParams("tau", "must be > 0 (got " + fmt(tau) + ")");
  if (!(sigma >= 0)) throw InvalidParams("sigma", "must be >= 0 (got " + fmt(sigma) + ")");
  if (!(lambda >= 0)) throw InvalidParams("lambda", "must be >= 0 (got " + fmt(lambda) + ")");
}

void CotOptions::validate() const {
  if (steps < 0 || steps > kCotMaxSteps)
    throw InvalidParams("steps", "must be in 0.." + std::to_string(kCotMaxSteps) + " (got " +
                                     std::to_string(steps) + ")");
  if (max_bits < 192 || max_bits > kCotMaxBits)
    throw InvalidParams("max_bits", "must be in 192.." + std::to_string(kCotMaxBits) + " (got " +
                                        std::to_string(max_bits) + ")");
  if (finite_dim != 0 && (finite_dim < 2 || finite_dim > kCotMaxFiniteDim))
    throw InvalidParams("finite_dim", "must be 0 (none) or in 2.." +
                                          std::to_string(kCotMaxFiniteDim) + " (got " +
                                          std::to_string(finite_dim) + ")");
  if (!(relative_tolerance >= 1e-15 && relative_tolerance <= 1e-3))
    throw InvalidParams("relative_tolerance",
                        "must be in [1e-15, 1e-3] (got " + fmt(relative_tolerance) + ")");
}

}  // namespace icl::theory
