// Internal to the icl_theory Python module: the simulator's options (verify::lowrank::SimOptions)
// from Python keyword arguments, shared by simulate(), LowRankSimulator and sweep(simulate=...).
// Python names: dim, seeds, seed (the base seed), threads, odg, sampler, solver, cg_tolerance,
// cg_max_iterations, min_norm, theory, prediction_prompts, histogram_bins, bayes_prompts and the
// finite-D switches (theory::visit_switches).
#pragma once
#include <string>

#include "python/bindings.hpp"
#include "python/kwargs.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::python {

// Reads the names above that `k` holds into `o` (the rest keep o's values).
void read_sim_options(Kwargs& k, verify::lowrank::SimOptions& o);
// `o` with every keyword of `kwargs` read (an unknown one is a TypeError naming it and the
// function), validated.
verify::lowrank::SimOptions sim_options(const py::kwargs& kwargs, const std::string& function,
                                        verify::lowrank::SimOptions o);

}  // namespace icl::python
