// Internal to the icl_theory Python module: one registration function per area.
#pragma once
#include <pybind11/pybind11.h>

namespace icl::python {
namespace py = pybind11;

void bind_params(py::module_& m);    // Params, task spectra, phases
void bind_solution(py::module_& m);  // Solution, solve
void bind_sweep(py::module_& m);     // sweep, solve_finite_dim, phase_grid, vectorized solve
void bind_spectral(py::module_& m);  // spectral measures, resolvent moments, integrate
void bind_simulate(py::module_& m);  // simulate, LowRankSimulator, sizes
void bind_patch(py::module_& m);     // patch checks
void bind_optimize(py::module_& m);  // optimize (optimal hyperparameters)
void bind_boundary(py::module_& m);  // boundary (phase boundaries in any plane)
void bind_cot(py::module_& m);       // cot (test-time iteration: theory, simulation)
void bind_depth(py::module_& m);     // depth (L layers as L steps of gradient descent)

}  // namespace icl::python
