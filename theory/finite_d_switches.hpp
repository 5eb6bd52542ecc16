// The finite-D switches (docs/simulation.md §13.7, docs/finite_dim.md §21.1): each removes one
// finite-D source, with the same name and meaning for the simulator (which draws data without it,
// keeping the D -> infinity limit) and for the finite-D theory (which predicts that source as 0).
// One type, held whole by the simulation, verify, sweep and finite-D options; every front end adds
// its flags or keyword arguments from visit_switches(), so that a new source is one field here, one
// line in visit_switches() and its physics.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace icl::theory {

// The task of each pretraining sequence: drawn uniformly with replacement (Random, the paper's
// data) or cyclically, so that every task has N/M0 sequences up to one (Balanced: no
// task_counts source).
enum class Assignment { Random, Balanced };
const char* to_string(Assignment a);                      // "random" | "balanced"
Assignment assignment_from_string(const std::string& s);  // InvalidParams("assignment")

struct FiniteDSwitches {
  bool sphere_queries = false;    // training queries rescaled to |x| = 1: no query_norms source
  bool fixed_norm_tasks = false;  // pretraining tasks rescaled to |w|^2 = D: no task_norms
  Assignment assignment = Assignment::Random;  // Balanced: no task_counts source
  // Training context estimates from the theory's Gaussian model s = w + sqrt(nu_w) g: no
  // context_mean and context_scalars sources (the simulator's factorized sampler only).
  bool gaussian_context = false;

  bool any() const;  // some source is switched off
  // The names of the switches that are on, in visit_switches() order ("sphere_queries", ...,
  // "assignment" for Balanced).
  std::vector<std::string> names_on() const;
  void validate() const;  // InvalidParams("assignment") for a value outside the enum
  bool operator==(const FiniteDSwitches& o) const;  // every switch equal
};

// One switch as the front ends show it: its field name (also the Python keyword and, with
// dashes, the CLI flag), the help text and the finite-D source(s) it removes.
struct SwitchInfo {
  const char* name;
  const char* help;
  const char* removes;
};

// Calls f(info, field) for every switch in a fixed order; field is a bool& for the on/off
// switches and an Assignment& for the assignment. The one list of the switches.
template <class Switches, class F>
void visit_switches(Switches& s, F&& f) {
  f(SwitchInfo{"sphere_queries", "training queries rescaled to |x| = 1 (uniform on the sphere)",
               "query_norms"},
    s.sphere_queries);
  f(SwitchInfo{"fixed_norm_tasks", "pretraining tasks rescaled to |w|^2 = D exactly",
               "task_norms"},
    s.fixed_norm_tasks);
  f(SwitchInfo{"assignment",
               "task of each sequence: random (uniform, with replacement) | balanced (cyclic, "
               "N/M0 sequences per task)",
               "task_counts"},
    s.assignment);
  f(SwitchInfo{"gaussian_context",
               "training context estimates from the Gaussian model s = w + sqrt(nu_w) g "
               "(factorized sampler only)",
               "context_mean, context_scalars"},
    s.gaussian_context);
}

// {"sphere_queries": bool, "fixed_norm_tasks": bool, "assignment": "random"|"balanced",
//  "gaussian_context": bool}: the one serialization, in every JSON that describes a simulation
// or a finite-D prediction (key "finite_d_switches").
nlohmann::ordered_json to_json(const FiniteDSwitches& s);
// The inverse of to_json (missing keys keep their defaults); InvalidParams naming a bad key.
FiniteDSwitches finite_d_switches_from_json(const nlohmann::json& j);
// "" when none is on, else "finite-D sources off: sphere_queries, assignment balanced
// (docs/simulation.md §13.7)\n".
std::string to_text(const FiniteDSwitches& s);

}  // namespace icl::theory
