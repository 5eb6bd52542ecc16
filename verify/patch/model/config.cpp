#include "verify/patch/model/config.hpp"

#include "numerics/error.hpp"
#include "verify/patch/detail/names.hpp"

namespace icl::verify::patch {
namespace {

using B = BlockKind;
constexpr detail::Names<LayerKind, 3> kLayerKinds{
    "kind", {{{LayerKind::Softmax, "softmax"}, {LayerKind::Linear, "linear"}, {LayerKind::Rnn, "rnn"}}}};
constexpr detail::Names<BlockKind, 5> kBlockKinds{
    "block",
    {{{B::Plain, "plain"}, {B::Residual, "residual"}, {B::PreLn, "preln"}, {B::PostLn, "postln"},
      {B::Parallel, "parallel"}}}};
constexpr detail::Names<Norm, 4> kNorms{
    "norm",
    {{{Norm::Auto, "auto"}, {Norm::None, "none"}, {Norm::LayerNorm, "layernorm"},
      {Norm::RmsNorm, "rmsnorm"}}}};
constexpr detail::Names<Mlp, 5> kMlps{
    "mlp",
    {{{Mlp::Gelu, "gelu"}, {Mlp::Relu, "relu"}, {Mlp::Silu, "silu"}, {Mlp::SwiGlu, "swiglu"},
      {Mlp::GeGlu, "geglu"}}}};
constexpr detail::Names<Activation, 3> kActivations{
    "act", {{{Activation::Gelu, "gelu"}, {Activation::Relu, "relu"}, {Activation::Silu, "silu"}}}};

}  // namespace

std::string to_string(LayerKind k) { return kLayerKinds.name(k); }
std::string to_string(BlockKind b) { return kBlockKinds.name(b); }
std::string to_string(Norm n) { return kNorms.name(n); }
std::string to_string(Mlp m) { return kMlps.name(m); }
std::string to_string(Activation a) { return kActivations.name(a); }

LayerKind layer_kind_from_string(const std::string& s) { return kLayerKinds.parse(s); }
BlockKind block_kind_from_string(const std::string& s) { return kBlockKinds.parse(s); }
Norm norm_from_string(const std::string& s) { return kNorms.parse(s); }
Mlp mlp_from_string(const std::string& s) { return kMlps.parse(s); }

template <>
std::string choices<LayerKind>() { return kLayerKinds.join(" | ", " | "); }
template <>
std::string choices<BlockKind>() { return kBlockKinds.join(" | ", " | "); }
template <>
std::string choices<Norm>() { return kNorms.join(" | ", " | "); }
template <>
std::string choices<Mlp>() { return kMlps.join(" | ", " | "); }

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
    throw InvalidParams("mlp_depth",
                        "a gated MLP needs depth >= 2 (gated hidden layer, then the down matrix)");
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
