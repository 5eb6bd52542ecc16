// icl depth: to be written (docs/multistep.md).
#include "cli/commands.hpp"

namespace icl::cli {
void register_depth(CLI::App&) {}
}  // namespace icl::cli
