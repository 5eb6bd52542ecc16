#include "theory/finite_d_switches.hpp"

#include <type_traits>

#include "numerics/error.hpp"

namespace icl::theory {

const char* to_string(Assignment a) { return a == Assignment::Random ? "random" : "balanced"; }

Assignment assignment_from_string(const std::string& s) {
  if (s == "random") return Assignment::Random;
  if (s == "balanced") return Assignment::Balanced;
  throw InvalidParams("assignment", "must be 'random' or 'balanced', got '" + s + "'");
}

namespace {
bool on(bool b) { return b; }
bool on(Assignment a) { return a != Assignment::Random; }
}  // namespace

bool FiniteDSwitches::any() const { return !names_on().empty(); }

std::vector<std::string> FiniteDSwitches::names_on() const {
  std::vector<std::string> out;
  visit_switches(*this, [&](const SwitchInfo& info, const auto& field) {
    if (on(field)) out.push_back(info.name);
  });
  return out;
}

bool FiniteDSwitches::operator==(const FiniteDSwitches& o) const {
  return to_json(*this) == to_json(o);  // visit_switches: the one list of the fields
}

void FiniteDSwitches::validate() const {
  if (assignment != Assignment::Random && assignment != Assignment::Balanced)
    throw InvalidParams("assignment", "must be random or balanced");
}

nlohmann::ordered_json to_json(const FiniteDSwitches& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  visit_switches(s, [&](const SwitchInfo& info, const auto& field) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) j[info.name] = field;
    else j[info.name] = to_string(field);
  });
  return j;
}

FiniteDSwitches finite_d_switches_from_json(const nlohmann::json& j) {
  FiniteDSwitches s;
  visit_switches(s, [&](const SwitchInfo& info, auto& field) {
    if (!j.contains(info.name)) return;
    const auto& v = j.at(info.name);
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
      if (!v.is_boolean()) throw InvalidParams(info.name, "must be true or false");
      field = v.get<bool>();
    } else {
      if (!v.is_string()) throw InvalidParams(info.name, "must be 'random' or 'balanced'");
      field = assignment_from_string(v.get<std::string>());
    }
  });
  return s;
}

std::string to_text(const FiniteDSwitches& s) {
  std::string line;
  visit_switches(s, [&](const SwitchInfo& info, const auto& field) {
    if (!on(field)) return;
    line += line.empty() ? "finite-D sources off: " : ", ";
    line += info.name;
    if constexpr (!std::is_same_v<std::decay_t<decltype(field)>, bool>)
      line += std::string(" ") + to_string(field);
  });
  return line.empty() ? line : line + " (docs/simulation.md §13.7)\n";
}

}  // namespace icl::theory
