#include "numerics/checkpoint.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "numerics/atomic_file.hpp"
#include "numerics/error.hpp"
#include "numerics/table.hpp"

namespace icl::numerics {
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

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<nlohmann::json> read_json(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  try {
    return nlohmann::json::parse(*text);
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

std::string CheckpointFolder::folder_for(const std::string& out) {
  // Never a name like "..partial": "." and ".." become the absolute folder.
  fs::path target = fs::path(out).lexically_normal();
  if (target.filename() == "." || target.filename() == "..")
    target = fs::absolute(target).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  return target.string() + ".partial";
}

CheckpointFolder::CheckpointFolder(const std::string& out, const std::string& fingerprint_json,
                                   const std::string& version, bool resume,
                                   const std::string& field, const std::string& command) {
  const fs::path folder = folder_for(out);
  folder_ = folder.string();
  const nlohmann::json expected = {{"version", version},
                                   {"options", nlohmann::json::parse(fingerprint_json)}};
  std::error_code ec;
  if (fs::exists(folder, ec)) {
    std::size_t units = 0;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("unit_", 0) == 0) ++units;
      if (name.find(".tmp.") != std::string::npos) fs::remove(entry.path(), ec);  // a killed write
    }
    if (!resume)
      throw InvalidParams(field, "an unfinished run left its checkpoint " + folder_ + " (" +
                                     std::to_string(units) + " finished units): use --resume to "
                                     "continue it, or remove " + folder_ + " to start afresh");
    const auto stored = read_json(folder / kOptionsFile);
    nlohmann::json before = stored ? *stored : nlohmann::json::object();
    before.erase("command");
    if (before != expected)
      throw InvalidParams(field, "the checkpoint " + folder_ + " was made with other options (" +
                                     differences(expected, before) + "); rerun with its "
                                     "options, or remove " + folder_ + " to start afresh");
    found_ = units;
    resumed_ = true;
    return;
  }
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder))
    throw InvalidParams(field, "cannot create the checkpoint folder " + folder_ +
                                   (ec ? ": " + ec.message() : std::string()));
  nlohmann::json record = expected;
  record["command"] = command;  // for people reading it; not compared
  write_file_atomically((folder / kOptionsFile).string(), record.dump(2) + "\n");
}

std::optional<std::string> CheckpointFolder::load_text(const std::string& unit) const {
  if (!active()) return std::nullopt;
  return read_text(fs::path(folder_) / unit_file(unit));
}

void CheckpointFolder::save_text(const std::string& unit, const std::string& text) const {
  if (!active()) return;
  write_file_atomically((fs::path(folder_) / unit_file(unit)).string(), text);
}

std::optional<std::vector<double>> CheckpointFolder::load(const std::string& unit) const {
  const auto j = active() ? read_json(fs::path(folder_) / unit_file(unit)) : std::nullopt;
  if (!j || !j->is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& item : *j) {
    if (!item.is_string()) return std::nullopt;
    const std::string s = item.get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

void CheckpointFolder::save(const std::string& unit, const std::vector<double>& values) const {
  nlohmann::json j = nlohmann::json::array();
  for (double v : values) j.push_back(format_number(v));  // %.17g: exact for a double
  save_text(unit, j.dump() + "\n");
}

UnitStore CheckpointFolder::store() const {
  if (!active()) return {};
  return {[this](const std::string& key) { return load(key); },
          [this](const std::string& key, const std::vector<double>& values) { save(key, values); }};
}

void CheckpointFolder::remove() const {
  if (!active()) return;
  std::error_code ec;
  fs::remove_all(folder_, ec);
}

}  // namespace icl::numerics
