// A checkpoint folder of a long run (docs/cli.md "Resumable runs"): the finished units of the run
// writing `out` are kept in <out>.partial/ as they finish, one file per unit, written
// atomically, next to options.json (the version and the options that determine the units). A
// later run with the same options reuses them; because every unit draws its own derived seeds,
// the result equals an uninterrupted run. The folder is removed once the final output exists.
// One home for the CLI's --resume and Python's checkpoint= (sweep(simulate=...)).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "numerics/unit_store.hpp"

namespace icl::numerics {

class CheckpointFolder {
 public:
  CheckpointFolder() = default;  // inactive: keeps and finds nothing

  // The folder of the run writing `out` (a file, or a folder such as icl figs's): "<out>.partial"
  // ("figures/" -> "figures.partial", "." -> "/abs/folder.partial").
  static std::string folder_for(const std::string& out);

  // Opens (or creates) the checkpoint of `out`. `fingerprint_json`: a JSON object of every
  // option that changes a unit's result (not threads, progress, output paths); `version` the
  // program's; `command` is recorded for people reading options.json, not compared.
  // Throws InvalidParams(field, ...) when the folder exists and `resume` is false ("an unfinished
  // run left its checkpoint ... (N finished units): continue it, or remove ..."), when it was
  // made with other options (naming the options that differ), or when it cannot be created.
  // A killed write's temporary files are removed; `resume` without a folder starts afresh.
  CheckpointFolder(const std::string& out, const std::string& fingerprint_json,
                   const std::string& version, bool resume, const std::string& field,
                   const std::string& command = "");

  bool active() const { return !folder_.empty(); }
  const std::string& folder() const { return folder_; }
  std::size_t units_found() const { return found_; }  // finished units present when opened
  bool resumed() const { return resumed_; }           // the folder existed and is reused

  // A unit's text (a JSON document), nullopt when absent or unreadable; saved atomically.
  std::optional<std::string> load_text(const std::string& unit) const;
  void save_text(const std::string& unit, const std::string& text) const;
  // Numbers, exactly (%.17g text, so that nan and inf survive): the library runs' UnitStore.
  std::optional<std::vector<double>> load(const std::string& unit) const;
  void save(const std::string& unit, const std::vector<double>& values) const;
  UnitStore store() const;  // load/save of this folder (empty when inactive)

  void remove() const;  // the run is complete: its output is written

 private:
  std::string folder_;
  std::size_t found_ = 0;
  bool resumed_ = false;
};

}  // namespace icl::numerics
