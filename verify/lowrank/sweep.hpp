// A sweep along one parameter (docs/simulation.md §14.6): the theory with continuation and, at
// every point, optionally the finite-D prediction (docs/finite_dim.md §21) and a finite-D
// simulation. The one procedure behind `icl sweep`, Python's sweep() and icl_theory.distributed:
// they build SweepOptions, call run() (or its stages) and write the one serializer's table.
//
// Point k of the grid (global index k, whatever the shard) is simulated with base seed
// derive_seed(simulation.base_seed, k), so a point's result depends neither on the shard nor
// on the engine that runs it, and a resumed run equals an uninterrupted one.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/shard.hpp"
#include "numerics/status.hpp"
#include "numerics/unit_store.hpp"
#include "theory/finite_dim.hpp"
#include "theory/sweep.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::verify::lowrank {

using numerics::Shard;

struct SweepOptions {
  theory::Params base;
  std::string name;            // the varied parameter, one of theory::Params::names()
  std::vector<double> values;  // the whole grid, all shards
  theory::SweepOptions theory;  // method, warm starts, continuation
  std::optional<theory::FiniteDimOptions> finite_dim;  // the finite-D prediction per point
  // A simulation per point (its base_seed is the sweep's; point k derives its own). When both
  // are set, the finite-D prediction and the simulation switch off the same sources.
  std::optional<SimOptions> simulation;
  Shard shard;
  // The simulation options of a sweep where none are given: SimOptions with dim 40 (a sweep
  // simulates many points; D = 40 keeps one point to seconds).
  static SimOptions default_simulation();
  // Every point's Params (InvalidParams naming the field and the point), the finite-D and
  // simulation options, the shard, and the agreement of their switches ("finite_d_switches").
  void validate() const;
};

struct SweepPoint {
  std::size_t index = 0;  // global grid index
  double value = 0;
  theory::Solution solution;
  std::optional<theory::FiniteDimPoint> finite_dim;  // with SweepOptions::finite_dim
  // With SweepOptions::simulation: simulation_row() of the point's simulation (NaN when it did
  // not converge), its status and message.
  std::vector<double> simulation;
  numerics::Status simulation_status = numerics::Status::NotConverged;
  std::string simulation_message;
};

struct SweepResult {
  SweepOptions options;
  std::vector<SweepPoint> points;  // the shard's points, in grid order
  std::size_t failed_points = 0;              // theory not converged
  std::size_t finite_dim_failed = 0;          // finite-D prediction not converged
  std::size_t finite_dim_not_covered = 0;     // outside the finite-D theory (interpolation peak)
  std::size_t simulation_failed = 0;          // a seed's training did not converge
  // Converged when nothing failed; otherwise NotConverged with a message naming the first
  // failure (simulations first, then the theory, then the finite-D predictions).
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  bool converged() const { return status == numerics::Status::Converged; }
};

// The whole sweep: validate, the theory along the shard's points, the finite-D predictions,
// then one simulation per point. progress(done, total, stage) counts every unit of the three
// stages ("point", "finite-D point", "simulation"); it may throw to cancel. `store` keeps each
// converged simulation under "point_<k>" and gives it back on a resumed run.
SweepResult run(const SweepOptions& o, const numerics::Progress& progress = {},
                const numerics::UnitStore& store = {});

// The stages of run(), for engines that spread the simulations (Python's dask):
// solve_theory() is run() without simulations; simulate_point() is point k's simulation;
// set_simulation() records it; summarize() fills the counts and the status.
SweepResult solve_theory(const SweepOptions& o, const numerics::Progress& progress = {});
// The simulation options of the point with global index k: o.simulation with its base seed
// derived for k.
SimOptions point_simulation(const SimOptions& simulation, std::size_t k);
SimulationResult simulate_point(const SimOptions& simulation, const SweepPoint& point,
                                const numerics::Progress& progress = {});
void set_simulation(SweepPoint& point, const SimulationResult& r);
void summarize(SweepResult& r);

}  // namespace icl::verify::lowrank
