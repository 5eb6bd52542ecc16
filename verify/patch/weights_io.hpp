// Weights files of verify/patch models (docs/patch.md §2.5): the icl-patch-weights text format
// (model.hpp) or safetensors (numerics/safetensors.hpp), chosen by the file extension, with the
// PyTorch-style tensor-name map and the model configuration carried in "__metadata__".
#pragma once
#include <map>
#include <string>

#include "numerics/safetensors.hpp"
#include "verify/patch/model.hpp"

namespace icl::verify::patch {

// The safetensors name of the parameter that parameters() calls `internal` (e.g. "block0.Wq" ->
// "layers.0.attn.q_proj.weight"); `vector` marks 1-D tensors (biases, norm gains and shifts),
// stored as [n] where the model holds an n x 1 matrix. Throws std::logic_error for a parameter
// the map does not know: every parameter kind has one row in the table of weights_io.cpp.
struct TensorName {
  std::string name;
  bool vector = false;
};
TensorName safetensors_name(const std::string& internal);

enum class WeightsFormat { Text, Safetensors };
// Safetensors when `path` ends in ".safetensors", the text format otherwise.
WeightsFormat weights_format(const std::string& path);

// The model configuration as "__metadata__" strings ("icl.format", "icl.token_dim", ...) and
// back. config_from_metadata throws safetensors::FormatError naming the key for a missing
// required key, a value that does not parse, an unknown "icl." key, or a configuration that
// ModelConfig::validate() rejects. Keys not starting with "icl." are ignored.
std::map<std::string, std::string> config_metadata(const ModelConfig& c);
ModelConfig config_from_metadata(const std::map<std::string, std::string>& metadata);

// Every parameter under its safetensors name, converted to `dtype` (F64, F32 or BF16).
numerics::safetensors::File to_safetensors(const Weights<double>& w,
                                           numerics::safetensors::DType dtype);
// The model of a parsed file. Throws safetensors::FormatError naming the tensor for a missing
// tensor, an unknown tensor, a shape that does not match the configuration, or a non-finite value.
Weights<double> from_safetensors(const numerics::safetensors::File& f);

// Write `w` to `path` atomically in the format of its extension (`dtype` only for safetensors).
void save_weights_file(const Weights<double>& w, const std::string& path,
                       numerics::safetensors::DType dtype = numerics::safetensors::DType::F64);
// Read `path` in the format of its extension; std::runtime_error (FormatError for safetensors)
// with a message naming what is wrong.
Weights<double> read_weights_file(const std::string& path);

}  // namespace icl::verify::patch
