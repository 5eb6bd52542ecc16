// The safetensors file format (a generic tensor container; knows nothing of any model):
//   8 bytes      N, unsigned 64-bit little-endian: the length of the header
//   N bytes      a JSON object (UTF-8), possibly padded with trailing spaces:
//                  "<tensor name>": {"dtype": "F32", "shape": [r, c], "data_offsets": [begin, end]}
//                  "__metadata__": {"<key>": "<string value>", ...}            (optional)
//   the rest     the data section; tensor bytes are [begin, end) relative to its start,
//                row-major (C order), little-endian.
// The data section must be covered exactly: no overlapping tensors, no holes, nothing after the
// last tensor, end - begin = (product of shape) * (size of dtype).
// Read: F64, F32, F16 and BF16. Write: F64, F32 and BF16 (docs/patch.md §2.5 states the
// rounding). Every value is carried as a double in memory.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace icl::numerics::safetensors {

enum class DType { F64, F32, F16, BF16 };
std::string to_string(DType t);       // "F64", "F32", "F16", "BF16"
std::size_t dtype_size(DType t);      // bytes per element

// A malformed file or an unwritable tensor. tensor() names the tensor concerned ("" for the
// header or the file as a whole); what() includes it.
class FormatError : public std::runtime_error {
 public:
  FormatError(std::string tensor, const std::string& message);
  const std::string& tensor() const { return tensor_; }

 private:
  std::string tensor_;
};

struct Tensor {
  DType dtype = DType::F64;
  std::vector<std::int64_t> shape;  // empty: a scalar
  std::vector<double> values;       // row-major; size = product of shape
};

struct File {
  std::map<std::string, std::string> metadata;
  std::vector<std::pair<std::string, Tensor>> tensors;  // read: in data-offset order
};

// Parse the bytes of a file. Throws FormatError for any malformation: header length past the end
// of the file, a header that is not a JSON object, a tensor entry without dtype/shape/offsets, an
// unknown or unsupported dtype, offsets out of range, overlapping, leaving holes or not matching
// the shape, a duplicate name, non-string metadata.
File parse(const std::string& bytes);
File read_file(const std::string& path);  // FormatError("", ...) when it cannot be read

// The bytes of `f`: tensors in the given order, each converted to its dtype (F16 cannot be
// written), the header padded with spaces to a multiple of 8 bytes. Throws FormatError when a
// tensor's values do not match its shape, a name is empty or repeated, or the dtype is F16.
std::string serialize(const File& f);
// serialize, then write atomically (numerics/atomic_file.hpp); std::runtime_error on I/O failure.
void write_file(const std::string& path, const File& f);

// The value `v` becomes after writing it as `t` and reading it back: exact for F64; the nearest
// float for F32; for BF16 the nearest float, then the nearest bfloat16 with ties to even.
double round_trip(DType t, double v);

}  // namespace icl::numerics::safetensors
