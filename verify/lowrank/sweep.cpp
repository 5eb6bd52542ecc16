#include "verify/lowrank/sweep.hpp"

#include <string>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/seed.hpp"
#include "verify/lowrank/serialize.hpp"

namespace icl::verify::lowrank {

SimOptions SweepOptions::default_simulation() { return SimOptions{.dim = 40}; }

void SweepOptions::validate() const {
  shard.validate();
  theory.validate();
  theory::Params::check_name(name);
  if (finite_dim) finite_dim->validate();
  if (simulation) simulation->validate();
  if (finite_dim && simulation && !(finite_dim->switches == simulation->switches))
    throw InvalidParams("finite_d_switches", "the finite-D prediction and the simulation of a "
                                             "sweep switch off the same sources");
  // Every point (theory::sweep validates them again, naming the point); the simulation's
  // combination with each point (e.g. lambda = 0 with N < D^2) only where it is simulated.
  if (simulation)
    for (std::size_t k : shard.indices(values.size())) {
      theory::Params p = base;
      p.set(name, values[k]);
      try {
        simulation->validate(p);
      } catch (const InvalidParams& e) {
        throw InvalidParams(e.field(), e.detail() + " (simulation at point " +
                                           std::to_string(k) + ", " + name + " = " +
                                           numerics::format_significant(values[k]) + ")");
      }
    }
}

SimOptions point_simulation(const SimOptions& simulation, std::size_t k) {
  SimOptions o = simulation;
  o.base_seed = numerics::derive_seed(simulation.base_seed, k);
  return o;
}

SimulationResult simulate_point(const SimOptions& simulation, const SweepPoint& point,
                                const numerics::Progress& progress) {
  return run(point.solution.params, point_simulation(simulation, point.index), progress);
}

void set_simulation(SweepPoint& point, const SimulationResult& r) {
  point.simulation = simulation_row(r);
  point.simulation_status = r.status;
  point.simulation_message = r.message;
}

SweepResult solve_theory(const SweepOptions& o, const numerics::Progress& progress) {
  o.validate();
  SweepResult r;
  r.options = o;
  const std::vector<std::size_t> index = o.shard.indices(o.values.size());
  std::vector<double> values;
  for (std::size_t k : index) values.push_back(o.values[k]);
  // One count over the stages, so that a progress bar never runs backwards.
  const std::size_t n = values.size();
  const std::size_t total = n * (1 + (o.finite_dim ? 1 : 0) + (o.simulation ? 1 : 0));
  const auto stage = [&](std::size_t offset) -> numerics::Progress {
    if (!progress) return {};
    return [&progress, offset, total](std::size_t d, std::size_t, const std::string& what) {
      progress(offset + d, total, what);
    };
  };
  const std::vector<theory::Solution> sols = theory::sweep(o.base, o.name, values, o.theory, stage(0));
  std::vector<theory::FiniteDimPoint> fd;
  if (o.finite_dim)
    fd = theory::finite_dim_sweep(o.base, o.name, values, *o.finite_dim, stage(n));
  for (std::size_t i = 0; i < n; ++i) {
    SweepPoint pt;
    pt.index = index[i];
    pt.value = values[i];
    pt.solution = sols[i];
    if (o.finite_dim) pt.finite_dim = fd[i];
    r.points.push_back(std::move(pt));
  }
  summarize(r);
  return r;
}

void summarize(SweepResult& r) {
  r.failed_points = r.finite_dim_failed = r.finite_dim_not_covered = r.simulation_failed = 0;
  std::string fd_first, sim_first;
  for (const SweepPoint& pt : r.points) {
    r.failed_points += !pt.solution.converged();
    if (pt.finite_dim) {
      if (!pt.finite_dim->result) ++r.finite_dim_not_covered;
      else if (!pt.finite_dim->result->converged() && r.finite_dim_failed++ == 0)
        fd_first = "point " + std::to_string(pt.index) + ": " + pt.finite_dim->result->message;
    }
    if (r.options.simulation && !pt.simulation.empty() &&
        pt.simulation_status != numerics::Status::Converged && r.simulation_failed++ == 0)
      sim_first = "point " + std::to_string(pt.index) + ": " + pt.simulation_message;
  }
  const std::string of = " of " + std::to_string(r.points.size());
  r.status = numerics::Status::NotConverged;
  if (r.simulation_failed)
    r.message = std::to_string(r.simulation_failed) + of +
                " simulations did not converge (nan values); first: " + sim_first;
  else if (r.failed_points)
    r.message = std::to_string(r.failed_points) + of +
                " points did not converge (converged = 0, nan values)";
  else if (r.finite_dim_failed)
    r.message = std::to_string(r.finite_dim_failed) + of +
                " finite-D predictions failed (nan fd_* values); first: " + fd_first;
  else {
    r.status = numerics::Status::Converged;
    r.message.clear();
  }
}

SweepResult run(const SweepOptions& o, const numerics::Progress& progress,
                const numerics::UnitStore& store) {
  SweepResult r = solve_theory(o, progress);
  if (!o.simulation) return r;
  const std::size_t n = r.points.size();
  const std::size_t done_before = n * (o.finite_dim ? 2 : 1), total = done_before + n;
  const std::size_t columns = simulation_columns().size();
  for (std::size_t i = 0; i < n; ++i) {
    SweepPoint& pt = r.points[i];
    // Point k's seeds derive from (base_seed, k) alone, so a kept point equals a recomputed one.
    const std::string unit = "point_" + std::to_string(pt.index);
    const auto kept = store.load ? store.load(unit) : std::nullopt;
    if (kept && kept->size() == columns) {
      pt.simulation = *kept;
      pt.simulation_status = numerics::Status::Converged;  // only converged ones are kept
    } else {
      const SimulationResult sim = simulate_point(*o.simulation, pt);
      set_simulation(pt, sim);
      // Not kept when it failed: a resumed run recomputes (and reports) it.
      if (sim.converged() && store.save) store.save(unit, pt.simulation);
    }
    if (progress) progress(done_before + i + 1, total, "simulation");
  }
  summarize(r);
  return r;
}

}  // namespace icl::verify::lowrank
