#include "numerics/table.hpp"

#include <cmath>
#include <cstdio>
#include <cctype>

namespace icl::numerics {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

char table_separator(const std::string& path) {
  std::string tail = path.size() >= 4 ? path.substr(path.size() - 4) : path;
  for (char& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".csv" ? ',' : '\t';
}

std::string header_line(const std::vector<std::string>& columns, char separator) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) line += separator;
    line += columns[i];
  }
  return line + '\n';
}

std::string row_line(const std::vector<double>& row, char separator) {
  std::string line;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) line += separator;
    line += format_number(row[i]);
  }
  return line + '\n';
}

std::string Table::to_text(char separator) const {
  std::string text = header_line(columns, separator);
  for (const auto& row : rows) text += row_line(row, separator);
  return text;
}

}  // namespace icl::numerics
