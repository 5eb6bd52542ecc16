// Numbers in human-readable messages (errors, statuses): `digits` significant digits, %g style
// ("inf", "nan" included). Data files use full precision instead (numerics/table.hpp format_number).
#pragma once
#include <cstdio>
#include <string>

namespace icl::numerics {

inline std::string format_significant(double v, int digits = 6) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace icl::numerics
