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
#include "theory/params.hpp"
#include "verify/lowrank/serialize.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::python {
namespace {

using theory::Params;
namespace vl = verify::lowrank;

vl::SimOptions sim_options(int dim, int seeds, std::uint64_t seed, int threads,
                           const std::string& odg, const std::string& solver, bool min_norm) {
  vl::SimOptions o;
  o.dim = dim;
  o.seeds = seeds;
  o.base_seed = seed;
  o.threads = threads;
  o.odg = vl::odg_kind_from_string(odg);
  o.solver = vl::solver_from_string(solver);
  o.min_norm = min_norm;
  o.validate();
  return o;
}

// A run whose training did not converge raises NumericalError (its numbers are not results).
py::dict run_simulator(const vl::LowRankSimulator& sim) {
  vl::SimulationResult r;
  {
    py::gil_scoped_release release;
    r = sim.run();
  }
  if (!r.converged()) throw NumericalError("simulate: " + r.message, r.residual_norm);
  py::dict d;
  for (const auto& [name, e] : vl::named_estimates(r)) d[py::str(name)] = py::make_tuple(e.mean, e.sem);
  return d;
}

const char* kSimulateDoc =
    "Simulate linear attention trained on low-rank regression tasks at finite D = dim.\n\n"
    "Returns {name: (mean, sem)} over `seeds` seeds: 'error.tm', 'error.idg', 'error.odg',\n"
    "'order.m', 'order.q', 'order.mbar', 'order.qbar', 'order.m0', 'order.q0', solver facts\n"
    "('cg.iterations', ...); sem is NaN for one seed. Seed k is derived from (seed, k) only, so\n"
    "the result does not depend on `threads`. odg: 'isotropic' | 'subspace'; solver: 'cg' |\n"
    "'direct'; min_norm: allow lambda = 0 with tau < 1 (minimum-norm solution). Raises\n"
    "NumericalError when a seed's training does not converge. Releases the GIL.";

vl::LowRankSimulator make_simulator(const Params& p, int dim, int seeds, std::uint64_t seed,
                                    int threads, const std::string& odg,
                                    const std::string& solver, bool min_norm) {
  p.validate();
  return vl::LowRankSimulator(p, sim_options(dim, seeds, seed, threads, odg, solver, min_norm));
}

}  // namespace

void bind_simulate(py::module_& m) {
  const vl::SimOptions defaults;
  m.def(
      "simulate",
      [](const Params& p, int dim, int seeds, std::uint64_t seed, int threads,
         const std::string& odg, const std::string& solver, bool min_norm) {
        return run_simulator(make_simulator(p, dim, seeds, seed, threads, odg, solver, min_norm));
      },
      py::arg("params"), py::kw_only(), py::arg("dim") = defaults.dim,
      py::arg("seeds") = defaults.seeds, py::arg("seed") = defaults.base_seed,
      py::arg("threads") = defaults.threads, py::arg("odg") = "isotropic",
      py::arg("solver") = "cg", py::arg("min_norm") = false, kSimulateDoc);

  py::class_<vl::LowRankSimulator>(
      m, "LowRankSimulator",
      "The finite-D simulator as an object: LowRankSimulator(params, dim=..., seeds=...,\n"
      "seed=..., threads=..., odg=..., solver=..., min_norm=...).run() -> {name: (mean, sem)}.")
      .def(py::init(&make_simulator), py::arg("params"), py::kw_only(),
           py::arg("dim") = defaults.dim, py::arg("seeds") = defaults.seeds,
           py::arg("seed") = defaults.base_seed, py::arg("threads") = defaults.threads,
           py::arg("odg") = "isotropic", py::arg("solver") = "cg", py::arg("min_norm") = false)
      .def("run", &run_simulator, kSimulateDoc)
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
}

}  // namespace icl::python
