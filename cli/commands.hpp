// Each subcommand lives in its own cli/cmd_<name>.cpp and registers itself here.
#pragma once
#include <CLI/CLI.hpp>

namespace icl::cli {
// Each adds a subcommand to `app` whose callback does the work (throwing ExitError on failure).
void register_solve(CLI::App& app);     // cmd_solve.cpp
void register_sweep(CLI::App& app);     // cmd_sweep.cpp   (sweep, phase)
void register_simulate(CLI::App& app);  // cmd_simulate.cpp (simulate, verify)
void register_patch(CLI::App& app);     // cmd_patch.cpp
void register_merge(CLI::App& app);     // cmd_merge.cpp  (shards of sweep/phase)
void register_figs(CLI::App& app);      // cmd_figs.cpp   (paper figures)
void register_softmax(CLI::App& app);   // cmd_softmax.cpp (softmax-attention check)
void register_optimize(CLI::App& app);  // cmd_optimize.cpp (optimal hyperparameters)
void register_boundary(CLI::App& app);  // cmd_boundary.cpp (phase boundaries in any plane)
void register_cot(CLI::App& app);       // cmd_cot.cpp (test-time iteration)
void register_depth(CLI::App& app);     // cmd_depth.cpp (depth: L layers as L steps)
}  // namespace icl::cli
