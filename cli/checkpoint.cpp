#include "cli/checkpoint.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/common.hpp"

#ifndef ICL_VERSION
#define ICL_VERSION "unknown"
#endif

namespace icl::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOptionsFile = "options.json";

// Unit keys become file names: keep [A-Za-z0-9_.-], replace the rest.
std::string unit_file(const std::string& unit) {
  std::string name = "unit_";
  for (char c : unit)
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return name + ".json";
}

std::optional<nlohmann::json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // unreadable: treated as absent (the unit is recomputed)
  }
}

// "/simulation/seeds: 3 now, 2 in the checkpoint; ..." for the options that differ.
std::string differences(const nlohmann::json& now, const nlohmann::json& before) {
  const nlohmann::json a = now.flatten(), b = before.flatten();
  std::string out;
  auto add = [&](const std::string& key, const std::string& x, const std::string& y) {
    if (out.size() > 400) return;
    out += (out.empty() ? "" : "; ") + key + ": " + x + " now, " + y + " in the checkpoint";
  };
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!b.contains(it.key()) || b[it.key()] != it.value())
      add(it.key(), it.value().dump(), b.contains(it.key()) ? b[it.key()].dump() : "absent");
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key())) add(it.key(), "absent", it.value().dump());
  return out;
}

}  // namespace

CLI::Option* add_resume_flag(CLI::App& app, bool& resume) {
  return app.add_flag("--resume", resume,
                      "continue an interrupted run: reuse the finished units kept in "
                      "<out>.partial/ (same options required)");
}

Checkpoint::Checkpoint(const std::string& out, const nlohmann::json& fingerprint, bool resume) {
  // "figures/" -> "figures.partial"; "." -> "/abs/folder.partial" (never a name like "..partial").
  fs::path target = fs::path(out).lexically_normal();
  if (target.filename() == "." || target.filename() == "..")
    target = fs::absolute(target).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  const fs::path folder = target.string() + ".partial";
  folder_ = folder.string();
  nlohmann::json expected = {{"version", ICL_VERSION}, {"options", fingerprint}};
  std::error_code ec;
  if (fs::exists(folder, ec)) {
    std::size_t units = 0;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("unit_", 0) == 0) ++units;
      if (name.find(".tmp.") != std::string::npos) fs::remove(entry.path(), ec);  // a killed write
    }
    if (!resume)
      throw ExitError(kExitBadInput,
                      "an unfinished run left its checkpoint " + folder_ + " (" +
                          std::to_string(units) + " finished units): use --resume to continue "
                          "it, or remove " + folder_ + " to start afresh");
    const auto stored = read_json(folder / kOptionsFile);
    nlohmann::json before = stored ? *stored : nlohmann::json::object();
    before.erase("command");
    if (before != expected)
      throw ExitError(kExitBadInput,
                      "--resume: the checkpoint " + folder_ + " was made with other options (" +
                          differences(expected, before) + "); rerun with its options, or remove " +
                          folder_ + " to start afresh");
    found_ = units;
    std::fprintf(stderr, "icl: --resume: reusing %zu finished units kept in %s\n", units,
                 folder_.c_str());
    return;
  }
  if (resume)
    std::fprintf(stderr, "icl: --resume: no checkpoint %s, starting afresh\n", folder_.c_str());
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder))
    throw ExitError(kExitBadInput, "cannot create the checkpoint folder " + folder_ +
                                       (ec ? ": " + ec.message() : std::string()));
  nlohmann::json record = expected;
  record["command"] = command_line();  // for people reading it; not compared
  write_file_atomically((folder / kOptionsFile).string(), record.dump(2) + "\n");
}

std::optional<nlohmann::json> Checkpoint::load(const std::string& unit) const {
  if (!active()) return std::nullopt;
  return read_json(fs::path(folder_) / unit_file(unit));
}

void Checkpoint::save(const std::string& unit, const nlohmann::json& value) const {
  if (!active()) return;
  write_file_atomically((fs::path(folder_) / unit_file(unit)).string(), value.dump() + "\n");
}

numerics::UnitStore Checkpoint::store() const {
  if (!active()) return {};
  return {[this](const std::string& key) -> std::optional<std::vector<double>> {
            const auto j = load(key);
            return j ? numbers_from(*j) : std::nullopt;
          },
          [this](const std::string& key, const std::vector<double>& values) {
            save(key, exact_numbers(values));
          }};
}

void Checkpoint::remove() const {
  if (!active()) return;
  std::error_code ec;
  fs::remove_all(folder_, ec);
}

nlohmann::json exact_numbers(const std::vector<double>& values) {
  nlohmann::json j = nlohmann::json::array();
  for (double v : values) j.push_back(format_number(v));  // %.17g: exact for a double
  return j;
}

std::optional<std::vector<double>> numbers_from(const nlohmann::json& j) {
  if (!j.is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& item : j) {
    if (!item.is_string()) return std::nullopt;
    const std::string s = item.get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

}  // namespace icl::cli
