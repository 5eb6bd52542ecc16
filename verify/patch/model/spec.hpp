// How the front ends describe a model (docs/patch.md §2.4): the few numbers a user gives
// (`icl patch --d --layers --width ...`, `icl_theory.patch_check(...)`), the one rule that turns
// them into a ModelConfig, and loading a weights file with the consistency checks of the fields
// the user set explicitly.
#pragma once
#include <cstdint>
#include <string>

#include "verify/patch/model/weights.hpp"

namespace icl::verify::patch {

// The user-facing description of a model; its defaults are the defaults of every front end.
// validate() throws icl::InvalidParams naming the field.
struct ModelSpec {
  int d = 2;             // input dimension (tokens (x, y) in R^{d+1}), >= 1
  int layers = 1;        // blocks L, >= 1
  LayerKind kind = LayerKind::Softmax;
  int heads = 8;         // attention heads, >= 1 (unused by the RNN)
  int head_dim = 4;      // size of each head, >= 1
  // Model width, >= 0. 0: d + 1 without an embedding for plain blocks, 32 with a linear
  // embedding/readout for residual blocks; any width != d + 1 adds the embedding/readout.
  int width = 0;
  int mlp_hidden = 128;  // MLP hidden width, >= 1
  int mlp_depth = 2;     // dense layers in the MLP, >= 1 (gated MLPs: >= 2)
  Block block;           // kind, norm (auto: the kind's), MLP (docs/patch.md §2.3, §16)
  bool causal = true;    // causal attention mask
  void validate() const;
  ModelConfig config() const;  // validates, then applies the width rule above
};

// Where an experiment's model comes from: a random initialisation of `spec` (seeded by the
// experiment's "weights" stream), or the weights file `weights`. With a file, every field of
// `spec` marked as given (set explicitly by the user) must agree with the file.
struct ModelSource {
  ModelSpec spec;
  std::string weights;  // empty: random initialisation
  bool given_d = false, given_width = false, given_layers = false, given_heads = false;
  bool given_block = false, given_norm = false, given_mlp = false;
};

// Load `path` (text or safetensors, model/weights_io.hpp) and check it against the given fields
// of `src`. Throws icl::InvalidParams("weights", ...) when the file is missing or unreadable,
// and InvalidParams(<field>, "<given> but '<path>' has <value>") for a disagreeing field (d,
// width, layers, heads; heads is not checked for RNN models; block, norm (not auto), mlp).
Weights<double> load_model(const std::string& path, const ModelSource& src);

// The model of `src`: loaded from src.weights, or init_weights(src.spec.config(), seed).
Weights<double> make_model(const ModelSource& src, std::uint64_t init_seed);

}  // namespace icl::verify::patch
