// cot: the test-time iteration (theory/cot.hpp, docs/multistep.md), and with simulate=True the
// simulator (verify/multistep/cot_simulator.hpp): the dict of `icl cot --json`, which the Python
// layer (python/package/__init__.py) wraps as a CotResult with to_pandas(). Every default is the
// library structs', every check their validate() (InvalidParams naming the field, as the CLI).
#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/kwargs.hpp"
#include "theory/cot.hpp"
#include "verify/multistep/cot_simulator.hpp"

namespace icl::python {

void bind_cot(py::module_& m) {
  m.def(
      "cot",
      [](const py::kwargs& kwargs) {
        theory::CotParams p;
        theory::CotOptions o;
        verify::multistep::CotSimOptions s;
        bool simulate = false;
        Kwargs k(kwargs, "cot");
        k.take("alpha", p.alpha);
        k.take("tau", p.tau);
        k.take("sigma", p.sigma);
        k.take("lambda", p.lambda);
        k.take("lambda_", p.lambda);
        k.take("steps", o.steps);
        k.take("max_bits", o.max_bits);
        k.take("relative_tolerance", o.relative_tolerance);
        k.take("finite_dim", o.finite_dim);
        k.take("simulate", simulate);
        k.take("dim", s.dim);
        k.take("seeds", s.seeds);
        k.take("test_tasks", s.test_tasks);
        k.take("seed", s.seed);
        k.take("threads", s.threads);
        k.finish();
        nlohmann::ordered_json j;
        {
          py::gil_scoped_release release;
          j = simulate ? verify::multistep::to_json(verify::multistep::compare(p, o, s))
                       : theory::to_json(theory::run(p, o));
        }
        return to_python(j);
      },
      "The test-time iteration (docs/multistep.md): keywords alpha, tau, sigma, lambda (or\n"
      "lambda_), steps, max_bits, relative_tolerance, finite_dim; simulate=True adds the\n"
      "simulator (and the finite-D prediction at its dim unless finite_dim is given) at dim,\n"
      "seeds, test_tasks, seed, threads. Returns the dict of `icl cot --json` (the theory needs\n"
      "tau > 1 and lambda = 0; with simulate=True outside them only the simulation). Raises\n"
      "InvalidParams naming the field. icl_theory.cot() wraps it as a CotResult.");
}

}  // namespace icl::python
