// icl_theory._core, the compiled core of the icl_theory package (python/package/ adds the
// pure-Python layer): exception translation and the per-area bindings.
//
// icl::InvalidParams -> icl_theory.InvalidParams (a ValueError subclass; `.field` names the field)
// icl::NumericalError -> icl_theory.NumericalError (a RuntimeError subclass; `.residual_norm`)
// The messages are the C++ what() strings, unchanged.
#include <exception>

#include <pybind11/stl.h>

#include "numerics/error.hpp"
#include "numerics/suggest.hpp"
#include "python/bindings.hpp"

#ifndef ICL_THEORY_VERSION
#define ICL_THEORY_VERSION "unknown"
#endif

namespace py = pybind11;

namespace {

// Module-lifetime exception types (intentionally never released: translators may run until the
// interpreter shuts down).
PyObject* g_invalid_params = nullptr;
PyObject* g_numerical_error = nullptr;

// Raise `type(message)` with extra attributes set on the instance.
void raise_with(PyObject* type, const char* message, const char* attr, py::object value) {
  py::object instance = py::reinterpret_borrow<py::object>(type)(message);
  instance.attr(attr) = std::move(value);
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "Replica theory of in-context learning (icl-theory) from Python.\n\n"
      "Params, solve, sweep, phase_grid, regime, critical_rho, atom_mass, has_transition: the\n"
      "low-rank replica theory. MarchenkoPastur, GeneralizedMarchenkoPastur, resolvent_moment,\n"
      "integrate: spectral measures. simulate, LowRankSimulator: the finite-D simulator.\n"
      "patch_check, rank1_patch: the exact rank-1 patch of a contextual block. optimize: the\n"
      "parameter value that minimizes TM, IDG or ODG.\n\n"
      "Bad parameters raise InvalidParams (a ValueError) naming the field; numerical failures\n"
      "raise NumericalError (a RuntimeError). Long calls release the GIL.";
  m.attr("__version__") = ICL_THEORY_VERSION;

  g_invalid_params = PyErr_NewExceptionWithDoc(
      "icl_theory.InvalidParams",
      "A parameter is outside its allowed range (a ValueError). `field` names it; the message\n"
      "is '<field>: <reason>'.",
      PyExc_ValueError, nullptr);
  g_numerical_error = PyErr_NewExceptionWithDoc(
      "icl_theory.NumericalError",
      "A numerical routine could not deliver a trustworthy value (a RuntimeError).\n"
      "`residual_norm` is the residual reached (NaN when not applicable).",
      PyExc_RuntimeError, nullptr);
  if (g_invalid_params == nullptr || g_numerical_error == nullptr) throw py::error_already_set();
  m.attr("InvalidParams") = py::reinterpret_borrow<py::object>(g_invalid_params);
  m.attr("NumericalError") = py::reinterpret_borrow<py::object>(g_numerical_error);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const icl::InvalidParams& e) {
      raise_with(g_invalid_params, e.what(), "field", py::str(e.field()));
    } catch (const icl::NumericalError& e) {
      raise_with(g_numerical_error, e.what(), "residual_norm", py::float_(e.residual_norm()));
    }
  });

  icl::python::bind_params(m);
  icl::python::bind_solution(m);
  icl::python::bind_sweep(m);
  icl::python::bind_spectral(m);
  icl::python::bind_simulate(m);
  icl::python::bind_patch(m);
  icl::python::bind_optimize(m);
  icl::python::bind_boundary(m);
  icl::python::bind_cot(m);
  icl::python::bind_depth(m);
  // The "did you mean" of the Python layer's argument errors (package/_arguments.py): the same
  // rule as the command line's.
  m.def("_did_you_mean", &icl::numerics::did_you_mean, py::arg("name"), py::arg("candidates"));
}
