// Weights files (docs/patch.md §2.5): the stored block, the text format, the tensor-name map,
// the configuration metadata and the dispatch between the text format and safetensors.
#include "verify/patch/model/weights_io.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <istream>
#include <limits>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "numerics/atomic_file.hpp"
#include "numerics/error.hpp"

namespace icl::verify::patch {

namespace st = numerics::safetensors;

namespace {

// THE name map: parameters() name -> safetensors name. Block parameters are "block<l>.<name>"
// and become "layers.<l>.<name in this table>"; '#' stands for a number (the MLP layer) and is
// carried over. A new parameter kind needs one row here (and in docs/patch.md §2.5).
struct NameRow {
  const char* internal;
  const char* external;
  bool vector;
};
constexpr NameRow kTopLevel[] = {
    {"We", "embed.weight", false},   {"bE", "embed.bias", true},
    {"Wr", "readout.weight", false}, {"br", "readout.bias", true},
};
constexpr NameRow kBlock[] = {
    {"Wq", "attn.q_proj.weight", false}, {"bq", "attn.q_proj.bias", true},
    {"Wk", "attn.k_proj.weight", false}, {"bk", "attn.k_proj.bias", true},
    {"Wv", "attn.v_proj.weight", false}, {"bv", "attn.v_proj.bias", true},
    {"Wo", "attn.o_proj.weight", false}, {"bo", "attn.o_proj.bias", true},
    {"Wx", "rnn.weight_ih", false},      {"Wh", "rnn.weight_hh", false},
    {"brnn", "rnn.bias", true},
    {"g1", "ln1.weight", true},          {"be1", "ln1.bias", true},
    {"g2", "ln2.weight", true},          {"be2", "ln2.bias", true},
    {"W#", "mlp.fc#.weight", false},     {"b#", "mlp.fc#.bias", true},
    {"Wg", "mlp.gate_proj.weight", false}, {"bg", "mlp.gate_proj.bias", true},
};

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// `name` matched against `pattern` ('#' = a number): the number ("" if no '#'), or nullopt-like
// false when it does not match.
bool match(const std::string& name, const std::string& pattern, std::string& number) {
  const auto hash = pattern.find('#');
  if (hash == std::string::npos) {
    number.clear();
    return name == pattern;
  }
  const std::string pre = pattern.substr(0, hash), post = pattern.substr(hash + 1);
  if (name.size() <= pre.size() + post.size() || name.compare(0, pre.size(), pre) != 0 ||
      name.compare(name.size() - post.size(), post.size(), post) != 0)
    return false;
  number = name.substr(pre.size(), name.size() - pre.size() - post.size());
  return all_digits(number);
}

std::string substitute(std::string pattern, const std::string& number) {
  const auto hash = pattern.find('#');
  if (hash != std::string::npos) pattern.replace(hash, 1, number);
  return pattern;
}

template <std::size_t N>
bool lookup(const NameRow (&table)[N], const std::string& name, const std::string& prefix,
            TensorName& out) {
  std::string number;
  for (const NameRow& r : table)
    if (match(name, r.internal, number)) {
      out = {prefix + substitute(r.external, number), r.vector};
      return true;
    }
  return false;
}

// ---- configuration metadata ------------------------------------------------------------------

constexpr const char* kFormatKey = "icl.format";
constexpr const char* kFormat = "icl-patch-weights 1";

bool parse_int(const std::string& s, int& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}
bool parse_bool(const std::string& s, bool& v) {
  if (s == "true" || s == "1") return v = true, true;
  if (s == "false" || s == "0") return v = false, true;
  return false;
}
bool parse_double(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
}
std::string bool_text(bool b) { return b ? "true" : "false"; }
// The shortest of 15..17 significant digits that reads back as v (1e-05 rather than
// 1.0000000000000001e-05).
std::string double_text(double v) {
  std::string t;
  for (int digits = 15; digits <= 17; ++digits) {
    std::ostringstream os;
    os.precision(digits);
    os << v;
    t = os.str();
    if (std::strtod(t.c_str(), nullptr) == v) break;
  }
  return t;
}

// ---- the stored block ----------------------------------------------------------------------
// A block as both formats store it: the six fields that predate Block. Missing trailing fields
// (older files) keep their old meaning: no gate, LayerNorm, sequential blocks.
struct StoredBlock {
  std::string act = "gelu";
  bool residual = false, layernorm = false, gated = false;
  std::string norm = "layernorm", layout = "sequential";
};

StoredBlock stored(const Block& b) {
  StoredBlock s;
  s.act = to_string(b.activation());
  s.residual = b.residual();
  s.layernorm = b.normalized();
  s.gated = b.gated();
  s.norm = b.norm == Norm::RmsNorm ? "rmsnorm" : "layernorm";
  s.layout = b.kind == BlockKind::PostLn     ? "postnorm"
             : b.kind == BlockKind::Parallel ? "parallel"
                                             : "sequential";
  return s;
}

// InvalidParams naming the stored field ("act", "layernorm", "norm", "layout") for a value or a
// combination no block has.
Block block_of(const StoredBlock& s) {
  Block b;
  if (s.act != "gelu" && s.act != "relu" && s.act != "silu")
    throw InvalidParams("act", "must be gelu, relu or silu, got '" + s.act + "'");
  if (s.norm != "layernorm" && s.norm != "rmsnorm")
    throw InvalidParams("norm", "must be layernorm or rmsnorm, got '" + s.norm + "'");
  if (s.layernorm && !s.residual)
    throw InvalidParams("layernorm", "requires residual (Pre-LN blocks, docs/patch.md §6)");
  if (s.layout == "sequential") {
    b.kind = !s.residual ? BlockKind::Plain : s.layernorm ? BlockKind::PreLn : BlockKind::Residual;
  } else if (s.layout == "postnorm" || s.layout == "parallel") {
    if (!s.residual) throw InvalidParams("layout", s.layout + " blocks are residual (docs/patch.md §16)");
    if (s.layout == "postnorm" && !s.layernorm)
      throw InvalidParams("layout", "post-norm blocks need a norm (docs/patch.md §16)");
    b.kind = s.layout == "postnorm" ? BlockKind::PostLn : BlockKind::Parallel;
  } else {
    throw InvalidParams("layout", "must be sequential, postnorm or parallel, got '" + s.layout + "'");
  }
  b.norm = !s.layernorm ? Norm::None : s.norm == "rmsnorm" ? Norm::RmsNorm : Norm::LayerNorm;
  if (!s.gated) b.mlp = mlp_from_string(s.act);
  else if (s.act == "relu") throw InvalidParams("act", "a gated MLP is swiglu (silu) or geglu (gelu)");
  else b.mlp = s.act == "silu" ? Mlp::SwiGlu : Mlp::GeGlu;
  return b;
}

// What a file stores: the configuration without its block, and the stored block.
struct Stored {
  ModelConfig config;
  StoredBlock block;
  ModelConfig model_config() const {   // validated; InvalidParams naming the field
    ModelConfig c = config;
    c.block = block_of(block);
    c.validate();
    return c;
  }
};
template <class O>
O& part(Stored& s);
template <>
ModelConfig& part(Stored& s) { return s.config; }
template <>
StoredBlock& part(Stored& s) { return s.block; }
template <class O>
const O& part(const Stored& s) { return part<O>(const_cast<Stored&>(s)); }

// One row per stored field: key, how to write it, how to read it (false: does not parse), and the
// default for a missing key (nullptr: required). A new field needs one row here.
struct ConfigRow {
  const char* key;
  std::function<std::string(const Stored&)> write;
  std::function<bool(Stored&, const std::string&)> read;
  const char* default_value;
};
template <class O>
ConfigRow int_row(const char* key, int O::*f) {
  return {key, [f](const Stored& s) { return std::to_string(part<O>(s).*f); },
          [f](Stored& s, const std::string& v) { return parse_int(v, part<O>(s).*f); }, nullptr};
}
template <class O>
ConfigRow bool_row(const char* key, bool O::*f, const char* default_value) {
  return {key, [f](const Stored& s) { return bool_text(part<O>(s).*f); },
          [f](Stored& s, const std::string& v) { return parse_bool(v, part<O>(s).*f); }, default_value};
}
// A stored-block name (checked by block_of).
ConfigRow name_row(const char* key, std::string StoredBlock::*f, const char* default_value) {
  return {key, [f](const Stored& s) { return s.block.*f; },
          [f](Stored& s, const std::string& v) { return s.block.*f = v, true; }, default_value};
}
const std::vector<ConfigRow>& config_rows() {
  // Every ModelConfig field must be carried by the metadata, or a file would load with the
  // default of a field it does not mention. This binding stops compiling when a field is added:
  // add its row below (optional, with the default that keeps older files meaning what they
  // meant), then its name here.
  [[maybe_unused]] const auto& [token_dim, embed, width, layers, kind, heads, head_dim, causal,
                                mlp_hidden, mlp_depth, block, ln_eps] = ModelConfig{};
  using C = ModelConfig;
  using B = StoredBlock;
  static const std::vector<ConfigRow> rows = {
      int_row("icl.token_dim", &C::token_dim),
      int_row("icl.width", &C::width),
      bool_row("icl.embed", &C::embed, "false"),
      int_row("icl.layers", &C::layers),
      {"icl.kind", [](const Stored& s) { return to_string(s.config.kind); },
       [](Stored& s, const std::string& v) {
         try {
           s.config.kind = layer_kind_from_string(v);
           return true;
         } catch (const InvalidParams&) {
           return false;
         }
       },
       nullptr},
      int_row("icl.heads", &C::heads),
      int_row("icl.head_dim", &C::head_dim),
      bool_row("icl.causal", &C::causal, "true"),
      int_row("icl.mlp_hidden", &C::mlp_hidden),
      int_row("icl.mlp_depth", &C::mlp_depth),
      name_row("icl.act", &B::act, nullptr),
      bool_row("icl.residual", &B::residual, "false"),
      bool_row("icl.layernorm", &B::layernorm, "false"),
      // The block kinds of docs/patch.md §16; absent in files written before them, whose
      // meaning the defaults keep (plain MLP, LayerNorm, sequential blocks).
      bool_row("icl.gated", &B::gated, "false"),
      name_row("icl.norm", &B::norm, "layernorm"),
      name_row("icl.layout", &B::layout, "sequential"),
      {"icl.ln_eps", [](const Stored& s) { return double_text(s.config.ln_eps); },
       [](Stored& s, const std::string& v) { return parse_double(v, s.config.ln_eps); }, "1e-05"},
  };
  return rows;
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

}  // namespace

TensorName safetensors_name(const std::string& internal) {
  TensorName t;
  if (lookup(kTopLevel, internal, "", t)) return t;
  const auto dot = internal.find('.');
  if (internal.rfind("block", 0) == 0 && dot != std::string::npos) {
    const std::string layer = internal.substr(5, dot - 5);
    if (all_digits(layer) && lookup(kBlock, internal.substr(dot + 1), "layers." + layer + ".", t))
      return t;
  }
  throw std::logic_error("no safetensors name for parameter '" + internal +
                         "' (add a row to the name map in verify/patch/weights_io.cpp)");
}

WeightsFormat weights_format(const std::string& path) {
  const std::string ext = ".safetensors";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0
             ? WeightsFormat::Safetensors
             : WeightsFormat::Text;
}

std::map<std::string, std::string> config_metadata(const ModelConfig& c) {
  const Stored s{c, stored(c.block)};
  std::map<std::string, std::string> m{{kFormatKey, kFormat}};
  for (const ConfigRow& r : config_rows()) m[r.key] = r.write(s);
  return m;
}

ModelConfig config_from_metadata(const std::map<std::string, std::string>& md) {
  const auto f = md.find(kFormatKey);
  if (f == md.end() || f->second != kFormat)
    throw st::FormatError("", std::string("__metadata__ \"") + kFormatKey + "\" must be \"" + kFormat +
                                  "\" (the model configuration of docs/patch.md §2.5)");
  Stored c;
  std::set<std::string> known{kFormatKey};
  for (const ConfigRow& r : config_rows()) {
    known.insert(r.key);
    const auto it = md.find(r.key);
    if (it == md.end() && !r.default_value)
      throw st::FormatError("", std::string("__metadata__ lacks the required key \"") + r.key + "\"");
    const std::string value = it == md.end() ? std::string(r.default_value) : it->second;
    if (!r.read(c, value))
      throw st::FormatError("", std::string("__metadata__ \"") + r.key + "\": cannot parse '" +
                                    value + "'");
  }
  for (const auto& [k, v] : md)
    if (k.rfind("icl.", 0) == 0 && !known.count(k))
      throw st::FormatError("", "__metadata__ has the unknown key \"" + k + "\"");
  try {
    return c.model_config();
  } catch (const InvalidParams& e) {
    throw st::FormatError("", std::string("__metadata__ \"icl.") + e.field() + "\": " + e.what());
  }
}

st::File to_safetensors(const Weights<double>& w0, st::DType dtype) {
  Weights<double> w = w0;  // parameters() needs a mutable model
  st::File f;
  f.metadata = config_metadata(w.config);
  for (auto& [internal, m] : parameters(w)) {
    const TensorName tn = safetensors_name(internal);
    st::Tensor t;
    t.dtype = dtype;
    if (tn.vector) {
      if (m->cols() != 1) throw std::logic_error("parameter '" + internal + "' is not a vector");
      t.shape = {m->rows()};
    } else {
      t.shape = {m->rows(), m->cols()};
    }
    t.values.reserve(static_cast<std::size_t>(m->size()));
    for (Eigen::Index i = 0; i < m->rows(); ++i)  // row-major, as PyTorch's [out, in]
      for (Eigen::Index j = 0; j < m->cols(); ++j) t.values.push_back((*m)(i, j));
    f.tensors.emplace_back(tn.name, std::move(t));
  }
  return f;
}

Weights<double> from_safetensors(const st::File& f) {
  Weights<double> w = zeros<double>(config_from_metadata(f.metadata));
  std::map<std::string, const st::Tensor*> given;
  for (const auto& [name, t] : f.tensors) given[name] = &t;
  std::set<std::string> used;
  for (auto& [internal, m] : parameters(w)) {
    const TensorName tn = safetensors_name(internal);
    const std::vector<std::int64_t> want =
        tn.vector ? std::vector<std::int64_t>{m->rows()} : std::vector<std::int64_t>{m->rows(), m->cols()};
    const auto it = given.find(tn.name);
    if (it == given.end())
      throw st::FormatError(tn.name, "missing (expected shape " + shape_text(want) + ")");
    const st::Tensor& t = *it->second;
    if (t.shape != want)
      throw st::FormatError(tn.name, "shape " + shape_text(t.shape) + ", expected " +
                                         shape_text(want) + " for this configuration");
    std::size_t k = 0;
    for (Eigen::Index i = 0; i < m->rows(); ++i)
      for (Eigen::Index j = 0; j < m->cols(); ++j, ++k) {
        if (!std::isfinite(t.values[k]))
          throw st::FormatError(tn.name, "non-finite value at flat index " + std::to_string(k));
        (*m)(i, j) = t.values[k];
      }
    used.insert(tn.name);
  }
  for (const auto& [name, t] : f.tensors)
    if (!used.count(name))
      throw st::FormatError(name, "unknown: not a parameter of a model with this configuration");
  return w;
}

// ---- the text format ---------------------------------------------------------------------

void save_weights(const Weights<double>& w0, std::ostream& os) {
  Weights<double> w = w0;
  const ModelConfig& c = w.config;
  const StoredBlock b = stored(c.block);
  os << "icl-patch-weights 1\n";
  os << std::setprecision(std::numeric_limits<double>::max_digits10);
  os << "config " << c.token_dim << ' ' << int(c.embed) << ' ' << c.width << ' ' << c.layers << ' '
     << to_string(c.kind) << ' ' << c.heads << ' ' << c.head_dim << ' ' << int(c.causal) << ' '
     << c.mlp_hidden << ' ' << c.mlp_depth << ' ' << b.act << ' ' << int(b.residual) << ' '
     << int(b.layernorm) << ' ' << c.ln_eps << ' ' << int(b.gated) << ' ' << b.norm << ' '
     << b.layout << '\n';
  for (auto& [name, m] : parameters(w)) {
    os << name << ' ' << m->rows() << ' ' << m->cols() << '\n';
    for (Eigen::Index i = 0; i < m->size(); ++i) os << m->data()[i] << (i + 1 == m->size() ? '\n' : ' ');
  }
  if (!os) throw std::runtime_error("failed to write weights");
}

Weights<double> load_weights(std::istream& is) {
  std::string magic, tag;
  int version = 0;
  if (!(is >> magic >> version) || magic != "icl-patch-weights" || version != 1)
    throw std::runtime_error("not an icl-patch-weights v1 file");
  Stored s;
  ModelConfig& c = s.config;
  StoredBlock& b = s.block;
  int embed = 0, causal = 0, residual = 0, ln = 0;
  std::string kind;
  if (!(is >> tag) || tag != "config" ||
      !(is >> c.token_dim >> embed >> c.width >> c.layers >> kind >> c.heads >> c.head_dim >>
        causal >> c.mlp_hidden >> c.mlp_depth >> b.act >> residual >> ln >> c.ln_eps))
    throw std::runtime_error("weights file: malformed config line");
  c.embed = embed != 0; c.causal = causal != 0; b.residual = residual != 0; b.layernorm = ln != 0;
  // Optional trailing fields (absent in files written before gated MLPs, RMSNorm and the
  // post-norm/parallel layouts): <gated 0|1> <norm> <layout>.
  std::string rest;
  std::getline(is, rest);
  std::istringstream extra(rest);
  int gated = 0;
  if (extra >> gated && !(extra >> b.norm >> b.layout))
    throw std::runtime_error("weights file: malformed config line (gated, norm, layout)");
  b.gated = gated != 0;
  Weights<double> w;
  try {
    c.kind = layer_kind_from_string(kind);
    w = zeros<double>(s.model_config());
  } catch (const InvalidParams& e) {
    throw std::runtime_error(std::string("weights file: ") + e.what());
  }
  for (auto& [name, m] : parameters(w)) {
    std::string n;
    Eigen::Index r = 0, cc = 0;
    if (!(is >> n >> r >> cc) || n != name || r != m->rows() || cc != m->cols())
      throw std::runtime_error("weights file: expected parameter " + name + " " +
                               std::to_string(m->rows()) + "x" + std::to_string(m->cols()) +
                               ", got '" + n + "'");
    for (Eigen::Index i = 0; i < m->size(); ++i)
      if (!(is >> m->data()[i])) throw std::runtime_error("weights file: truncated at " + name);
  }
  return w;
}

Weights<double> load_weights_file(const std::string& path) {
  std::ifstream is(path);
  if (!is) throw std::runtime_error("cannot open weights file '" + path + "'");
  return load_weights(is);
}

// ---- both formats ----------------------------------------------------------------------------

void save_weights_file(const Weights<double>& w, const std::string& path, st::DType dtype) {
  if (weights_format(path) == WeightsFormat::Safetensors) {
    st::write_file(path, to_safetensors(w, dtype));
    return;
  }
  std::ostringstream os;
  save_weights(w, os);
  numerics::write_file_atomically(path, os.str());
}

Weights<double> read_weights_file(const std::string& path) {
  if (weights_format(path) == WeightsFormat::Safetensors)
    return from_safetensors(st::read_file(path));
  return load_weights_file(path);
}

}  // namespace icl::verify::patch
