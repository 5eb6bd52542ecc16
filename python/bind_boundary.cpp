// boundary: per value of one parameter, the value of another where a level is crossed, the slope
// is steepest or the minimum sits (theory/boundary.hpp, docs/errors_phases.md §19), returned as the
// dict of theory::to_json(BoundaryResult).
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/theory_common.hpp"
#include "theory/boundary.hpp"
#include "theory/serialize.hpp"

namespace icl::python {

void bind_boundary(py::module_& m) {
  // The defaults are the library's (theory::BoundaryOptions); the checks are its validate().
  const theory::BoundaryOptions def{};
  m.def(
      "boundary",
      [](const theory::Params& p, const std::string& x, const std::string& y,
         const std::vector<double>& ys, const std::string& criterion, const std::string& quantity,
         std::optional<double> level, std::optional<std::pair<double, double>> range,
         bool log_x, int scan_points, const std::string& method, int threads, bool trace,
         bool log_y, int trace_points, double trace_step) {
        theory::BoundaryOptions o;
        o.criterion = theory::criterion_from_string(criterion);
        o.quantity = quantity;
        if (level) o.level = *level;
        o.x = param_name(x);
        o.y = param_name(y);
        o.ys = ys;
        if (range) std::tie(o.lo, o.hi) = *range;
        o.log_x = log_x;
        o.log_y = log_y;
        o.trace = trace;
        o.trace_points = trace_points;
        o.trace_step = trace_step;
        o.scan_points = scan_points;
        o.solve.method = theory::method_from_string(method);
        o.threads = threads;
        theory::BoundaryResult r;
        {
          py::gil_scoped_release release;
          r = theory::run(p, o);
        }
        return to_python(theory::to_json(r));
      },
      py::arg("params"), py::arg("x"), py::arg("y"), py::arg("ys"), py::kw_only(),
      py::arg("criterion") = theory::to_string(def.criterion), py::arg("quantity") = def.quantity,
      py::arg("level") = py::none(), py::arg("range") = py::none(),
      py::arg("log_x") = def.log_x,
      py::arg("scan_points") = def.scan_points,
      py::arg("method") = theory::to_string(def.solve.method), py::arg("threads") = def.threads,
      py::arg("trace") = def.trace, py::arg("log_y") = def.log_y,
      py::arg("trace_points") = def.trace_points, py::arg("trace_step") = def.trace_step,
      "For each value in `ys` of the parameter `y`, the value of the parameter `x` in\n"
      "range=(lo, hi) where `quantity` ('tm' | 'idg' | 'odg', a decomposition piece such as\n"
      "'idg_mem', an order parameter such as 'm0', 'z', 'e', 'bayes_idg', 'bayes_odg')\n"
      "satisfies `criterion` (docs/errors_phases.md §19):\n"
      "  'level'    quantity = level (coarse scan for sign changes, then TOMS 748; with several\n"
      "             crossings the one at the smallest x, 'candidates' = their number),\n"
      "  'steepest' |d quantity / dx| largest (log_x=True: |d quantity / d ln x|, lo > 0);\n"
      "             the exact slope (docs/sensitivity.md §22) refined by Brent,\n"
      "  'argmin'   quantity smallest (as optimize()); a minimum at an end of the range is None.\n"
      "range=None: a default per parameter as in optimize(). Names as in Params.names() or\n"
      "lambda_. Returns the dict of `icl boundary --json`: criterion, x, y, range, scale,\n"
      "[derivative,] converged, status, message, points (one dict per y:\n"
      "{y: .., x: ..\n"
      "or None, value, [slope,] converged, status, message, candidates, evaluations}), params.\n"
      "A y without a point in range has x None, value NaN and the reason in its message.\n"
      "trace=True (level or steepest) also follows the curve through the box range x [min ys,\n"
      "max ys] by pseudo-arclength continuation (turning points included; log_y: ln y as its\n"
      "coordinate; trace_points, trace_step): the dict gains 'trace' {status, message,\n"
      "turning_points, largest_residual, evaluations, points: [{x, y, value, residual,\n"
      "arclength}]} (docs/errors_phases.md §19.3).\n"
      "threads = 0 uses every core; results do not depend on it. Raises InvalidParams naming\n"
      "the field.");
}

}  // namespace icl::python
