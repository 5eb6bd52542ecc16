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
  // The header row (columns joined by tabs), then one line per row, numbers by format_number.
  std::string to_tsv() const;
};

// A double in full precision (%.17g, exact round trip); non-finite as "nan", "inf", "-inf".
std::string format_number(double v);

}  // namespace icl::numerics
