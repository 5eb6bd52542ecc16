// Finished units of a long computation kept outside the process, so that a killed run can be
// resumed without redoing them (the CLI's --resume keeps them in files). A library run asks
// load(key) before computing a unit and calls save(key, values) after computing it; the values
// come back bit for bit, so a resumed run gives the result of an uninterrupted one when every
// unit is independent of the others (its own derived seeds). Libraries never touch files.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace icl::numerics {

// An empty load/save keeps nothing (every unit is computed). Keys name a unit within one run
// ("p1_D40"); calls come from the thread that runs the experiment.
struct UnitStore {
  std::function<std::optional<std::vector<double>>(const std::string& key)> load;
  std::function<void(const std::string& key, const std::vector<double>& values)> save;
};

}  // namespace icl::numerics
