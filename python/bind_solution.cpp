// Solution (theory/lowrank.hpp) and solve(): every dict of a Solution comes from the theory's one
// serializer (theory/serialize.hpp: to_json, to_json_block).
#include <pybind11/stl.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/theory_common.hpp"
#include "theory/lowrank.hpp"
#include "theory/quantity.hpp"
#include "theory/serialize.hpp"

namespace icl::python {
namespace {

using theory::Params;
using theory::Solution;

// One part of the `icl solve --json` layout as Python objects, built alone
// (theory::to_json_block: about 1 us against 10 us for the whole object).
py::object solution_part(const Solution& s, const char* key) {
  return to_python(theory::to_json_block(s, key));
}

// The values of a solution (or of a last iterate) as one flat list of doubles, in a fixed
// order: order parameters (13), errors (3), decomposition (9), z, e.
std::vector<double*> value_fields(theory::OrderParams& o, theory::Errors& er,
                                  theory::Decomposition& d, double& z, double& e) {
  return {&o.q, &o.m, &o.chi, &o.qbar, &o.chibar, &o.mbar, &o.m0, &o.q0, &o.qhat, &o.mhat,
          &o.chihat, &o.qbarhat, &o.chibarhat, &er.tm, &er.idg, &er.odg,
          &d.tm.algo, &d.tm.mem, &d.tm.structural, &d.idg.algo, &d.idg.mem, &d.idg.structural,
          &d.odg.algo, &d.odg.mem, &d.odg.structural, &z, &e};
}

std::vector<double> values_of(theory::OrderParams o, theory::Errors er, theory::Decomposition d,
                              double z, double e) {
  std::vector<double> out;
  for (double* v : value_fields(o, er, d, z, e)) out.push_back(*v);
  return out;
}

void set_values(const std::vector<double>& v, theory::OrderParams& o, theory::Errors& er,
                theory::Decomposition& d, double& z, double& e) {
  auto fields = value_fields(o, er, d, z, e);
  if (v.size() != fields.size()) throw std::runtime_error("Solution: bad pickle state");
  for (std::size_t i = 0; i < v.size(); ++i) *fields[i] = v[i];
}

// The shifted test protocol (docs/general_covariance.md §20): None, or (overlap, levels, error,
// algo, mem, struct).
py::object shift_state(const std::optional<theory::TestShift>& t) {
  if (!t) return py::none();
  return py::make_tuple(t->overlap, t->levels, t->error, t->decomposition.algo,
                        t->decomposition.mem, t->decomposition.structural);
}

std::optional<theory::TestShift> shift_from_state(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  const auto t = o.cast<py::tuple>();
  theory::TestShift s;
  s.overlap = t[0].cast<double>();
  s.levels = t[1].cast<std::vector<double>>();
  s.error = t[2].cast<double>();
  s.decomposition = {t[3].cast<double>(), t[4].cast<double>(), t[5].cast<double>()};
  return s;
}

// The gradient (theory/gradient.hpp): None, or (outputs, parameters, values row-major, status,
// message, condition number).
py::object gradient_state(const std::optional<theory::Gradient>& g) {
  if (!g) return py::none();
  std::vector<double> v;
  for (Eigen::Index r = 0; r < g->values.rows(); ++r)
    for (Eigen::Index c = 0; c < g->values.cols(); ++c) v.push_back(g->values(r, c));
  return py::make_tuple(g->outputs, g->parameters, v, static_cast<int>(g->status), g->message,
                        g->condition_number);
}

std::optional<theory::Gradient> gradient_from_state(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  const auto t = o.cast<py::tuple>();
  theory::Gradient g;
  g.outputs = t[0].cast<std::vector<std::string>>();
  g.parameters = t[1].cast<std::vector<std::string>>();
  const auto v = t[2].cast<std::vector<double>>();
  g.values.resize(Eigen::Index(g.outputs.size()), Eigen::Index(g.parameters.size()));
  for (Eigen::Index r = 0; r < g.values.rows(); ++r)
    for (Eigen::Index c = 0; c < g.values.cols(); ++c)
      g.values(r, c) = v.at(std::size_t(r * g.values.cols() + c));
  g.status = static_cast<numerics::Status>(t[3].cast<int>());
  g.message = t[4].cast<std::string>();
  g.condition_number = t[5].cast<double>();
  return g;
}

py::tuple solution_state(const Solution& s) {
  py::object last = py::none();
  if (s.last_iterate) {
    auto li = *s.last_iterate;
    last = py::cast(values_of(li.order, li.error, li.decomposition, li.z, li.e));
  }
  return py::make_tuple(params_state(s.params), static_cast<int>(s.method),
                        static_cast<int>(s.status), s.residual_norm, s.iterations, s.message,
                        values_of(s.order, s.error, s.decomposition, s.z, s.e), s.nu,
                        static_cast<int>(s.regime), s.bayes_optimal.idg, s.bayes_optimal.odg,
                        last, shift_state(s.test_shift), s.bayes_optimal.shift,
                        s.last_iterate ? shift_state(s.last_iterate->test_shift) : py::none(),
                        gradient_state(s.gradient));
}

Solution solution_from_state(const py::tuple& t) {
  if (t.size() != 12 && t.size() != 15 && t.size() != 16)
    throw std::runtime_error("Solution: bad pickle state");
  Solution s;
  s.params = params_from_state(t[0].cast<py::tuple>());
  s.method = static_cast<theory::Method>(t[1].cast<int>());
  s.status = static_cast<numerics::Status>(t[2].cast<int>());
  s.residual_norm = t[3].cast<double>();
  s.iterations = t[4].cast<int>();
  s.message = t[5].cast<std::string>();
  set_values(t[6].cast<std::vector<double>>(), s.order, s.error, s.decomposition, s.z, s.e);
  s.nu = t[7].cast<double>();
  s.regime = static_cast<theory::Regime>(t[8].cast<int>());
  s.bayes_optimal.idg = t[9].cast<double>();
  s.bayes_optimal.odg = t[10].cast<double>();
  if (!t[11].is_none()) {
    theory::LastIterate li;
    set_values(t[11].cast<std::vector<double>>(), li.order, li.error, li.decomposition, li.z,
               li.e);
    s.last_iterate = li;
  }
  if (t.size() >= 15) {
    s.test_shift = shift_from_state(t[12]);
    s.bayes_optimal.shift = t[13].cast<double>();
    if (s.last_iterate) s.last_iterate->test_shift = shift_from_state(t[14]);
  }
  if (t.size() == 16) s.gradient = gradient_from_state(t[15]);
  return s;
}

}  // namespace

void bind_solution(py::module_& m) {
  py::class_<Solution>(m, "Solution",
                       "Result of solve(): convergence facts (converged, status, residual_norm,\n"
                       "iterations, message), the order parameters, errors, decomposition, z and\n"
                       "e (all NaN when not converged: the solver's last iterate is then in\n"
                       "last_iterate), and nu, regime, bayes_optimal (functions of params).")
      .def_property_readonly("params", [](const Solution& s) { return s.params; },
                             "the Params solved")
      .def_property_readonly("method", [](const Solution& s) { return theory::to_string(s.method); },
                             "'saddle' | 'reduced' | 'letey'")
      .def_property_readonly("converged", &Solution::converged, "residual below the tolerance")
      .def_property_readonly("status", [](const Solution& s) { return numerics::to_string(s.status); },
                             "solver status as a string")
      .def_readonly("residual_norm", &Solution::residual_norm, "|F(x*)|_2 recomputed at the result")
      .def_readonly("iterations", &Solution::iterations, "solver iterations")
      .def_readonly("message", &Solution::message, "solver report / reason for failure")
      .def_property_readonly("order", [](const Solution& s) { return solution_part(s, "order"); },
                             "order parameters {q, m, chi, qbar, chibar, mbar, m0, q0, qhat, mhat,\n"
                             "chihat, qbarhat, chibarhat} (Letey: without chi/chibar/conjugates)")
      .def_property_readonly("error", [](const Solution& s) { return solution_part(s, "error"); },
                             "{tm, idg, odg} test errors")
      .def_property_readonly(
          "bayes_optimal", [](const Solution& s) { return solution_part(s, "bayes_optimal"); },
          "{idg, odg}: the Bayes-optimal errors from the test prompt alone, same convention as\n"
          "`error` (docs/errors_phases.md §17); with a shifted test protocol also shift")
      .def_property_readonly(
          "test_shift",
          [](const Solution& s) -> py::object {
            if (!s.test_shift) return py::none();
            return solution_part(s, "test_shift");
          },
          "None, or the shifted test protocol (Params.test_overlap / test_levels,\n"
          "docs/general_covariance.md §20): {overlap, levels, error, decomposition: {algo, mem, struct}}")
      .def_property_readonly(
          "decomposition", [](const Solution& s) { return solution_part(s, "decomposition"); },
          "{tm|idg|odg: {algo, mem, struct}}; the three pieces sum to the error (letey: from\n"
          "the ridgeless limit of the reduced solution)")
      .def_property_readonly("regime", [](const Solution& s) { return theory::to_string(s.regime); },
                             "'task-rich' | 'task-poor' | 'boundary'")
      .def_readonly("z", &Solution::z, "spectral argument; -z is the effective ridge on S")
      .def_readonly("e", &Solution::e, "E_train / tau: weight of the memorization noise")
      .def_readonly("nu", &Solution::nu, "(1 + sigma^2) / alpha")
      .def_property_readonly(
          "last_iterate",
          [](const Solution& s) -> py::object {
            if (!s.last_iterate) return py::none();
            return solution_part(s, "last_iterate");
          },
          "None when converged; otherwise (when the solver produced one) the last iterate\n"
          "{order, error, decomposition, z, e}, for diagnosis only: not a solution")
      .def_property_readonly(
          "gradient",
          [](const Solution& s) -> py::object {
            if (!s.gradient) return py::none();
            return to_python(theory::to_json(*s.gradient));
          },
          "With solve(..., gradient=True): {output: {parameter: d output / d parameter}} for\n"
          "every output (errors, decomposition, order parameters, z, e, Bayes baselines, the\n"
          "shifted protocol) and parameter (gradient_parameters); NaN unless\n"
          "gradient_status['status'] is 'converged' (docs/sensitivity.md §22). None without.")
      .def_property_readonly(
          "gradient_status",
          [](const Solution& s) -> py::object {
            if (!s.gradient) return py::none();
            return to_python(theory::gradient_status_json(*s.gradient));
          },
          "{status, message, condition_number, parameters} of the gradient, None without.")
      .def("quantity",
           [](const Solution& s, const std::string& name) {
             return theory::find_quantity(name, "name").value(s);
           },
           py::arg("name"),
           "Any quantity of the solution by its name (tm idg odg, tm_algo ... odg_struct, the\n"
           "order parameters, z, e, bayes_idg, bayes_odg, shift ...: theory/quantity.hpp); NaN\n"
           "unless converged. InvalidParams (field 'name') listing the names otherwise.")
      .def("to_dict", [](const Solution& s) { return to_python(theory::to_json(s)); },
           "Everything as nested dicts (the `icl solve --json` layout).")
      .def(py::pickle(&solution_state, &solution_from_state))
      .def("__repr__", [](const Solution& s) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "<Solution %s %s residual=%.3g iterations=%d tm=%.6g idg=%.6g odg=%.6g>",
                      theory::to_string(s.method), s.converged() ? "converged" : "NOT converged",
                      s.residual_norm, s.iterations, s.error.tm, s.error.idg, s.error.odg);
        return std::string(buf);
      });

  m.def(
      "solve",
      [](const Params& p, const std::string& method, const std::string& moments,
         double residual_tolerance, int max_iterations, std::optional<Solution> start,
         bool gradient) {
        auto o = solve_options(method, moments, residual_tolerance, max_iterations);
        o.gradient = gradient;
        if (start) {
          if (!start->converged())
            throw InvalidParams("start", "the Solution did not converge (its values are NaN)");
          o.start = start->order;
        }
        py::gil_scoped_release release;
        return theory::solve(p, o);
      },
      py::arg("params"), py::kw_only(), py::arg("method") = "saddle",
      py::arg("moments") = "quadrature", py::arg("residual_tolerance") = 1e-10,
      py::arg("max_iterations") = 200, py::arg("start") = py::none(),
      py::arg("gradient") = theory::SolveOptions{}.gradient,
      "Solve the theory at `params` and return a Solution.\n\n"
      "method: 'saddle' (full replica saddle point), 'reduced' (scalar closed forms) or 'letey'\n"
      "(Letey/Lu deterministic equivalent). moments: 'quadrature' | 'exact' spectral moments for\n"
      "the saddle point. start: a previous converged Solution to warm-start from. Raises\n"
      "InvalidParams (ValueError) for bad parameters; non-convergence is reported in\n"
      ".converged/.status, never raised (then every value is NaN, see last_iterate).");

}

}  // namespace icl::python
