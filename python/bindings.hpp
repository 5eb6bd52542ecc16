// Internal to the icl_theory Python module: one registration function per area.
#pragma once
#include <pybind11/pybind11.h>

namespace icl::python {
namespace py = pybind11;

void bind_theory(py::module_& m);    // Params, solve, sweep, phase_grid, phases
void bind_spectral(py::module_& m);  // spectral measures, resolvent moments, integrate
void bind_simulate(py::module_& m);  // simulate, LowRankSimulator, sizes
void bind_patch(py::module_& m);     // patch checks
void bind_optimize(py::module_& m);  // optimize (optimal hyperparameters)
void bind_boundary(py::module_& m);  // boundary (phase boundaries in any plane)

}  // namespace icl::python
