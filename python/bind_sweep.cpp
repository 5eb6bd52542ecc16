// Sweeps and grids from Python: sweep() through the library's one sweep procedure
// (verify/lowrank/sweep.hpp: the theory, the finite-D prediction and the simulation per point,
// the same as `icl sweep`), its stages for icl_theory.distributed, solve_finite_dim, phase_grid
// and the vectorized solve (theory::solve_points). Arrays come from the library's serializers.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/kwargs.hpp"
#include "numerics/checkpoint.hpp"
#include "python/progress.hpp"
#include "python/sim_options.hpp"
#include "python/theory_common.hpp"
#include "theory/finite_dim.hpp"
#include "theory/serialize.hpp"
#include "theory/phase_grid.hpp"
#include "theory/sweep.hpp"
#include "verify/lowrank/serialize.hpp"
#include "verify/lowrank/sweep.hpp"

namespace icl::python {
namespace {

using theory::Params;
using theory::Solution;
namespace vl = verify::lowrank;

// The library's sweep options from sweep()'s arguments. `options`: the finite-D switches
// (theory::visit_switches) and, with simulate, the simulator's keywords (sim_options.hpp),
// whose defaults are SweepOptions::default_simulation().
vl::SweepOptions sweep_options(const Params& p, const std::string& name,
                               const std::vector<double>& values, const std::string& method,
                               const std::string& moments, bool warm_start, int max_halvings,
                               double residual_tolerance, std::optional<int> finite_dim,
                               bool simulate, bool gradient, const py::kwargs& options) {
  vl::SweepOptions o;
  o.base = p;
  o.name = param_name(name);
  o.values = values;
  o.theory.solve = solve_options(method, moments, residual_tolerance,
                                 o.theory.solve.solver.max_iterations);
  o.theory.solve.gradient = gradient;
  o.theory.warm_start = warm_start;
  o.theory.max_halvings = max_halvings;
  Kwargs k(options, "sweep");
  theory::FiniteDSwitches switches;
  k.take_switches(switches);
  if (simulate) {
    vl::SimOptions sim = vl::SweepOptions::default_simulation();
    read_sim_options(k, sim);
    sim.switches = switches;
    o.simulation = sim;
  }
  k.finish();
  o.finite_dim = theory::finite_dim_request(finite_dim, switches, simulate, "simulate");
  o.validate();
  return o;
}

// The columns of `icl sweep` (verify::lowrank::to_table) as arrays, without the grid index, the
// varied parameter under the caller's name; with a simulation also sim_converged (bool); and
// "_parameters", every input parameter per point (parameter_arrays, for to_pandas()).
py::dict sweep_arrays(const vl::SweepResult& r, const std::string& name) {
  numerics::Table t = vl::to_table(r);
  for (auto& c : t.columns)
    if (c == r.options.name) c = name;
  py::dict out = table_to_arrays(t, {"index"});
  std::vector<Solution> sols;
  for (const auto& pt : r.points) sols.push_back(pt.solution);
  out["_parameters"] = parameter_arrays(sols, {static_cast<py::ssize_t>(sols.size())});
  add_gradient_arrays(out, sols, {static_cast<py::ssize_t>(sols.size())});
  if (r.options.simulation) {
    py::array_t<bool> ok(static_cast<py::ssize_t>(r.points.size()));
    for (std::size_t i = 0; i < r.points.size(); ++i)
      ok.mutable_data()[i] = r.points[i].simulation_status == numerics::Status::Converged;
    out["sim_converged"] = ok;
  }
  return out;
}

py::list simulation_messages(const vl::SweepResult& r) {
  py::list m;
  for (const auto& pt : r.points)
    m.append(pt.simulation_status == numerics::Status::Converged ? "" : pt.simulation_message);
  return m;
}

const char* kSweepDoc =
    "Internal (icl_theory.sweep): the library's sweep (theory, finite_dim=D predictions,\n"
    "simulate=True simulations per point), returned as a SweepRun.";

// A sweep in progress or done: the library's SweepResult with the stages icl_theory.distributed
// needs (the theory here, the simulations on workers).
struct SweepRun {
  vl::SweepResult result;
  std::string name;  // the caller's name of the varied parameter (lambda_ for lambda)
};

void bind_sweep_run(py::module_& m) {
  py::class_<SweepRun>(m, "_SweepRun", "Internal: a sweep's library result (see sweep()).")
      .def("columns", [](const SweepRun& s) { return sweep_arrays(s.result, s.name); })
      .def("simulation_messages", [](const SweepRun& s) { return simulation_messages(s.result); })
      .def_property_readonly("converged", [](const SweepRun& s) { return s.result.converged(); })
      .def_property_readonly("message", [](const SweepRun& s) { return s.result.message; })
      .def_property_readonly("options", [](const SweepRun& s) {
        return to_python(vl::to_json(s.result));
      })
      .def("points", [](const SweepRun& s) {
        py::list out;
        for (const auto& pt : s.result.points) out.append(py::make_tuple(pt.index, pt.solution.params));
        return out;
      }, "(global index, Params) of every point, for simulate_point on a worker")
      .def("set_simulation", [](SweepRun& s, std::size_t i, const std::vector<double>& cells,
                                bool converged, const std::string& message) {
        if (i >= s.result.points.size()) throw py::index_error("no such point");
        auto& pt = s.result.points[i];
        pt.simulation = cells;
        pt.simulation_status = converged ? numerics::Status::Converged : numerics::Status::NotConverged;
        pt.simulation_message = message;
      })
      .def("summarize", [](SweepRun& s) { vl::summarize(s.result); });
}

// phase_grid and the vectorized solve (theory::solve_points).
void bind_grids(py::module_& m) {
  const theory::PhaseOptions def{};
  m.def(
      "phase_grid",
      [](const Params& p, const std::string& x_name, const std::vector<double>& xs,
         const std::string& y_name, const std::vector<double>& ys, const std::string& method,
         const std::string& moments, int threads, bool gradient, const py::object& progress) {
        theory::PhaseOptions o;
        const theory::SolveOptions solve_def{};
        o.solve = solve_options(method, moments, solve_def.solver.residual_tolerance,
                                solve_def.solver.max_iterations);
        o.solve.gradient = gradient;
        o.threads = threads;
        const PyProgress report(progress, /*cancels=*/true);  // solve_points stops its workers
        std::vector<Solution> sols;
        {
          py::gil_scoped_release release;
          sols = theory::phase_grid(p, param_name(x_name), xs, param_name(y_name), ys, o,
                                    report.function());
        }
        const auto nx = static_cast<py::ssize_t>(xs.size());
        const auto ny = static_cast<py::ssize_t>(ys.size());
        py::dict out = solutions_to_arrays(sols, {nx, ny});
        out["_parameters"] = parameter_arrays(sols, {nx, ny});
        add_gradient_arrays(out, sols, {nx, ny});
        py::array_t<double> X({nx, ny}), Y({nx, ny});
        for (py::ssize_t i = 0; i < nx; ++i)
          for (py::ssize_t j = 0; j < ny; ++j) {
            X.mutable_at(i, j) = xs[static_cast<std::size_t>(i)];
            Y.mutable_at(i, j) = ys[static_cast<std::size_t>(j)];
          }
        out[py::str(x_name)] = X;
        out[py::str(y_name)] = Y;
        py::array_t<int> reg({nx, ny});
        for (std::size_t k = 0; k < sols.size(); ++k)
          reg.mutable_data()[k] = static_cast<int>(sols[k].regime);
        out["regime"] = reg;
        return out;
      },
      py::arg("params"), py::arg("x_name"), py::arg("xs"), py::arg("y_name"), py::arg("ys"),
      py::kw_only(), py::arg("method") = theory::to_string(def.solve.method),
      py::arg("moments") = numerics::to_string(def.solve.moments),
      py::arg("threads") = def.threads, py::arg("gradient") = def.solve.gradient,
      py::arg("progress") = py::none(),
      "Solve on the grid xs x ys of two parameters (names as in sweep()). Returns a dict of 2-D\n"
      "numpy arrays of shape (len(xs), len(ys)) (element [i, j] at x = xs[i], y = ys[j]): the\n"
      "same quantities as sweep(), the two parameters under their names, and regime\n"
      "(0 task-rich, 1 task-poor, 2 boundary). threads = 0 uses every core; results do not\n"
      "depend on it. progress: as in sweep().");

  m.def(
      "_solve_points",
      [](const Params& base, const std::vector<std::string>& names,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
         const std::string& method, const std::string& moments, double residual_tolerance,
         int max_iterations, int threads, std::optional<int> finite_dim, bool gradient,
         const py::object& progress) {
        if (values.ndim() != 2 || values.shape(1) != static_cast<py::ssize_t>(names.size()))
          throw std::invalid_argument("_solve_points: values must have shape (n, len(names))");
        theory::PhaseOptions o;
        o.solve = solve_options(method, moments, residual_tolerance, max_iterations);
        o.solve.gradient = gradient;
        o.threads = threads;
        const PyProgress report(progress, /*cancels=*/true);
        const auto n = values.shape(0);
        const auto v = values.unchecked<2>();
        std::vector<Params> points(static_cast<std::size_t>(n), base);
        for (py::ssize_t k = 0; k < n; ++k)
          for (std::size_t c = 0; c < names.size(); ++c)  // in order: gamma last sets tau
            points[static_cast<std::size_t>(k)].set(param_name(names[c]),
                                                    v(k, static_cast<py::ssize_t>(c)));
        const auto fd_options = theory::finite_dim_request(finite_dim, {});
        std::vector<Solution> sols;
        std::vector<theory::FiniteDimPoint> fd;
        {
          py::gil_scoped_release release;
          sols = theory::solve_points(points, o, report.function());
          if (fd_options) fd = theory::finite_dim_points(points, *fd_options, report.function());
        }
        py::dict out = solutions_to_arrays(sols, {n});
        out["_parameters"] = parameter_arrays(sols, {n});
        add_gradient_arrays(out, sols, {n});
        if (fd_options) {  // the columns of `icl sweep --finite-dim` (theory::finite_dim_row)
          numerics::Table t;
          const bool shift = base.has_test_shift();
          t.columns = theory::finite_dim_columns(shift);
          for (const auto& f : fd)
            t.rows.push_back(theory::finite_dim_row(f.result ? &*f.result : nullptr, shift));
          for (const auto& [name, column] : table_to_arrays(t)) out[name] = column;
        }
        py::array_t<int> reg(n);
        for (std::size_t k = 0; k < sols.size(); ++k)
          reg.mutable_data()[k] = static_cast<int>(sols[k].regime);
        out["regime"] = reg;
        return out;
      },
      py::arg("base"), py::arg("names"), py::arg("values"), py::kw_only(), py::arg("method"),
      py::arg("moments"), py::arg("residual_tolerance"), py::arg("max_iterations"),
      py::arg("threads"), py::arg("finite_dim") = py::none(), py::arg("gradient") = false,
      py::arg("progress"),
      "Internal (icl_theory.solve with arrays): solve base with names[c] set to values[k, c]\n"
      "for every row k (theory::solve_points); a dict of 1-D arrays as sweep() returns.");

}

}  // namespace

void bind_sweep(py::module_& m) {
  const theory::SweepOptions sweep_def{};
  bind_sweep_run(m);
  m.def(
      "sweep",
      [](const Params& p, const std::string& name, const std::vector<double>& values,
         const std::string& method, const std::string& moments, bool warm_start, int max_halvings,
         double residual_tolerance, std::optional<int> finite_dim, bool simulate,
         std::optional<std::string> checkpoint, bool gradient, bool simulations,
         const py::object& progress, const py::kwargs& options) {
        SweepRun run{{}, name};
        const vl::SweepOptions o =
            sweep_options(p, name, values, method, moments, warm_start, max_halvings,
                          residual_tolerance, finite_dim, simulate, gradient, options);
        // checkpoint=PATH: the finished simulations kept in PATH.partial/ (the CLI's --resume
        // folder, numerics::CheckpointFolder); a later call with the same options reuses them.
        numerics::CheckpointFolder kept;
        if (checkpoint) {
          if (!simulate)
            throw InvalidParams("checkpoint", "keeps the simulations of simulate=True (the "
                                              "theory is recomputed in seconds)");
          kept = numerics::CheckpointFolder(*checkpoint, vl::to_json(o).dump(),
                                            ICL_THEORY_VERSION, /*resume=*/true, "checkpoint",
                                            "icl_theory.sweep");
        }
        const PyProgress report(progress, /*cancels=*/true);  // single-threaded: may unwind
        {
          py::gil_scoped_release release;
          // simulations = False: the stages up to the simulations (icl_theory.distributed
          // runs them on workers).
          run.result = simulations ? vl::run(o, report.function(), kept.store())
                                   : vl::solve_theory(o, report.function());
        }
        kept.remove();  // complete: the result is returned
        return run;
      },
      py::arg("params"), py::arg("name"), py::arg("values"), py::kw_only(),
      py::arg("method") = theory::to_string(sweep_def.solve.method),
      py::arg("moments") = numerics::to_string(sweep_def.solve.moments),
      py::arg("warm_start") = sweep_def.warm_start, py::arg("max_halvings") = sweep_def.max_halvings,
      py::arg("residual_tolerance") = sweep_def.solve.solver.residual_tolerance,
      py::arg("finite_dim") = py::none(), py::arg("simulate") = false,
      py::arg("checkpoint") = py::none(), py::arg("gradient") = false,
      py::arg("_simulations") = true,
      py::arg("progress") = py::none(), kSweepDoc);

  m.def(
      "_simulate_sweep_point",
      [](const Params& point, std::size_t index, const py::kwargs& options) {
        const vl::SimOptions sim =
            sim_options(options, "simulate_sweep", vl::SweepOptions::default_simulation());
        vl::SweepPoint pt;
        pt.index = index;
        pt.solution.params = point;
        vl::SimulationResult r;
        {
          py::gil_scoped_release release;
          r = vl::simulate_point(sim, pt);
        }
        vl::set_simulation(pt, r);
        return py::make_tuple(pt.simulation, r.converged(), r.message);
      },
      py::arg("params"), py::arg("index"),
      "Internal (icl_theory.distributed): the simulation of the sweep point with global index\n"
      "`index` (verify::lowrank::simulate_point: base seed derive_seed(seed, index)), as\n"
      "(cells of simulation_columns(), converged, message).");

  m.def(
      "_solve_finite_dim",
      [](const Params& p, int dim, const py::kwargs& switches_kw) {
        Kwargs k(switches_kw, "solve_finite_dim");
        theory::FiniteDSwitches switches;
        k.take_switches(switches);
        k.finish();
        const auto o = *theory::finite_dim_request(dim, switches);
        theory::FiniteDimResult r;
        {
          py::gil_scoped_release release;
          r = theory::solve_finite_dim(p, o);
        }
        return to_python(theory::to_json(r));
      },
      py::arg("params"), py::arg("dim"),
      "Internal (icl_theory.solve_finite_dim): the finite-D prediction at dimension `dim`\n"
      "(theory::solve_finite_dim, docs/finite_dim.md §21) as the dict of its one serializer.");

  bind_grids(m);
}

}  // namespace icl::python
