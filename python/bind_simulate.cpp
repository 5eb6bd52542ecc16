// The finite-D low-rank simulator (verify/lowrank/simulator.hpp) from Python.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "theory/params.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::python {
namespace {

using theory::Params;

verify::lowrank::Solver solver_from_string(const std::string& s) {
  if (s == "cg") return verify::lowrank::Solver::CG;
  if (s == "direct") return verify::lowrank::Solver::Direct;
  throw InvalidParams("solver", "must be cg or direct (got '" + s + "')");
}

verify::lowrank::SimOptions sim_options(int dim, int seeds, std::uint64_t seed, int threads,
                               const std::string& odg, const std::string& solver, bool min_norm) {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2");
  if (seeds < 1) throw InvalidParams("seeds", "must be >= 1");
  if (threads < 1) throw InvalidParams("threads", "must be >= 1");
  verify::lowrank::SimOptions o;
  o.dim = dim;
  o.seeds = seeds;
  o.base_seed = seed;
  o.threads = threads;
  o.odg = verify::lowrank::odg_kind_from_string(odg);
  o.solver = solver_from_string(solver);
  o.min_norm = min_norm;
  return o;
}

py::dict estimate_dict(const verify::lowrank::Estimate& e) {
  py::dict d;
  for (std::size_t i = 0; i < e.names.size(); ++i)
    d[py::str(e.names[i])] = py::make_tuple(e.stats[i].mean, e.stats[i].sem);
  return d;
}

py::dict run_simulator(const verify::lowrank::LowRankSimulator& sim) {
  verify::lowrank::Estimate e;
  {
    py::gil_scoped_release release;
    e = sim.run();
  }
  return estimate_dict(e);
}

const char* kSimulateDoc =
    "Simulate linear attention trained on low-rank regression tasks at finite D = dim.\n\n"
    "Returns {name: (mean, sem)} over `seeds` seeds: 'error.tm', 'error.idg', 'error.odg',\n"
    "'order.m', 'order.q', 'order.mbar', 'order.qbar', 'order.m0', 'order.q0', solver facts\n"
    "('cg.iterations', ...). Seed k is derived from (seed, k) only, so the result does not\n"
    "depend on `threads`. odg: 'isotropic' | 'subspace'; solver: 'cg' | 'direct';\n"
    "min_norm: allow lambda = 0 with tau < 1 (minimum-norm solution). Releases the GIL.";

}  // namespace

void bind_simulate(py::module_& m) {
  m.def(
      "simulate",
      [](const Params& p, int dim, int seeds, std::uint64_t seed, int threads,
         const std::string& odg, const std::string& solver, bool min_norm) {
        p.validate();
        const verify::lowrank::LowRankSimulator sim(p, sim_options(dim, seeds, seed, threads, odg, solver,
                                                          min_norm));
        return run_simulator(sim);
      },
      py::arg("params"), py::kw_only(), py::arg("dim") = verify::lowrank::SimOptions{}.dim,
      py::arg("seeds") = verify::lowrank::SimOptions{}.seeds,
      py::arg("seed") = verify::lowrank::SimOptions{}.base_seed,
      py::arg("threads") = verify::lowrank::SimOptions{}.threads, py::arg("odg") = "isotropic",
      py::arg("solver") = "cg", py::arg("min_norm") = false, kSimulateDoc);

  py::class_<verify::lowrank::LowRankSimulator>(
      m, "LowRankSimulator",
      "The finite-D simulator as an object: LowRankSimulator(params, dim=..., seeds=...,\n"
      "seed=..., threads=..., odg=..., solver=..., min_norm=...).run() -> {name: (mean, sem)}.")
      .def(py::init([](const Params& p, int dim, int seeds, std::uint64_t seed, int threads,
                       const std::string& odg, const std::string& solver, bool min_norm) {
             p.validate();
             return verify::lowrank::LowRankSimulator(
                 p, sim_options(dim, seeds, seed, threads, odg, solver, min_norm));
           }),
           py::arg("params"), py::kw_only(), py::arg("dim") = verify::lowrank::SimOptions{}.dim,
           py::arg("seeds") = verify::lowrank::SimOptions{}.seeds,
           py::arg("seed") = verify::lowrank::SimOptions{}.base_seed,
           py::arg("threads") = verify::lowrank::SimOptions{}.threads, py::arg("odg") = "isotropic",
           py::arg("solver") = "cg", py::arg("min_norm") = false)
      .def("run", &run_simulator, kSimulateDoc)
      .def_property_readonly("params", &verify::lowrank::LowRankSimulator::params, "the Params simulated")
      .def_property_readonly("dim", [](const verify::lowrank::LowRankSimulator& s) { return s.options().dim; },
                             "token dimension D")
      .def_property_readonly("seeds", [](const verify::lowrank::LowRankSimulator& s) { return s.options().seeds; },
                             "number of seeds")
      .def_property_readonly("seed", [](const verify::lowrank::LowRankSimulator& s) { return s.options().base_seed; },
                             "base seed")
      .def_property_readonly("threads", [](const verify::lowrank::LowRankSimulator& s) { return s.options().threads; },
                             "threads")
      .def_property_readonly(
          "odg", [](const verify::lowrank::LowRankSimulator& s) { return std::string(verify::lowrank::to_string(s.options().odg)); },
          "'isotropic' | 'subspace'");

  m.def(
      "sizes",
      [](const Params& p, int dim) {
        const verify::lowrank::Sizes s = verify::lowrank::sizes(p, dim);
        py::dict d;
        d["D"] = s.D;
        d["r"] = s.r;
        d["M0"] = s.M0;
        d["N"] = s.N;
        d["L"] = s.L;
        d["Lt"] = s.Lt;
        return d;
      },
      py::arg("params"), py::arg("dim"),
      "Integer sizes of a simulation at D = dim: {D, r, M0, N, L, Lt}.");

}

}  // namespace icl::python
