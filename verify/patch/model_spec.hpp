// How the front ends describe a model (docs/patch.md §2.4): the few numbers a user gives
// (`icl patch --d --layers --width ...`, `icl_theory.patch_check(...)`), the one rule that turns
// them into a ModelConfig, and loading a weights file with the consistency checks of the flags
// the user set explicitly.
#pragma once
#include <cstdint>
#include <string>

#include "verify/patch/model.hpp"

namespace icl::verify::patch {

// The normalization a user asks for: Auto = LayerNorm for preln/postln/parallel blocks, none for
// plain and residual blocks.
enum class NormChoice { Auto, None, LayerNorm, RmsNorm };
std::string to_string(NormChoice n);               // auto | none | layernorm | rmsnorm
NormChoice norm_choice_from_string(const std::string& s);  // InvalidParams("norm") if unknown

// The user-facing description of a model. validate() throws icl::InvalidParams naming the field.
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
  int mlp_depth = 2;     // dense layers in the MLP, >= 1
  Activation act = Activation::Gelu;
  bool gated = false;    // gated MLP (SwiGLU: act silu, GeGLU: act gelu; docs/patch.md §16)
  // Block kind (docs/patch.md §2.3, §16). The older switches `residual` and `pre_ln` select
  // BlockKind::Residual / PreNorm; combined with a different `block` they are an error ("block").
  BlockKind block = BlockKind::Plain;
  NormChoice norm = NormChoice::Auto;  // preln/postln need a norm; plain/residual have none
  bool residual = false; // residual blocks without LayerNorm (docs/patch.md §5)
  bool pre_ln = false;   // Pre-LN residual blocks (docs/patch.md §6); implies residual
  bool causal = true;    // causal attention mask
  void validate() const;
  ModelConfig config() const;  // validates, then applies the width rule above
  // The MLP kind gelu | relu | swiglu | geglu (model.hpp set_mlp): sets act and gated;
  // InvalidParams("mlp") for another name.
  void set_mlp(const std::string& name);
};

// Where an experiment's model comes from: a random initialisation of `spec` (seeded by the
// experiment's "weights" stream), or the weights file `weights`. With a file, every field of
// `spec` marked as given (set explicitly by the user) must agree with the file.
struct ModelSource {
  ModelSpec spec;
  std::string weights;  // empty: random initialisation
  bool given_d = false, given_width = false, given_layers = false, given_heads = false;
  bool given_block = false, given_norm = false, given_mlp = false;  // --block, --norm, --mlp KIND
};

// Load `path` (icl-patch-weights text format) and check it against the given fields of `src`.
// Throws icl::InvalidParams("weights", ...) when the file is missing or unreadable, and
// InvalidParams(<field>, "<given> but '<path>' has <value>") for a disagreeing field
// (d, width, layers, heads; heads is not checked for RNN models; block, norm, mlp).
Weights<double> load_model(const std::string& path, const ModelSource& src);

// The model of `src`: loaded from src.weights, or init_weights(src.spec.config(), seed).
Weights<double> make_model(const ModelSource& src, std::uint64_t init_seed);

}  // namespace icl::verify::patch
