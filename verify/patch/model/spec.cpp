#include "verify/patch/model/spec.hpp"

#include <filesystem>

#include "numerics/error.hpp"
#include "verify/patch/model/weights_io.hpp"

namespace icl::verify::patch {

void ModelSpec::validate() const {
  const auto at_least = [](const char* field, int v, int lo) {
    if (v < lo)
      throw InvalidParams(field, "must be >= " + std::to_string(lo) + ", got " + std::to_string(v));
  };
  at_least("d", d, 1);
  at_least("layers", layers, 1);
  at_least("heads", heads, 1);
  at_least("head_dim", head_dim, 1);
  at_least("width", width, 0);
  at_least("mlp_hidden", mlp_hidden, 1);
  at_least("mlp_depth", mlp_depth, 1);
  block.validate(mlp_depth);
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
  c.block = block.resolved();
  c.causal = causal;
  // width 0: the token dimension for plain blocks, 32 with an embedding for residual blocks
  const bool residual = c.block.residual();
  c.width = width == 0 ? (residual ? 32 : c.token_dim) : width;
  c.embed = c.width != c.token_dim || (residual && width == 0);
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
  if (src.given_block) differ("block", to_string(s.block.kind), to_string(c.block.kind));
  if (src.given_norm && s.block.norm != Norm::Auto)
    differ("norm", to_string(s.block.norm), to_string(c.block.norm));
  if (src.given_mlp) differ("mlp", to_string(s.block.mlp), to_string(c.block.mlp));
  return w;
}

Weights<double> make_model(const ModelSource& src, std::uint64_t init_seed) {
  if (!src.weights.empty()) return load_model(src.weights, src);
  return init_weights(src.spec.config(), {.seed = init_seed});
}

}  // namespace icl::verify::patch
