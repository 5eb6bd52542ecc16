// The finite-D low-rank simulator (verify/lowrank/simulator.hpp) from Python: the library's
// run() with its typed SimulationResult, returned as {name: (mean, sem)} by the flat names of
// verify/lowrank/serialize.hpp named_estimates().
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/kwargs.hpp"
#include "python/sim_options.hpp"
#include "python/progress.hpp"
#include "numerics/seed.hpp"
#include "verify/lowrank/compare.hpp"
#include "theory/params.hpp"
#include "verify/lowrank/serialize.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::python {
namespace {

using theory::Params;
namespace vl = verify::lowrank;

}  // namespace

vl::SimOptions sim_options(const py::kwargs& kwargs, const std::string& function,
                           vl::SimOptions o) {
  Kwargs k(kwargs, function);
  read_sim_options(k, o);
  k.finish();
  o.validate();
  return o;
}

void read_sim_options(Kwargs& k, vl::SimOptions& o) {
  k.take("dim", o.dim);
  k.take("seeds", o.seeds);
  k.take("seed", o.base_seed);
  k.take("threads", o.threads);
  std::string text;
  if (k.take("odg", text)) o.odg = vl::odg_kind_from_string(text);
  if (k.take("sampler", text)) o.sampler = vl::sampler_from_string(text);
  if (k.take("solver", text)) o.solver = vl::solver_from_string(text);
  k.take("cg_tolerance", o.cg_tolerance);
  k.take("cg_max_iterations", o.cg_max_iterations);
  k.take("min_norm", o.min_norm);
  k.take("theory", o.solve_theory);
  k.take("prediction_prompts", o.prediction_prompts);
  k.take("histogram_bins", o.histogram_bins);
  k.take("bayes_prompts", o.bayes_prompts);
  k.take_switches(o.switches);
}

namespace {

// A run whose training did not converge raises NumericalError (its numbers are not results).
// Ctrl-C (checked at each seed's report) stops the run after the seeds in progress: the
// finished seeds are returned (status "interrupted"; the Python layer warns).
// Returns (estimates {name: (mean, sem)}, the `icl simulate --json` object, the theory Solution
// or None, comparison rows): the Python layer (icl_theory.SimulationResult) assembles them.
// Comparison rows: vl::comparison(r) (verify/lowrank/compare.hpp), one dict per quantity.
py::tuple run_simulator(const vl::LowRankSimulator& sim, const py::object& progress) {
  const PyProgress report(progress, /*cancels=*/true);  // run() stops taking seeds
  vl::SimulationResult r;
  {
    py::gil_scoped_release release;
    r = sim.run(report.function());
  }
  if (!(r.has_estimates() && report.take_keyboard_interrupt())) report.rethrow_if_failed();
  if (!r.has_estimates()) throw NumericalError("simulate: " + r.message, r.residual_norm);
  py::dict d;
  for (const auto& [name, e] : vl::named_estimates(r)) d[py::str(name)] = py::make_tuple(e.mean, e.sem);
  const nlohmann::ordered_json j = vl::to_json(r);
  py::object theory = r.theory ? py::cast(*r.theory) : py::none();
  return py::make_tuple(d, to_python(j), theory, to_python(j["comparison"]));
}

const char* kSimulateDoc =
    "Internal: icl_theory.simulate and icl_theory.LowRankSimulator.run wrap it into a\n"
    "SimulationResult. Returns (estimates, json, theory Solution or None, comparison rows).";

vl::LowRankSimulator make_simulator(const Params& p, const py::kwargs& options) {
  p.validate();
  return vl::LowRankSimulator(p, sim_options(options, "LowRankSimulator",
                                             vl::SimOptions::standalone()));
}

}  // namespace

void bind_simulate(py::module_& m) {
  m.def(
      "simulate",
      [](const Params& p, const py::object& progress, const py::kwargs& options) {
        return run_simulator(make_simulator(p, options), progress);
      },
      py::arg("params"), py::kw_only(), py::arg("progress") = py::none(), kSimulateDoc);

  py::class_<vl::LowRankSimulator>(
      m, "LowRankSimulator",
      "The finite-D simulator as an object: LowRankSimulator(params, **options).run()\n"
      "(options as simulate()).")
      .def(py::init(&make_simulator), py::arg("params"))
      .def("run", &run_simulator, py::kw_only(), py::arg("progress") = py::none(), kSimulateDoc)
      .def_property_readonly("params", &vl::LowRankSimulator::params, "the Params simulated")
      .def_property_readonly("dim", [](const vl::LowRankSimulator& s) { return s.options().dim; },
                             "token dimension D")
      .def_property_readonly("seeds", [](const vl::LowRankSimulator& s) { return s.options().seeds; },
                             "number of seeds")
      .def_property_readonly("seed", [](const vl::LowRankSimulator& s) { return s.options().base_seed; },
                             "base seed")
      .def_property_readonly("threads", [](const vl::LowRankSimulator& s) { return s.options().threads; },
                             "threads")
      .def_property_readonly(
          "odg", [](const vl::LowRankSimulator& s) { return std::string(vl::to_string(s.options().odg)); },
          "'isotropic' | 'subspace'");

  m.def(
      "sizes",
      [](const Params& p, int dim) {
        return to_python(vl::to_json(vl::sizes(p, dim)));
      },
      py::arg("params"), py::arg("dim"),
      "Integer sizes of a simulation at D = dim: {D, r, M0, N, L, L_test}.");

  m.def(
      "extrapolate_inverse_d",
      [](const std::vector<double>& dims, const std::vector<double>& means,
         const std::vector<double>& sems) {
        return to_python(vl::to_json(vl::extrapolate_inverse_d(dims, means, sems)));
      },
      py::arg("dims"), py::arg("means"), py::arg("sems"),
      "The finite-size extrapolation of `icl verify` (docs/simulation.md §14): weighted least\n"
      "squares mean(D) = value + slope / D with weights 1/sem^2; se from the covariance,\n"
      "inflated by sqrt(chi2/dof) when chi2/dof > 1. Returns {value (D -> infinity), se,\n"
      "slope, slope_se, chi2, dof}.");
  m.def("simulation_columns", &vl::simulation_columns,
        "Names of the simulation columns of `icl sweep --simulate` (sim_<q>, sim_<q>_sem).");
  m.def(
      "derive_seed",
      [](std::uint64_t base, std::uint64_t k) { return numerics::derive_seed(base, k); },
      py::arg("base"), py::arg("k"),
      "Stream k of base seed `base` (numerics/seed.hpp): point k of `icl sweep --simulate\n"
      "--seed base` is simulated with seed=derive_seed(base, k), whatever --shard.");
}

}  // namespace icl::python
