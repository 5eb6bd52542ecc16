// depth: L layers of linear attention as L gradient-descent steps (theory/depth.hpp,
// docs/multistep_depth.md), returned as the dict of theory::to_json(DepthResult), with
// "simulation" (verify::multistep::to_json) when simulate=True: the layout of `icl depth --json`.
#include <optional>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "theory/depth.hpp"
#include "verify/multistep/depth_simulator.hpp"

namespace icl::python {

void bind_depth(py::module_& m) {
  // The defaults are the library's (theory::DepthParams, verify::multistep::DepthSimOptions);
  // the checks are their validate().
  const theory::DepthParams def{};
  const verify::multistep::DepthSimOptions sim_def{};
  m.def(
      "depth",
      [](double alpha, double sigma, int layers, bool simulate, int dim, int seeds,
         std::uint64_t seed, int threads, bool literal) {
        const theory::DepthParams p{alpha, sigma, layers};
        verify::multistep::DepthSimOptions o;
        o.dim = dim;
        o.seeds = seeds;
        o.seed = seed;
        o.threads = threads;
        if (literal) o.estimator = verify::multistep::DepthEstimator::Literal;
        if (simulate) o.validate(p);
        nlohmann::ordered_json j;
        {
          py::gil_scoped_release release;
          const theory::DepthResult r = theory::run(p);
          j = theory::to_json(r);
          if (simulate) j["simulation"] = verify::multistep::to_json(
                            verify::multistep::simulate(p, r.step_opt, o));
        }
        return to_python(j);
      },
      py::kw_only(), py::arg("alpha") = def.alpha, py::arg("sigma") = def.sigma,
      py::arg("layers") = def.layers, py::arg("simulate") = false, py::arg("dim") = sim_def.dim,
      py::arg("seeds") = sim_def.seeds, py::arg("seed") = sim_def.seed,
      py::arg("threads") = sim_def.threads, py::arg("literal") = false,
      "L = layers of linear attention (infinite pretraining, isotropic data) as L steps of\n"
      "gradient descent with one step g per layer (gamma = L g), N = alpha D context tokens,\n"
      "label noise sigma (docs/multistep_depth.md). Returns the dict of `icl depth --json`:\n"
      "params, error (query noise included), gamma_opt, step_opt, per_layer_error,\n"
      "per_layer_steps (None where complex), per_layer_realizable, per_layer_roots,\n"
      "error_by_depth, step_by_depth, step_one_over_c, error_at_one_over_c, local_minima,\n"
      "g_bound, converged, status, message; with simulate=True also simulation: {mean, sem,\n"
      "dim, seeds, ...} at step_opt over `seeds` sampled contexts (literal=True: the layer\n"
      "recursion with sampled w and noise). Raises InvalidParams naming the field (alpha,\n"
      "sigma, layers, dim, seeds, threads).");
}

}  // namespace icl::python
