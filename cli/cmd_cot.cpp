// icl cot: to be written (docs/multistep.md).
#include "cli/commands.hpp"

namespace icl::cli {
void register_cot(CLI::App&) {}
}  // namespace icl::cli
