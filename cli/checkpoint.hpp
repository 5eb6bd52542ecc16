// Resumable long runs (--resume): `icl sweep --simulate`, `icl verify` and `icl figs` keep each
// finished unit (a sweep point's simulation, a verify simulation at one D, a figure) in the
// folder <out>.partial/ as it finishes: one JSON file per unit, written atomically, next to
// options.json (the options that determine the units). The same command with --resume reuses
// them; because every unit draws its own derived seeds, the result equals an uninterrupted run.
// The folder is removed once the final output is written.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "numerics/unit_store.hpp"

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

  bool active() const { return !folder_.empty(); }
  const std::string& folder() const { return folder_; }
  std::size_t units_found() const { return found_; }  // finished units present when opened

  std::optional<nlohmann::json> load(const std::string& unit) const;
  void save(const std::string& unit, const nlohmann::json& value) const;  // atomically
  // The same files for a library run (numerics::UnitStore): numbers restored bit for bit.
  numerics::UnitStore store() const;
  void remove() const;  // the run is complete: its output is written

 private:
  std::string folder_;
  std::size_t found_ = 0;
};

// Numbers through JSON exactly (%.17g text, so that nan and inf survive): a list of strings.
nlohmann::json exact_numbers(const std::vector<double>& values);
std::optional<std::vector<double>> numbers_from(const nlohmann::json& j);

}  // namespace icl::cli
