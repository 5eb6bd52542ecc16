// Pieces shared by the experiment entries of verify/patch/experiments.hpp (check.cpp,
// experiments.cpp); not part of the public API.
#pragma once
#include <string>

#include "verify/patch/experiments.hpp"

namespace icl::verify::patch::detail {

// The fields every experiment has: the model spec, context >= min_context, prompts >= 1, and
// the --train-steps options (validate_pretraining).
void validate_common(const ModelSource& model, int context, int min_context, int prompts,
                     const TrainOptions& training);

// A number for a status message (%.3g).
std::string short_number(double v);

}  // namespace icl::verify::patch::detail
