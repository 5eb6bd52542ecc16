#include "numerics/table.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace icl::numerics {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Table::to_tsv() const {
  std::ostringstream os;
  for (std::size_t i = 0; i < columns.size(); ++i) os << (i ? "\t" : "") << columns[i];
  os << '\n';
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) os << (i ? "\t" : "") << format_number(row[i]);
    os << '\n';
  }
  return os.str();
}

}  // namespace icl::numerics
