#include "verify/patch/model_spec.hpp"

#include <filesystem>
#include <fstream>

#include "numerics/error.hpp"
#include "verify/patch/weights_io.hpp"

namespace icl::verify::patch {

std::string to_string(NormChoice n) {
  switch (n) {
    case NormChoice::Auto: return "auto";
    case NormChoice::None: return "none";
    case NormChoice::LayerNorm: return "layernorm";
    case NormChoice::RmsNorm: return "rmsnorm";
  }
  return "?";
}

NormChoice norm_choice_from_string(const std::string& s) {
  for (NormChoice n : {NormChoice::Auto, NormChoice::None, NormChoice::LayerNorm, NormChoice::RmsNorm})
    if (s == to_string(n)) return n;
  throw InvalidParams("norm", "must be layernorm, rmsnorm or none, got '" + s + "'");
}

void ModelSpec::validate() const {
  if (d < 1) throw InvalidParams("d", "must be >= 1, got " + std::to_string(d));
  if (layers < 1) throw InvalidParams("layers", "must be >= 1, got " + std::to_string(layers));
  if (heads < 1) throw InvalidParams("heads", "must be >= 1, got " + std::to_string(heads));
  if (head_dim < 1) throw InvalidParams("head_dim", "must be >= 1, got " + std::to_string(head_dim));
  if (width < 0) throw InvalidParams("width", "must be >= 0, got " + std::to_string(width));
  if (mlp_hidden < 1) throw InvalidParams("mlp_hidden", "must be >= 1, got " + std::to_string(mlp_hidden));
  if (mlp_depth < 1) throw InvalidParams("mlp_depth", "must be >= 1, got " + std::to_string(mlp_depth));
}

void ModelSpec::set_mlp(const std::string& name) {
  ModelConfig c;
  patch::set_mlp(c, name);
  act = c.act;
  gated = c.gated;
}

ModelConfig ModelSpec::config() const {
  validate();
  ModelConfig c;
  c.token_dim = d + 1;
  c.layers = layers;
  c.kind = kind;
  c.heads = heads;
  c.head_dim = head_dim;
  c.mlp_hidden = mlp_hidden;
  c.mlp_depth = mlp_depth;
  c.act = act;
  c.gated = gated;
  c.causal = causal;
  BlockKind b = block;
  if (residual || pre_ln) {
    const BlockKind legacy = pre_ln ? BlockKind::PreNorm : BlockKind::Residual;
    if (b != BlockKind::Plain && b != legacy)
      throw InvalidParams("block", to_string(b) + " conflicts with the " +
                                       (pre_ln ? "pre-ln" : "residual") + " switch");
    b = legacy;
  }
  const bool normalized =
      norm == NormChoice::Auto
          ? (b == BlockKind::PreNorm || b == BlockKind::PostNorm || b == BlockKind::Parallel)
          : norm != NormChoice::None;
  set_block(c, b, normalized);
  if (norm == NormChoice::RmsNorm) c.norm = Norm::RmsNorm;
  // width 0: the token dimension for plain blocks, 32 with an embedding for residual blocks
  c.width = width == 0 ? (c.residual ? 32 : c.token_dim) : width;
  c.embed = c.width != c.token_dim || (c.residual && width == 0);
  c.validate();
  return c;
}

Weights<double> load_model(const std::string& path, const ModelSource& src) {
  if (!std::filesystem::exists(path))
    throw InvalidParams("weights", "file '" + path + "' does not exist");
  Weights<double> w;
  try {
    w = read_weights_file(path);
  } catch (const std::exception& e) {
    throw InvalidParams("weights", "cannot load '" + path + "': " + e.what());
  }
  const ModelConfig& c = w.config;
  const ModelSpec& s = src.spec;
  auto mismatch = [&](const char* field, int given, int file) {
    throw InvalidParams(field, std::to_string(given) + " but '" + path + "' has " +
                                   std::to_string(file));
  };
  if (src.given_width && s.width != 0 && s.width != c.width) mismatch("width", s.width, c.width);
  if (src.given_layers && s.layers != c.layers) mismatch("layers", s.layers, c.layers);
  if (src.given_heads && c.kind != LayerKind::Rnn && s.heads != c.heads)
    mismatch("heads", s.heads, c.heads);
  if (src.given_d && s.d + 1 != c.token_dim) mismatch("d", s.d, c.token_dim - 1);
  auto differ = [&](const char* field, const std::string& given, const std::string& file) {
    if (given != file)
      throw InvalidParams(field, given + " but '" + path + "' has " + file);
  };
  if (src.given_block) differ("block", to_string(s.block), to_string(block_kind(c)));
  if (src.given_norm && s.norm != NormChoice::Auto)
    differ("norm", to_string(s.norm), c.layernorm ? to_string(c.norm) : std::string("none"));
  if (src.given_mlp) {
    ModelConfig g;
    g.act = s.act;
    g.gated = s.gated;
    differ("mlp", mlp_name(g), mlp_name(c));
  }
  return w;
}

Weights<double> make_model(const ModelSource& src, std::uint64_t init_seed) {
  if (!src.weights.empty()) return load_model(src.weights, src);
  return init_weights(src.spec.config(), {.seed = init_seed});
}

}  // namespace icl::verify::patch
