// optimize: the parameter value that minimizes TM, IDG or ODG (theory/optimize.hpp,
// docs/errors_phases.md §18), returned as the dict of theory::to_json(OptimizeResult).
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>

#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/theory_common.hpp"
#include "theory/optimize.hpp"
#include "theory/serialize.hpp"

namespace icl::python {

void bind_optimize(py::module_& m) {
  // The defaults are the library's (theory::OptimizeOptions); the checks are its validate().
  const theory::OptimizeOptions def{};
  m.def(
      "optimize",
      [](const theory::Params& p, const std::string& over, const std::string& minimize,
         std::optional<std::pair<double, double>> range, int scan_points,
         const std::string& method) {
        theory::OptimizeOptions o;
        o.objective = theory::objective_from_string(minimize);
        o.over = param_name(over);
        if (range) std::tie(o.lo, o.hi) = *range;
        o.scan_points = scan_points;
        o.solve.method = theory::method_from_string(method);
        theory::OptimizeResult r;
        {
          py::gil_scoped_release release;
          r = theory::run(p, o);
        }
        return to_python(theory::to_json(r));
      },
      py::arg("params"), py::arg("over"), py::kw_only(),
      py::arg("minimize") = theory::to_string(def.objective), py::arg("range") = py::none(),
      py::arg("scan_points") = def.scan_points,
      py::arg("method") = theory::to_string(def.solve.method),
      "The value of `over` (a Params name: lambda, alpha, alpha_test, tau, gamma, kappa, rho,\n"
      "sigma, sigma_test) in range=(lo, hi) that minimizes `minimize` ('tm' | 'idg' | 'odg'),\n"
      "the other parameters as in `params`: a coarse scan of scan_points values (log-spaced\n"
      "when lo > 0) then Brent on each local minimum of the scan (docs/errors_phases.md §18).\n"
      "range=None: a default per parameter (lambda (1e-4, 10), rho (0.01, 1), sigma (0, 2),\n"
      "others (0.1, 20)). Returns the dict of `icl optimize --json`: objective, over, argmin,\n"
      "minimum, converged, status, message, evaluations, interior_minima, range, scale, params\n"
      "(argmin/minimum NaN unless converged). Raises InvalidParams naming the field.");
}

}  // namespace icl::python
