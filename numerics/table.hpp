// The one table type of the project: named numeric columns with one header row, written as TSV
// (docs/README.md, "Data files"). Sweeps, phase grids, figure data and the patch experiments'
// per-step tables are all this type; their serializers only fill it.
#pragma once
#include <string>
#include <vector>

namespace icl::numerics {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;  // each of columns.size() values
  // The header row (columns joined by `separator`), then one line per row, numbers by
  // format_number. to_tsv(): with tabs.
  std::string to_text(char separator) const;
  std::string to_tsv() const { return to_text('\t'); }
};

// The separator of a table written to `path`: ',' for a name ending in ".csv" (any case), a tab
// otherwise (TSV, the project's data format).
char table_separator(const std::string& path);
// One line of a table's text (with its '\n'): the header, or a row of numbers.
std::string header_line(const std::vector<std::string>& columns, char separator);
std::string row_line(const std::vector<double>& row, char separator);
// The same appended to `text` (no temporary string per number or per row: the writers of large
// tables, e.g. icl phase, call this per row).
void append_row_line(std::string& text, const std::vector<double>& row, char separator);

// A double in full precision (%.17g, exact round trip); non-finite as "nan", "inf", "-inf".
// Formatted by std::to_chars(general, 17), which the standard defines as printf's %.17g (the
// same text, about 5x faster than snprintf).
std::string format_number(double v);
// format_number(v) appended to `text`.
void append_number(std::string& text, double v);

}  // namespace icl::numerics
