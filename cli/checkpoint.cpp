#include "cli/checkpoint.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/common.hpp"
#include "cli/interrupt.hpp"
#include "numerics/error.hpp"

#ifndef ICL_VERSION
#define ICL_VERSION "unknown"
#endif

namespace icl::cli {

CLI::Option* add_resume_flag(CLI::App& app, bool& resume) {
  return app.add_flag("--resume", resume,
                      "continue an interrupted run: reuse the finished units kept in "
                      "<out>.partial/ (same options required)");
}

Checkpoint::Checkpoint(const std::string& out, const nlohmann::json& fingerprint, bool resume) {
  const bool existed = std::filesystem::exists(numerics::CheckpointFolder::folder_for(out));
  try {
    folder_ = numerics::CheckpointFolder(out, fingerprint.dump(), ICL_VERSION, resume, "resume",
                                         command_line());
  } catch (const InvalidParams& e) {
    // The command line's wording: the message alone (it names --resume and the folder).
    throw ExitError(kExitBadInput, (resume ? "--resume: " : "") + e.detail());
  }
  if (folder_.resumed())
    std::fprintf(stderr, "icl: --resume: reusing %zu finished units kept in %s\n",
                 folder_.units_found(), folder_.folder().c_str());
  else if (resume && !existed)
    std::fprintf(stderr, "icl: --resume: no checkpoint %s, starting afresh\n",
                 folder_.folder().c_str());
  on_interrupt_keep_checkpoint(folder_.folder(), resume_command());
}

std::optional<nlohmann::json> Checkpoint::load(const std::string& unit) const {
  const auto text = folder_.load_text(unit);
  if (!text) return std::nullopt;
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // unreadable: treated as absent (the unit is recomputed)
  }
}

void Checkpoint::save(const std::string& unit, const nlohmann::json& value) const {
  folder_.save_text(unit, value.dump() + "\n");
}

void Checkpoint::remove() const {
  if (!active()) return;
  on_interrupt_default();
  folder_.remove();
}

}  // namespace icl::cli
