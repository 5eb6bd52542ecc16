#include "numerics/table.hpp"

#include <charconv>
#include <cmath>
#include <cctype>

namespace icl::numerics {

void append_number(std::string& text, double v) {
  if (std::isnan(v)) {
    text += "nan";
  } else if (std::isinf(v)) {
    text += v > 0 ? "inf" : "-inf";
  } else {
    char buf[40];
    const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17).ptr;
    text.append(buf, end);
  }
}

std::string format_number(double v) {
  std::string s;
  append_number(s, v);
  return s;
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

void append_row_line(std::string& text, const std::vector<double>& row, char separator) {
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) text += separator;
    append_number(text, row[i]);
  }
  text += '\n';
}

std::string row_line(const std::vector<double>& row, char separator) {
  std::string line;
  append_row_line(line, row, separator);
  return line;
}

std::string Table::to_text(char separator) const {
  std::string text = header_line(columns, separator);
  for (const auto& row : rows) append_row_line(text, row, separator);
  return text;
}

}  // namespace icl::numerics
