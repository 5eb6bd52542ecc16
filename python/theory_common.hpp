// Internal to the icl_theory Python module: what the theory bindings (bind_params.cpp,
// bind_solution.cpp, bind_sweep.cpp) share. The solve options
// from Python's keywords, the Python name of the ridge, and results as numpy arrays built from
// the library's serializers (theory::solution_columns/solution_row, numerics::Table).
#pragma once
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "numerics/table.hpp"
#include "python/bindings.hpp"
#include "theory/lowrank.hpp"

namespace icl::python {

// Python's name of the ridge, lambda_ (lambda is a keyword), as Params' name "lambda".
std::string param_name(const std::string& name);

// method, moments, residual_tolerance, max_iterations -> SolveOptions, validated by the library
// (InvalidParams naming the field).
theory::SolveOptions solve_options(const std::string& method, const std::string& moments,
                                   double residual_tolerance, int max_iterations);

// Arrays of `shape` from the solutions (row-major): the TSV columns of `icl sweep`, NaN where a
// point did not converge and for what Letey/Lu does not define; converged as bool and
// iterations as int.
// Every scalar input parameter of each solution's point (Params::names(), as Params::get gives it:
// alpha_test effective, gamma = tau/kappa; test_overlap only when some point has one), {name:
// array of `shape`}: the parameter columns of to_pandas().
py::dict parameter_arrays(const std::vector<theory::Solution>& sols,
                          const std::vector<py::ssize_t>& shape);
// With gradients (SolveOptions::gradient): the columns of theory::gradient_columns (d_<E>_d_<x>,
// el_<E>_<x>) into `out`, and out["_gradient"] = {output: {parameter: array}} over every row
// and column of the gradient (NaN where a point has none).
void add_gradient_arrays(py::dict& out, const std::vector<theory::Solution>& sols,
                         const std::vector<py::ssize_t>& shape);
py::dict solutions_to_arrays(const std::vector<theory::Solution>& sols,
                             const std::vector<py::ssize_t>& shape);
// One 1-D array per column of the table (converged as bool, iterations as int), except those
// named in `skip`.
py::dict table_to_arrays(const numerics::Table& table, const std::vector<std::string>& skip = {});

// Pickle states: plain tuples of the fields (exact doubles, so a round trip is bit for bit).
// Params: the eight raw fields, the task spectrum as [(eigenvalue, weight), ...], test_overlap
// (None when unset) and test_levels (docs/general_covariance.md §20). Defined in bind_params.cpp.
py::tuple params_state(const theory::Params& p);
theory::Params params_from_state(const py::tuple& t);

}  // namespace icl::python
