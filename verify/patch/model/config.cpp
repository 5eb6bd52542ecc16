#include "verify/patch/model/config.hpp"

#include <array>

#include "numerics/error.hpp"

namespace icl::verify::patch {
namespace {

// The values of each named enum, in the order of its names, and the field its parse names.
template <class E, std::size_t N>
struct Names {
  const char* field;
  std::array<E, N> values;
};
constexpr Names<LayerKind, 3> kLayerKinds{"kind", {LayerKind::Softmax, LayerKind::Linear, LayerKind::Rnn}};
constexpr Names<BlockKind, 5> kBlockKinds{
    "block",
    {BlockKind::Plain, BlockKind::Residual, BlockKind::PreLn, BlockKind::PostLn, BlockKind::Parallel}};
constexpr Names<Norm, 4> kNorms{"norm", {Norm::Auto, Norm::None, Norm::LayerNorm, Norm::RmsNorm}};
constexpr Names<Mlp, 5> kMlps{"mlp", {Mlp::Gelu, Mlp::Relu, Mlp::Silu, Mlp::SwiGlu, Mlp::GeGlu}};

template <class E, std::size_t N>
std::string join(const Names<E, N>& n, const char* sep, const char* last) {
  std::string s;
  for (std::size_t i = 0; i < N; ++i)
    s += (i == 0 ? "" : i + 1 == N ? last : sep) + to_string(n.values[i]);
  return s;
}

template <class E, std::size_t N>
E parse(const Names<E, N>& n, const std::string& s) {
  for (E e : n.values)
    if (to_string(e) == s) return e;
  throw InvalidParams(n.field, "must be " + join(n, ", ", " or ") + ", got '" + s + "'");
}

}  // namespace

std::string to_string(LayerKind k) {
  switch (k) {
    case LayerKind::Softmax: return "softmax";
    case LayerKind::Linear: return "linear";
    case LayerKind::Rnn: return "rnn";
  }
  return "?";
}
std::string to_string(BlockKind b) {
  switch (b) {
    case BlockKind::Plain: return "plain";
    case BlockKind::Residual: return "residual";
    case BlockKind::PreLn: return "preln";
    case BlockKind::PostLn: return "postln";
    case BlockKind::Parallel: return "parallel";
  }
  return "?";
}
std::string to_string(Norm n) {
  switch (n) {
    case Norm::Auto: return "auto";
    case Norm::None: return "none";
    case Norm::LayerNorm: return "layernorm";
    case Norm::RmsNorm: return "rmsnorm";
  }
  return "?";
}
std::string to_string(Mlp m) {
  switch (m) {
    case Mlp::Gelu: return "gelu";
    case Mlp::Relu: return "relu";
    case Mlp::Silu: return "silu";
    case Mlp::SwiGlu: return "swiglu";
    case Mlp::GeGlu: return "geglu";
  }
  return "?";
}
std::string to_string(Activation a) {
  switch (a) {
    case Activation::Gelu: return "gelu";
    case Activation::Relu: return "relu";
    case Activation::Silu: return "silu";
  }
  return "?";
}

LayerKind layer_kind_from_string(const std::string& s) { return parse(kLayerKinds, s); }
BlockKind block_kind_from_string(const std::string& s) { return parse(kBlockKinds, s); }
Norm norm_from_string(const std::string& s) { return parse(kNorms, s); }
Mlp mlp_from_string(const std::string& s) { return parse(kMlps, s); }

template <>
std::string choices<LayerKind>() { return join(kLayerKinds, " | ", " | "); }
template <>
std::string choices<BlockKind>() { return join(kBlockKinds, " | ", " | "); }
template <>
std::string choices<Norm>() { return join(kNorms, " | ", " | "); }
template <>
std::string choices<Mlp>() { return join(kMlps, " | ", " | "); }

Activation Block::activation() const {
  switch (mlp) {
    case Mlp::Relu: return Activation::Relu;
    case Mlp::Silu:
    case Mlp::SwiGlu: return Activation::Silu;
    case Mlp::Gelu:
    case Mlp::GeGlu: break;
  }
  return Activation::Gelu;
}

Block Block::resolved() const {
  Block b = *this;
  if (b.norm == Norm::Auto)
    b.norm = kind == BlockKind::Plain || kind == BlockKind::Residual ? Norm::None : Norm::LayerNorm;
  return b;
}

void Block::validate(int mlp_depth) const {
  const Block b = resolved();
  if ((kind == BlockKind::PreLn || kind == BlockKind::PostLn) && !b.normalized())
    throw InvalidParams("norm", to_string(kind) + " blocks need a norm (layernorm or rmsnorm)");
  if (!residual() && b.normalized())
    throw InvalidParams("norm", "plain blocks have no norm (norm none; a norm needs residual "
                                "connections, docs/patch.md §2.3)");
  if (kind == BlockKind::Residual && b.normalized())
    throw InvalidParams("norm", "residual blocks have no norm (norm none; preln for a normalized one)");
  if (gated() && mlp_depth < 2)
    throw InvalidParams("mlp_depth", "a gated MLP needs depth >= 2 (gated hidden layer, then the down matrix)");
}

void ModelConfig::validate() const {
  auto fail = [](const char* field, const std::string& m) { throw InvalidParams(field, m); };
  if (token_dim < 1) fail("token_dim", "must be >= 1");
  if (width < 1) fail("width", "must be >= 1");
  if (!embed && width != token_dim)
    fail("width", "(" + std::to_string(width) + ") must equal token_dim (" +
                      std::to_string(token_dim) + ") without an embedding");
  if (layers < 1) fail("layers", "must be >= 1");
  if (kind != LayerKind::Rnn && heads < 1) fail("heads", "must be >= 1");
  if (kind != LayerKind::Rnn && head_dim < 1) fail("head_dim", "must be >= 1");
  if (mlp_hidden < 1) fail("mlp_hidden", "must be >= 1");
  if (mlp_depth < 1) fail("mlp_depth", "must be >= 1");
  if (block.norm == Norm::Auto) fail("norm", "a model's norm is resolved (Block::resolved), not auto");
  block.validate(mlp_depth);
  if (!(ln_eps > 0)) fail("ln_eps", "must be > 0");
}

std::string label(const Block& b) {
  const Block r = b.resolved();
  std::string s = to_string(r.kind);  // (appending avoids a GCC 12 -Wrestrict false positive)
  if (r.normalized()) s.append(" ").append(to_string(r.norm));
  return s.append(" ").append(to_string(r.mlp));
}

}  // namespace icl::verify::patch
