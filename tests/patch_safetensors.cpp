// Model weights as safetensors (verify/patch/model/weights_io.hpp, docs/patch.md §2.5): the name map
// covers every parameter, round trips, the configuration metadata, and bad files naming the
// tensor or key.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

#include "numerics/error.hpp"
#include "verify/patch/model.hpp"

using namespace icl::verify::patch;
namespace st = icl::numerics::safetensors;

namespace {

std::vector<ModelConfig> configs() {
  std::vector<ModelConfig> out;
  for (LayerKind kind : {LayerKind::Softmax, LayerKind::Linear, LayerKind::Rnn})
    for (int variant = 0; variant < 3; ++variant)  // plain, residual, Pre-LN
      for (int depth : {1, 3}) {
        ModelConfig c;
        c.kind = kind;
        c.block.kind = variant == 0 ? BlockKind::Plain : variant == 1 ? BlockKind::Residual : BlockKind::PreLn;
        c.block.norm = variant == 2 ? Norm::LayerNorm : Norm::None;
        c.embed = variant > 0;
        c.width = c.embed ? 6 : 3;
        c.layers = variant == 0 ? 1 : 2;
        c.heads = 2;
        c.head_dim = 3;
        c.mlp_hidden = 5;
        c.mlp_depth = depth;
        c.block.mlp = depth == 1 ? Mlp::Relu : Mlp::Gelu;
        out.push_back(c);
      }
  return out;
}

std::string error_tensor(const st::File& f) {
  try {
    from_safetensors(f);
  } catch (const st::FormatError& e) {
    return e.tensor().empty() ? std::string("(file) ") + e.what() : e.tensor();
  }
  return "(none thrown)";
}

st::Tensor* find(st::File& f, const std::string& name) {
  for (auto& [n, t] : f.tensors)
    if (n == name) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("safetensors name map: every parameter of every model kind has a distinct PyTorch-style name") {
  for (const ModelConfig& c : configs()) {
    Weights<double> w = zeros<double>(c);
    std::set<std::string> names;
    for (auto& [internal, m] : parameters(w)) {
      const TensorName t = safetensors_name(internal);
      CAPTURE(internal);
      CHECK(names.insert(t.name).second);
      CHECK(t.vector == (m->cols() == 1 && internal.find(".W") == std::string::npos &&
                         internal != "We" && internal != "Wr"));
    }
  }
  CHECK(safetensors_name("block0.Wq").name == "layers.0.attn.q_proj.weight");
  CHECK(safetensors_name("block12.b3").name == "layers.12.mlp.fc3.bias");
  CHECK(safetensors_name("block1.g2").name == "layers.1.ln2.weight");
  CHECK(safetensors_name("We").name == "embed.weight");
  CHECK_THROWS_AS(safetensors_name("block0.Wgate"), std::logic_error);
  CHECK_THROWS_AS(safetensors_name("blockX.Wq"), std::logic_error);
}

TEST_CASE("safetensors weights: F64 round trip is exact for every model kind; F32 and BF16 round each value") {
  for (const ModelConfig& c : configs()) {
    const Weights<double> w = init_weights(c, {.seed = 9});
    for (st::DType t : {st::DType::F64, st::DType::F32, st::DType::BF16}) {
      CAPTURE(st::to_string(t));
      const Weights<double> back = from_safetensors(st::parse(st::serialize(to_safetensors(w, t))));
      CHECK(back.config == c);
      Weights<double> a = w, b = back;
      const auto pa = parameters(a), pb = parameters(b);
      REQUIRE(pa.size() == pb.size());
      for (std::size_t i = 0; i < pa.size(); ++i)
        for (Eigen::Index k = 0; k < pa[i].second->size(); ++k)
          CHECK(pb[i].second->data()[k] == st::round_trip(t, pa[i].second->data()[k]));
    }
  }
}

TEST_CASE("safetensors weights: missing, unknown, misshapen and non-finite tensors are named") {
  ModelConfig c;
  c.heads = 2;
  c.mlp_hidden = 8;
  const st::File good = to_safetensors(init_weights(c, {.seed = 2}), st::DType::F32);
  CHECK(error_tensor(good) == "(none thrown)");
  st::File f = good;
  f.tensors.erase(f.tensors.begin() + 3);
  CHECK(error_tensor(f) == good.tensors[3].first);
  f = good;
  f.tensors.push_back({"layers.0.mlp.gate_proj.weight", st::Tensor{st::DType::F32, {1}, {0.0}}});
  CHECK(error_tensor(f) == "layers.0.mlp.gate_proj.weight");
  f = good;
  find(f, "layers.0.attn.q_proj.weight")->shape = {3, 8};  // transposed
  CHECK(error_tensor(f) == "layers.0.attn.q_proj.weight");
  f = good;
  find(f, "layers.0.attn.q_proj.bias")->shape = {8, 1};    // a bias is 1-D
  CHECK(error_tensor(f) == "layers.0.attn.q_proj.bias");
  f = good;
  find(f, "layers.0.mlp.fc1.weight")->values[5] = std::numeric_limits<double>::infinity();
  CHECK(error_tensor(f) == "layers.0.mlp.fc1.weight");
}

TEST_CASE("safetensors weights: the configuration metadata is required, parsed and validated") {
  ModelConfig c;
  c.kind = LayerKind::Linear;
  c.causal = false;
  c.ln_eps = 1e-6;
  const auto md = config_metadata(c);
  CHECK(md.at("icl.kind") == "linear");
  CHECK(md.at("icl.ln_eps") == "1e-06");
  CHECK(config_from_metadata(md) == c);
  auto edited = [&](const std::string& key, const char* value) {
    auto m = md;
    if (value) m[key] = value; else m.erase(key);
    try {
      config_from_metadata(m);
    } catch (const st::FormatError& e) {
      return std::string(e.what());
    }
    return std::string("(none thrown)");
  };
  CHECK(edited("icl.format", nullptr).find("icl.format") != std::string::npos);
  CHECK(edited("icl.heads", nullptr).find("icl.heads") != std::string::npos);
  CHECK(edited("icl.heads", "eight").find("icl.heads") != std::string::npos);
  CHECK(edited("icl.kind", "lstm").find("icl.kind") != std::string::npos);
  CHECK(edited("icl.layernorm", "true").find("icl.layernorm") != std::string::npos);  // LN needs residual
  CHECK(edited("icl.dropout", "0.1").find("icl.dropout") != std::string::npos);      // unknown key
  CHECK(edited("icl.norm", "batchnorm").find("icl.norm") != std::string::npos);      // bad value
  CHECK(edited("icl.norm", nullptr) == "(none thrown)");                              // default: layernorm
  CHECK(edited("format", "pt") == "(none thrown)");                                   // not ours: ignored
  CHECK(edited("icl.causal", nullptr) == "(none thrown)");                             // default: true
  CHECK(config_from_metadata([&] { auto m = md; m.erase("icl.causal"); return m; }()).causal);
}

TEST_CASE("load_model picks the format by extension: .safetensors and text give the same model") {
  const auto dir = std::filesystem::temp_directory_path() / "icl_patch_safetensors";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ModelSpec spec;
  spec.heads = 2;
  spec.mlp_hidden = 8;
  const Weights<double> w = init_weights(spec.config(), {.seed = 4});
  const std::string text = (dir / "w.txt").string(), bin = (dir / "w.safetensors").string();
  CHECK(weights_format(bin) == WeightsFormat::Safetensors);
  CHECK(weights_format(text) == WeightsFormat::Text);
  save_weights_file(w, text);
  save_weights_file(w, bin);
  ModelSource src;
  src.spec = spec;
  const Weights<double> a = load_model(text, src), b = load_model(bin, src);
  Weights<double> aa = a, bb = b;
  const auto pa = parameters(aa), pb = parameters(bb);
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(*pa[i].second == *pb[i].second);
  // a truncated file is InvalidParams("weights") naming the tensor
  const std::string cut = (dir / "cut.safetensors").string();
  {
    std::ifstream in(bin, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 2);
  }
  try {
    load_model(cut, src);
    FAIL("no error");
  } catch (const icl::InvalidParams& e) {
    CHECK(e.field() == "weights");
    CHECK(std::string(e.what()).find("layers.0.mlp.fc2.bias") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
