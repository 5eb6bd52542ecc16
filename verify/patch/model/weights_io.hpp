// Weights files of verify/patch models (docs/patch.md §2.5): the icl-patch-weights text format
// or safetensors (numerics/safetensors.hpp), chosen by the file extension, with the
// PyTorch-style tensor-name map and the model configuration carried in "__metadata__".
//
// Both formats store a block by the six fields that predate `Block` (act, residual, layernorm,
// gated, norm, layout); weights_io.cpp translates them both ways in one place, so files of every
// version keep their meaning.
#pragma once
#include <iosfwd>
#include <map>
#include <string>

#include "numerics/safetensors.hpp"
#include "verify/patch/model/weights.hpp"

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

// The text format, one item per line:
//   icl-patch-weights 1
//   config <token_dim> <embed 0|1> <width> <layers> <kind> <heads> <head_dim> <causal 0|1>
//          <mlp_hidden> <mlp_depth> <act> <residual 0|1> <layernorm 0|1> <ln_eps>
//          <gated 0|1> <norm> <layout>       (files written before these three were added omit
//                                             them: defaults 0 layernorm sequential)
//   then for every parameter in parameters() order:  <name> <rows> <cols>
//   followed by rows*cols numbers (column-major, %.17g), whitespace separated.
// load_weights throws std::runtime_error with a clear message on any mismatch.
// (Loading with the command-line consistency checks: load_model in model/spec.hpp.)
void save_weights(const Weights<double>& w, std::ostream& os);
Weights<double> load_weights(std::istream& is);
Weights<double> load_weights_file(const std::string& path);

// Write `w` to `path` atomically in the format of its extension (`dtype` only for safetensors).
void save_weights_file(const Weights<double>& w, const std::string& path,
                       numerics::safetensors::DType dtype = numerics::safetensors::DType::F64);
// Read `path` in the format of its extension; std::runtime_error (FormatError for safetensors)
// with a message naming what is wrong.
Weights<double> read_weights_file(const std::string& path);

}  // namespace icl::verify::patch
