// icl merge: join the shards of a sweep or phase grid (--shard I/N) into one TSV, refusing
// shards that do not belong together.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"

namespace icl::cli {
namespace {

struct ShardFile {
  std::string path;
  std::string header;
  std::vector<std::pair<long, std::string>> rows;  // (global index, the line as written)
  nlohmann::json sidecar;
};

ShardFile read_shard(const std::string& path) {
  ShardFile f;
  f.path = path;
  std::ifstream in(path);
  if (!in) throw ExitError(kExitBadInput, "cannot read '" + path + "'");
  if (!std::getline(in, f.header)) throw ExitError(kExitBadInput, "'" + path + "' is empty");
  if (f.header.rfind("index\t", 0) != 0)
    throw ExitError(kExitBadInput, "'" + path + "' has no leading 'index' column: not a shard of icl sweep/phase");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    try {
      std::size_t pos = 0;
      const std::string idx = line.substr(0, tab);
      const double v = std::stod(idx, &pos);
      if (pos != idx.size() || v < 0 || v != static_cast<long>(v)) throw std::invalid_argument(idx);
      f.rows.emplace_back(static_cast<long>(v), line);
    } catch (const std::exception&) {
      throw ExitError(kExitBadInput, "'" + path + "': bad index in line '" + line.substr(0, 40) + "'");
    }
  }
  std::ifstream side(path + ".json");
  if (!side) throw ExitError(kExitBadInput, "missing sidecar '" + path + ".json'");
  try {
    f.sidecar = nlohmann::json::parse(side);
  } catch (const std::exception&) {
    throw ExitError(kExitBadInput, "'" + path + ".json' is not valid JSON");
  }
  return f;
}

// The per-shard counts of a sidecar (the sweep's, its simulation's and its finite-D
// prediction's): they differ between shards and are summed by the merge.
const std::vector<nlohmann::json::json_pointer>& counts() {
  static const std::vector<nlohmann::json::json_pointer> c = {
      nlohmann::json::json_pointer("/failed_points"),
      nlohmann::json::json_pointer("/simulation/failed_points"),
      nlohmann::json::json_pointer("/finite_dim/failed_points"),
      nlohmann::json::json_pointer("/finite_dim/not_covered_points")};
  return c;
}

// What must agree between shards: everything in the sidecar but the shard itself, the command
// line that made it, and its counts.
nlohmann::json identity(nlohmann::json side) {
  for (const char* k : {"shard", "command"}) side.erase(k);
  for (const auto& c : counts())
    if (side.contains(c)) side[c.parent_pointer()].erase(c.back());
  return side;
}

}  // namespace

void register_merge(CLI::App& app) {
  struct Options {
    std::vector<std::string> inputs;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("merge", "Join the shards of icl sweep/phase --shard I/N into one TSV");
  cmd->add_option("inputs", opt->inputs, "shard TSV files (each with its .json sidecar)")->required();
  cmd->add_option("--out", opt->out, "merged TSV FILE and its sidecar FILE.json (written atomically)")
      ->type_name("FILE")->required()->check(output_file_check());
  cmd->callback([opt] {
    std::vector<ShardFile> shards;
    for (const auto& p : opt->inputs) shards.push_back(read_shard(p));
    const ShardFile& first = shards.front();
    const long count = first.sidecar.value("/shard/count"_json_pointer, 1L);
    const long points = first.sidecar.value("grid_points", -1L);
    if (points < 0) throw ExitError(kExitBadInput, "'" + first.path + ".json' has no grid_points");
    std::map<long, std::string> seen_shards;
    std::map<long, const std::string*> rows;
    std::vector<long> totals(counts().size(), 0);
    for (const auto& s : shards) {
      if (s.header != first.header)
        throw ExitError(kExitBadInput, "'" + s.path + "' has other columns than '" + first.path + "'");
      if (identity(s.sidecar) != identity(first.sidecar))
        throw ExitError(kExitBadInput, "'" + s.path + "' was made with other parameters than '" +
                                           first.path + "' (compare their .json sidecars)");
      const long c = s.sidecar.value("/shard/count"_json_pointer, 1L);
      const long i = s.sidecar.value("/shard/index"_json_pointer, 0L);
      if (c != count)
        throw ExitError(kExitBadInput, "'" + s.path + "' is shard " + std::to_string(i) + "/" +
                                           std::to_string(c) + ", others are out of " + std::to_string(count));
      if (!seen_shards.emplace(i, s.path).second)
        throw ExitError(kExitBadInput, "shard " + std::to_string(i) + " given twice ('" +
                                           seen_shards[i] + "', '" + s.path + "')");
      for (std::size_t k = 0; k < counts().size(); ++k)
        totals[k] += s.sidecar.value(counts()[k], 0L);
      for (const auto& [idx, line] : s.rows)
        if (!rows.emplace(idx, &line).second)
          throw ExitError(kExitBadInput, "point " + std::to_string(idx) + " appears twice");
    }
    if (static_cast<long>(seen_shards.size()) != count || static_cast<long>(rows.size()) != points) {
      std::string missing;
      for (long i = 0; i < count; ++i)
        if (!seen_shards.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
      throw ExitError(kExitBadInput, "incomplete: " + std::to_string(rows.size()) + " of " +
                                         std::to_string(points) + " points" +
                                         (missing.empty() ? "" : "; missing shards " + missing));
    }
    std::string text = first.header + "\n";
    for (const auto& [idx, line] : rows) text += *line + "\n";
    nlohmann::json side = first.sidecar;
    side["shard"] = {{"index", 0}, {"count", 1}};
    for (std::size_t k = 0; k < counts().size(); ++k)
      if (side.contains(counts()[k])) side[counts()[k]] = totals[k];
    side["merged_from"] = opt->inputs;
    side["command"] = command_line();
    write_file_atomically(opt->out, text);
    write_file_atomically(opt->out + ".json", side.dump(2) + "\n");
  });
}

}  // namespace icl::cli
