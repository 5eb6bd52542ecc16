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

// Column c of `rows` into a new array of `shape`, typed by the column's name.
py::object column_array(const std::string& name, const std::vector<std::vector<double>>& rows,
                        std::size_t c, const std::vector<py::ssize_t>& shape) {
  auto fill = [&](auto array) {
    for (std::size_t i = 0; i < rows.size(); ++i)
      array.mutable_data()[i] = static_cast<typename decltype(array)::value_type>(rows[i][c]);
    return py::object(array);
  };
  if (name == "converged") return fill(py::array_t<bool>(shape));
  if (name == "iterations") return fill(py::array_t<int>(shape));
  return fill(py::array_t<double>(shape));
}

}  // namespace

py::dict parameter_arrays(const std::vector<theory::Solution>& sols,
                          const std::vector<py::ssize_t>& shape) {
  py::dict out;
  for (const std::string& name : theory::Params::names()) {
    std::vector<std::vector<double>> rows;
    bool any = false;
    for (const theory::Solution& s : sols) {
      rows.push_back({s.params.get(name)});
      any = any || !std::isnan(rows.back()[0]);
    }
    if (any || name != "test_overlap") out[py::str(name)] = column_array(name, rows, 0, shape);
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
  std::vector<std::vector<double>> rows;
  rows.reserve(sols.size());
  for (const theory::Solution& s : sols) rows.push_back(theory::solution_row(s, shift));
  py::dict out;
  for (std::size_t c = 0; c < names.size(); ++c)
    out[py::str(names[c])] = column_array(names[c], rows, c, shape);
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
