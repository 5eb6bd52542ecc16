// Small helpers shared by the theory's sources (internal to theory/): the NaN of values that are
// not defined, numbers in messages, and the rule that an input is a finite number. One copy, so
// that the sources can also be compiled together in one unit (cmake/IclCompileTime.cmake).
#pragma once
#include <cmath>
#include <limits>
#include <string>

#include "numerics/error.hpp"
#include "numerics/format.hpp"

namespace icl::theory::detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Numbers in messages: 6 significant digits.
inline std::string fmt(double v) { return numerics::format_significant(v); }

// "name = value" in messages (a point of a sweep or a grid).
inline std::string describe(const std::string& name, double v) { return name + " = " + fmt(v); }

// Throws InvalidParams(field, ...) unless v is finite.
inline void require_finite(const char* field, double v) {
  if (!std::isfinite(v)) throw InvalidParams(field, "must be a finite number");
}

}  // namespace icl::theory::detail
