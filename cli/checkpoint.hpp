// Resumable long runs (--resume): `icl sweep --simulate`, `icl verify` and `icl figs` keep each
// finished unit (a sweep point's simulation, a verify simulation at one D, a figure) in the
// folder <out>.partial/ of numerics::CheckpointFolder (the one home of the mechanism; Python's
// checkpoint= uses it too). The same command with --resume reuses them; because every unit draws
// its own derived seeds, the result equals an uninterrupted run. While a checkpoint is open,
// Ctrl-C prints the command that continues the run (cli/interrupt.hpp).
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "numerics/checkpoint.hpp"

namespace icl::cli {

// --resume: continue the run from its checkpoint <out>.partial/.
CLI::Option* add_resume_flag(CLI::App& app, bool& resume);

class Checkpoint {
 public:
  Checkpoint() = default;  // inactive: keeps and finds nothing
  // The checkpoint of the run writing `out` (a file, or icl figs's folder). `fingerprint` holds
  // every option that changes a unit's result (not --threads, --quiet, --out). Exit 2 when the
  // folder exists without `resume` ("use --resume or remove it"), or with `resume` but another
  // fingerprint (naming the options that differ). `resume` without a folder starts afresh.
  Checkpoint(const std::string& out, const nlohmann::json& fingerprint, bool resume);

  bool active() const { return folder_.active(); }
  const std::string& folder() const { return folder_.folder(); }

  std::optional<nlohmann::json> load(const std::string& unit) const;
  void save(const std::string& unit, const nlohmann::json& value) const;  // atomically
  // The same files for a library run (numerics::UnitStore): numbers restored bit for bit.
  numerics::UnitStore store() const { return folder_.store(); }
  void remove() const;  // the run is complete: its output is written

 private:
  numerics::CheckpointFolder folder_;
};

}  // namespace icl::cli
