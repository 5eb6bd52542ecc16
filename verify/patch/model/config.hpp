// The one vocabulary of the patch model (docs/patch.md §2): the contextual layer, the block
// (kind + norm + MLP, described once by `Block`) and the shape of a model (`ModelConfig`). The
// names are those of the command line (`--kind --block --norm --mlp`), of Python (`kind=`,
// `block=`, `norm=`, `mlp=`) and of the JSON "config" object.
#pragma once
#include <string>

namespace icl::verify::patch {

// The contextual layer A (docs/patch.md §2.1): softmax | linear attention, or an Elman rnn.
enum class LayerKind { Softmax, Linear, Rnn };

// The block kinds (docs/patch.md §2.3, §16), with N the block's norm:
//   plain      Y = M(A(Z))                                  (no skips)
//   residual   H = Z + A(Z),      Y = H + M(H)               (docs/patch.md §5)
//   preln      H = Z + A(N1(Z)),  Y = H + M(N2(H))           (pre-norm, §6)
//   postln     H = N1(Z + A(Z)),  Y = N2(H + M(H))           (post-norm, §16.3)
//   parallel   U = N1(Z) (or Z),  Y = Z + A(U) + M(U)        (§16.4)
enum class BlockKind { Plain, Residual, PreLn, PostLn, Parallel };

// The norm of a block: LayerNorm g * (z - mean) / sqrt(var + eps) + beta, or RMSNorm
// g * z / sqrt(mean(z^2) + eps). `Auto` is a request, not a norm: Block::resolved() turns it
// into layernorm for preln, postln and parallel blocks and none for plain and residual ones.
enum class Norm { Auto, None, LayerNorm, RmsNorm };

// The MLP: gelu | relu | silu (one activation f between the dense layers), or gated
// (docs/patch.md §16.2): the first hidden layer is f(W_g u + b_g) * (W_1 u + b_1), with f = SiLU
// for swiglu and GELU for geglu.
enum class Mlp { Gelu, Relu, Silu, SwiGlu, GeGlu };

// The elementwise function f of an MLP: GELU x Phi(x) (exact erf form), ReLU, SiLU x sigma(x).
enum class Activation { Gelu, Relu, Silu };

std::string to_string(LayerKind k);   // softmax | linear | rnn
std::string to_string(BlockKind b);   // plain | residual | preln | postln | parallel
std::string to_string(Norm n);        // auto | none | layernorm | rmsnorm
std::string to_string(Mlp m);         // gelu | relu | silu | swiglu | geglu
std::string to_string(Activation a);  // gelu | relu | silu
// The inverse of to_string; InvalidParams("kind" | "block" | "norm" | "mlp", ...) for another name.
LayerKind layer_kind_from_string(const std::string& s);
BlockKind block_kind_from_string(const std::string& s);
Norm norm_from_string(const std::string& s);
Mlp mlp_from_string(const std::string& s);
// Every name of E, "a | b | c" (help texts). E: LayerKind, BlockKind, Norm, Mlp.
template <class E>
std::string choices();

// A block, described once: its kind, its norm and its MLP.
struct Block {
  BlockKind kind = BlockKind::Plain;
  Norm norm = Norm::Auto;
  Mlp mlp = Mlp::Gelu;

  bool residual() const { return kind != BlockKind::Plain; }
  bool normalized() const { return norm == Norm::LayerNorm || norm == Norm::RmsNorm; }
  bool gated() const { return mlp == Mlp::SwiGlu || mlp == Mlp::GeGlu; }
  Activation activation() const;  // f of the MLP (swiglu: silu, geglu: gelu)
  Block resolved() const;         // Auto replaced by the kind's norm (above)
  // The rules of a block: after resolving Auto, preln and postln blocks need a norm and plain
  // and residual blocks have none (InvalidParams("norm", ...)); a gated MLP needs a down matrix,
  // mlp_depth >= 2 (InvalidParams("mlp_depth", ...)).
  void validate(int mlp_depth) const;
  bool operator==(const Block&) const = default;
};

// The shape of a model: an optional linear embedding token_dim -> width, `layers` blocks, an
// optional readout width -> token_dim (docs/patch.md §2.4). validate() throws
// icl::InvalidParams naming the field. Front ends describe a model by a ModelSpec
// (model/spec.hpp), whose config() applies the width rule.
struct ModelConfig {
  int token_dim = 3;       // d + 1 for in-context regression tokens (x, y), >= 1
  bool embed = false;      // linear embedding token_dim -> width and readout width -> token_dim
  int width = 3;           // model width, >= 1 (must equal token_dim without an embedding)
  int layers = 1;          // number of blocks L, >= 1
  LayerKind kind = LayerKind::Softmax;
  int heads = 8;           // attention heads, >= 1 (unused by the RNN)
  int head_dim = 4;        // size of each head, >= 1 (unused by the RNN)
  bool causal = true;      // causal mask (the query is last, so its output is the same either way)
  int mlp_hidden = 128;    // hidden width of the MLP, >= 1
  int mlp_depth = 2;       // dense layers of the MLP, >= 1 (gated: >= 2)
  Block block{BlockKind::Plain, Norm::None, Mlp::Gelu};  // resolved: no Auto norm
  double ln_eps = 1e-5;    // eps of the norms, > 0
  void validate() const;
  bool operator==(const ModelConfig&) const = default;
};

// "plain gelu", "preln rmsnorm swiglu": the block kind, its norm when it has one, the MLP.
std::string label(const Block& b);

}  // namespace icl::verify::patch
