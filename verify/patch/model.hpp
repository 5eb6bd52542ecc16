// The patch model (docs/patch.md §2), one concept per file in verify/patch/model/:
//   config.hpp      the vocabulary: LayerKind, BlockKind, Norm, Mlp; Block (kind + norm + MLP);
//                   ModelConfig (the shape of a model)
//   spec.hpp        ModelSpec (what a user gives; the width rule), ModelSource, load_model
//   weights.hpp     Mat, Vec, BlockWeights, Weights, parameters(), zeros, init_weights, casts
//   cache.hpp       the intermediates of a forward pass (ForwardCache, BlockCache)
//   layers.hpp      the contextual layer (attention, RNN), the MLP, the norms; their backward
//   block.hpp       a block and the whole model, forward and backward
//   prompts.hpp     the in-context regression prompts (Prompt, make_prompts)
//   weights_io.hpp  weights files: the text format and safetensors (docs/patch.md §2.5)
// Everything is in namespace icl::verify::patch and templated on the scalar (double, float).
#pragma once
#include "verify/patch/model/block.hpp"
#include "verify/patch/model/cache.hpp"
#include "verify/patch/model/config.hpp"
#include "verify/patch/model/layers.hpp"
#include "verify/patch/model/prompts.hpp"
#include "verify/patch/model/spec.hpp"
#include "verify/patch/model/weights.hpp"
#include "verify/patch/model/weights_io.hpp"
