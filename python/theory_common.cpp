#include "python/theory_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "theory/serialize.hpp"

namespace icl::python {

std::string param_name(const std::string& name) { return name == "lambda_" ? "lambda" : name; }

theory::SolveOptions solve_options(const std::string& method, const std::string& moments,
                                   double residual_tolerance, int max_iterations) {
  theory::SolveOptions o;
  o.method = theory::method_from_string(method);
  o.moments = numerics::moment_method_from_string(moments);
  o.solver.residual_tolerance = residual_tolerance;
  o.solver.max_iterations = max_iterations;
  o.validate();
  return o;
}

namespace {

// How a column is typed in Python: converged as bool, iterations as int, every other as double.
enum class ColumnKind { Double, Bool, Int };
ColumnKind column_kind(const std::string& name) {
  if (name == "converged") return ColumnKind::Bool;
  if (name == "iterations") return ColumnKind::Int;
  return ColumnKind::Double;
}

// A new array of `shape` typed for a column of that kind.
py::array typed_array(ColumnKind kind, const std::vector<py::ssize_t>& shape) {
  switch (kind) {
    case ColumnKind::Bool: return py::array_t<bool>(shape);
    case ColumnKind::Int: return py::array_t<int>(shape);
    case ColumnKind::Double: break;
  }
  return py::array_t<double>(shape);
}

// Element i of the data of an array made by typed_array(kind) set to v (converted as a
// static_cast does). The data pointer is taken once per column: mutable_data() checks the array
// on every call.
void store(void* data, ColumnKind kind, std::size_t i, double v) {
  switch (kind) {
    case ColumnKind::Bool: static_cast<bool*>(data)[i] = static_cast<bool>(v); return;
    case ColumnKind::Int: static_cast<int*>(data)[i] = static_cast<int>(v); return;
    case ColumnKind::Double: static_cast<double*>(data)[i] = v; return;
  }
}

// Column c of `rows` into a new array of `shape`, typed by the column's name.
py::object column_array(const std::string& name, const std::vector<std::vector<double>>& rows,
                        std::size_t c, const std::vector<py::ssize_t>& shape) {
  const ColumnKind kind = column_kind(name);
  py::array a = typed_array(kind, shape);
  void* data = a.mutable_data();
  for (std::size_t i = 0; i < rows.size(); ++i) store(data, kind, i, rows[i][c]);
  return a;
}

}  // namespace

py::dict parameter_arrays(const std::vector<theory::Solution>& sols,
                          const std::vector<py::ssize_t>& shape) {
  py::dict out;
  for (const std::string& name : theory::Params::names()) {
    py::array_t<double> column(shape);
    double* data = column.mutable_data();
    bool any = false;
    const theory::Params::Getter get = theory::Params::getter(name);
    for (std::size_t i = 0; i < sols.size(); ++i) {
      data[i] = get(sols[i].params);
      any = any || !std::isnan(data[i]);
    }
    if (any || name != "test_overlap") out[py::str(name)] = column;
  }
  return out;
}

void add_gradient_arrays(py::dict& out, const std::vector<theory::Solution>& sols,
                         const std::vector<py::ssize_t>& shape) {
  if (sols.empty() || !sols.front().gradient) return;
  const theory::Solution& first = sols.front();
  const std::vector<std::string> columns = theory::gradient_columns(first.params, first.method);
  std::vector<std::vector<double>> rows;
  for (const theory::Solution& s : sols) rows.push_back(theory::gradient_row(s, columns));
  for (std::size_t c = 0; c < columns.size(); ++c)
    out[py::str(columns[c])] = column_array(columns[c], rows, c, shape);
  // The whole gradient: the rows and columns of the first point (every point alike).
  const theory::Gradient& g = *first.gradient;
  py::dict all;
  for (std::size_t r = 0; r < g.outputs.size(); ++r) {
    py::dict row;
    for (std::size_t c = 0; c < g.parameters.size(); ++c) {
      std::vector<std::vector<double>> cells;
      for (const theory::Solution& s : sols) {
        const bool ok = s.gradient && s.gradient->converged() &&
                        s.gradient->outputs.size() == g.outputs.size();
        cells.push_back({ok ? s.gradient->values(Eigen::Index(r), Eigen::Index(c))
                            : std::numeric_limits<double>::quiet_NaN()});
      }
      row[py::str(g.parameters[c])] = column_array(g.parameters[c], cells, 0, shape);
    }
    all[py::str(g.outputs[r])] = row;
  }
  out["_gradient"] = all;
}

py::dict solutions_to_arrays(const std::vector<theory::Solution>& sols,
                             const std::vector<py::ssize_t>& shape) {
  const bool shift = theory::any_test_shift(sols);
  const std::vector<std::string> names = theory::solution_columns(shift);
  // Column by column from one row buffer (no table of rows).
  std::vector<ColumnKind> kinds;
  std::vector<py::array> arrays;
  std::vector<void*> data;
  for (const std::string& name : names) {
    kinds.push_back(column_kind(name));
    arrays.push_back(typed_array(kinds.back(), shape));
    data.push_back(arrays.back().mutable_data());
  }
  std::vector<double> row;
  for (std::size_t i = 0; i < sols.size(); ++i) {
    theory::solution_row(sols[i], shift, row);
    for (std::size_t c = 0; c < names.size(); ++c) store(data[c], kinds[c], i, row[c]);
  }
  py::dict out;
  for (std::size_t c = 0; c < names.size(); ++c) out[py::str(names[c])] = arrays[c];
  return out;
}

py::dict table_to_arrays(const numerics::Table& table, const std::vector<std::string>& skip) {
  const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(table.rows.size())};
  py::dict out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    out[py::str(name)] = column_array(name, table.rows, c, shape);
  }
  return out;
}

}  // namespace icl::python
