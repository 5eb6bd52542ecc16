// Weights files (docs/patch.md §2.5): the tensor-name map, the configuration metadata and the
// dispatch between the text format and safetensors.
#include "verify/patch/weights_io.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
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

// One row per ModelConfig field: key, how to write it, how to read it (false: does not parse),
// and the default for a missing key (nullptr: required). A new field needs one row here.
struct ConfigRow {
  const char* key;
  std::function<std::string(const ModelConfig&)> write;
  std::function<bool(ModelConfig&, const std::string&)> read;
  const char* default_value;
};
ConfigRow int_row(const char* key, int ModelConfig::*f) {
  return {key, [f](const ModelConfig& c) { return std::to_string(c.*f); },
          [f](ModelConfig& c, const std::string& s) { return parse_int(s, c.*f); }, nullptr};
}
ConfigRow bool_row(const char* key, bool ModelConfig::*f, const char* default_value) {
  return {key, [f](const ModelConfig& c) { return bool_text(c.*f); },
          [f](ModelConfig& c, const std::string& s) { return parse_bool(s, c.*f); }, default_value};
}
// An enum field with its to_string / *_from_string pair (the latter throws InvalidParams).
template <class E>
ConfigRow enum_row(const char* key, E ModelConfig::*f, std::string (*text)(E),
                   E (*from)(const std::string&), const char* default_value = nullptr) {
  return {key, [f, text](const ModelConfig& c) { return text(c.*f); },
          [f, from](ModelConfig& c, const std::string& s) {
            try {
              c.*f = from(s);
              return true;
            } catch (const InvalidParams&) {
              return false;
            }
          },
          default_value};
}
const std::vector<ConfigRow>& config_rows() {
  // Every ModelConfig field must be carried by the metadata, or a file would load with the
  // default of a field it does not mention. This binding stops compiling when a field is added:
  // add its row below (optional, with the default that keeps older files meaning what they
  // meant), then its name here.
  [[maybe_unused]] const auto& [token_dim, embed, width, layers, kind, heads, head_dim, causal,
                                mlp_hidden, mlp_depth, act, gated, residual, layernorm, norm,
                                layout, ln_eps] = ModelConfig{};
  static const std::vector<ConfigRow> rows = {
      int_row("icl.token_dim", &ModelConfig::token_dim),
      int_row("icl.width", &ModelConfig::width),
      bool_row("icl.embed", &ModelConfig::embed, "false"),
      int_row("icl.layers", &ModelConfig::layers),
      enum_row<LayerKind>("icl.kind", &ModelConfig::kind, &to_string, &layer_kind_from_string),
      int_row("icl.heads", &ModelConfig::heads),
      int_row("icl.head_dim", &ModelConfig::head_dim),
      bool_row("icl.causal", &ModelConfig::causal, "true"),
      int_row("icl.mlp_hidden", &ModelConfig::mlp_hidden),
      int_row("icl.mlp_depth", &ModelConfig::mlp_depth),
      enum_row<Activation>("icl.act", &ModelConfig::act, &to_string, &activation_from_string),
      bool_row("icl.residual", &ModelConfig::residual, "false"),
      bool_row("icl.layernorm", &ModelConfig::layernorm, "false"),
      // The block kinds of docs/patch.md §16; absent in files written before them, whose
      // meaning the defaults keep (plain MLP, LayerNorm, sequential blocks).
      bool_row("icl.gated", &ModelConfig::gated, "false"),
      enum_row<Norm>("icl.norm", &ModelConfig::norm, &to_string, &norm_from_string, "layernorm"),
      enum_row<BlockLayout>("icl.layout", &ModelConfig::layout, &to_string, &layout_from_string,
                            "sequential"),
      {"icl.ln_eps", [](const ModelConfig& c) { return double_text(c.ln_eps); },
       [](ModelConfig& c, const std::string& s) { return parse_double(s, c.ln_eps); }, "1e-05"},
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
  std::map<std::string, std::string> m{{kFormatKey, kFormat}};
  for (const ConfigRow& r : config_rows()) m[r.key] = r.write(c);
  return m;
}

ModelConfig config_from_metadata(const std::map<std::string, std::string>& md) {
  const auto f = md.find(kFormatKey);
  if (f == md.end() || f->second != kFormat)
    throw st::FormatError("", std::string("__metadata__ \"") + kFormatKey + "\" must be \"" + kFormat +
                                  "\" (the model configuration of docs/patch.md §2.5)");
  ModelConfig c;
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
    c.validate();
  } catch (const InvalidParams& e) {
    throw st::FormatError("", std::string("__metadata__ \"icl.") + e.field() + "\": " + e.what());
  }
  return c;
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
