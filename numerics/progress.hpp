// Progress of a long library call, reported to whoever called it (the CLI's stderr line, a Python
// callback, tqdm). Libraries never print.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace icl::numerics {

// `done` of `total` units of work finished; `what` names the unit or stage ("seed", "step",
// "D=40", ...). Calls are serialized (never concurrent) and `done` never decreases within a stage.
// An empty function means no reporting.
using Progress = std::function<void(std::size_t done, std::size_t total, const std::string& what)>;

}  // namespace icl::numerics
