// The safetensors format (numerics/safetensors.hpp). The header is parsed with nlohmann-json;
// every byte offset is checked before it is used, so a malformed file throws FormatError and
// never reads outside the buffer.
#include "numerics/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "numerics/atomic_file.hpp"

namespace icl::numerics::safetensors {
namespace {

using json = nlohmann::json;
constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::uint64_t read_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

void write_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

double half_to_double(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0) {
    v = std::ldexp(double(m), -24);                       // subnormal: m 2^-24
  } else if (e == 31) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(double(m + 1024), e - 25);             // (1 + m/1024) 2^(e-15)
  }
  return (h & 0x8000) ? -v : v;
}

// double -> float32, round to nearest even. A double beyond the float range is converted by hand
// (the C++ conversion of an out-of-range value is undefined): below FLT_MAX + half an ulp
// (2^103) it rounds down to FLT_MAX, from there on (the tie goes to the even neighbour,
// infinity) it becomes infinite.
float to_float(double v) {
  constexpr double max = std::numeric_limits<float>::max();
  if (std::isfinite(v) && std::abs(v) > max) {
    const float r = std::abs(v) < max + std::ldexp(1.0, 103) ? std::numeric_limits<float>::max()
                                                             : std::numeric_limits<float>::infinity();
    return v < 0 ? -r : r;
  }
  return static_cast<float>(v);
}

// float32 -> bfloat16 bits, round to nearest, ties to even (NaN stays a quiet NaN).
std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

DType parse_dtype(const std::string& name, const std::string& tensor) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
    if (to_string(t) == name) return t;
  static const std::set<std::string> other = {"BOOL", "U8",  "I8",  "U16", "I16",     "U32",
                                              "I32",  "U64", "I64", "F8_E5M2", "F8_E4M3"};
  if (other.count(name))
    throw FormatError(tensor, "dtype '" + name + "' is not supported (F64, F32, F16, BF16)");
  throw FormatError(tensor, "unknown dtype '" + name + "'");
}

// A non-negative integer of the header, or FormatError naming the tensor and the field.
std::uint64_t unsigned_of(const json& v, const std::string& tensor, const char* what) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  throw FormatError(tensor, std::string(what) + " must hold non-negative integers, got " + v.dump());
}

struct Entry {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t count = 1, begin = 0, end = 0;
};

Entry parse_entry(const std::string& name, const json& v) {
  if (!v.is_object()) throw FormatError(name, "header entry is not an object");
  Entry e;
  e.name = name;
  const auto dt = v.find("dtype"), sh = v.find("shape"), off = v.find("data_offsets");
  if (dt == v.end() || !dt->is_string()) throw FormatError(name, "missing or non-string \"dtype\"");
  if (sh == v.end() || !sh->is_array()) throw FormatError(name, "missing or non-array \"shape\"");
  if (off == v.end() || !off->is_array() || off->size() != 2)
    throw FormatError(name, "\"data_offsets\" must be [begin, end]");
  e.dtype = parse_dtype(dt->get<std::string>(), name);
  for (const json& d : *sh) {
    const std::uint64_t n = unsigned_of(d, name, "shape");
    if (n > std::uint64_t(std::numeric_limits<std::int64_t>::max()) ||
        (n != 0 && e.count > kMaxU64 / n))
      throw FormatError(name, "shape " + sh->dump() + " is too large");
    e.count *= n;
    e.shape.push_back(static_cast<std::int64_t>(n));
  }
  e.begin = unsigned_of((*off)[0], name, "data_offsets");
  e.end = unsigned_of((*off)[1], name, "data_offsets");
  if (e.begin > e.end)
    throw FormatError(name, "data_offsets [" + num(e.begin) + ", " + num(e.end) + "] decrease");
  const std::uint64_t size = dtype_size(e.dtype);
  if (e.count > kMaxU64 / size || e.end - e.begin != e.count * size)
    throw FormatError(name, "data_offsets [" + num(e.begin) + ", " + num(e.end) + "] span " +
                                num(e.end - e.begin) + " bytes, but shape " + shape_text(e.shape) +
                                " of " + to_string(e.dtype) + " needs " +
                                (e.count > kMaxU64 / size ? std::string("more") : num(e.count * size)));
  return e;
}

std::vector<double> decode(const Entry& e, const unsigned char* p) {
  std::vector<double> v(static_cast<std::size_t>(e.count));
  const std::size_t s = dtype_size(e.dtype);
  for (std::size_t i = 0; i < v.size(); ++i, p += s) {
    switch (e.dtype) {
      case DType::F64: v[i] = std::bit_cast<double>(read_le(p, 8)); break;
      case DType::F32: v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(read_le(p, 4))); break;
      case DType::F16: v[i] = half_to_double(static_cast<std::uint16_t>(read_le(p, 2))); break;
      case DType::BF16: v[i] = bf16_to_float(static_cast<std::uint16_t>(read_le(p, 2))); break;
    }
  }
  return v;
}

}  // namespace

FormatError::FormatError(std::string tensor, const std::string& message)
    : std::runtime_error(tensor.empty() ? message : "tensor '" + tensor + "': " + message),
      tensor_(std::move(tensor)) {}

std::string to_string(DType t) {
  switch (t) {
    case DType::F64: return "F64";
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
  }
  return "?";
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64: return 8;
    case DType::F32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
  }
  return 0;
}

File parse(const std::string& bytes) {
  if (bytes.size() < 8)
    throw FormatError("", "file of " + num(bytes.size()) +
                              " bytes is shorter than the 8-byte header length");
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::uint64_t n = read_le(base, 8), after = bytes.size() - 8;
  if (n > after)
    throw FormatError("", "header length " + num(n) + " runs past the end of the file (" +
                              num(after) + " bytes follow the length)");
  // Names at the top level of the header, in order, to reject duplicates (the JSON object
  // keeps only the last of two equal keys).
  std::set<std::string> seen;
  std::string duplicate;
  const json::parser_callback_t keys = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      const std::string k = parsed.get<std::string>();
      if (!seen.insert(k).second && duplicate.empty()) duplicate = k;
    }
    return true;
  };
  const char* h = bytes.data() + 8;
  const json header = json::parse(h, h + n, keys, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    throw FormatError("", "the " + num(n) + "-byte header is not a JSON object");
  if (!duplicate.empty()) throw FormatError(duplicate, "appears twice in the header");
  File f;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) throw FormatError("", "\"__metadata__\" is not an object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string())
          throw FormatError("", "\"__metadata__\" value of '" + mk + "' is not a string");
        f.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    entries.push_back(parse_entry(key, value));
  }
  const std::uint64_t data_size = after - n;
  for (const Entry& e : entries)
    if (e.end > data_size)
      throw FormatError(e.name, "data_offsets end " + num(e.end) +
                                    " is past the end of the data section (" + num(data_size) + " bytes)");
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t pos = 0;
  std::string previous;
  for (const Entry& e : entries) {
    if (e.begin < pos) throw FormatError(e.name, "data overlaps tensor '" + previous + "'");
    if (e.begin > pos)
      throw FormatError(e.name, "a hole of " + num(e.begin - pos) + " bytes precedes its data");
    pos = e.end;
    previous = e.name;
  }
  if (pos != data_size)
    throw FormatError("", num(data_size - pos) + " bytes of the data section belong to no tensor");
  const unsigned char* data = base + 8 + n;
  for (const Entry& e : entries) {
    Tensor t;
    t.dtype = e.dtype;
    t.shape = e.shape;
    t.values = decode(e, data + e.begin);
    f.tensors.emplace_back(e.name, std::move(t));
  }
  return f;
}

File read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("", "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw FormatError("", "cannot read '" + path + "'");
  return parse(ss.str());
}

std::string serialize(const File& f) {
  json header = json::object();
  if (!f.metadata.empty()) header["__metadata__"] = f.metadata;
  std::string data;
  std::set<std::string> names;
  for (const auto& [name, t] : f.tensors) {
    if (name.empty() || name == "__metadata__") throw FormatError(name, "invalid tensor name");
    if (!names.insert(name).second) throw FormatError(name, "appears twice");
    if (t.dtype == DType::F16) throw FormatError(name, "F16 cannot be written (F64, F32, BF16)");
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape) {
      if (d < 0) throw FormatError(name, "negative dimension in shape " + shape_text(t.shape));
      count *= static_cast<std::uint64_t>(d);
    }
    if (count != t.values.size())
      throw FormatError(name, "shape " + shape_text(t.shape) + " holds " + num(count) +
                                  " values, given " + num(t.values.size()));
    const std::uint64_t begin = data.size();
    for (double v : t.values) {
      switch (t.dtype) {
        case DType::F64: write_le(data, std::bit_cast<std::uint64_t>(v), 8); break;
        case DType::F32: write_le(data, std::bit_cast<std::uint32_t>(to_float(v)), 4); break;
        case DType::BF16: write_le(data, float_to_bf16(to_float(v)), 2); break;
        case DType::F16: break;
      }
    }
    header[name] = {{"dtype", to_string(t.dtype)}, {"shape", t.shape},
                    {"data_offsets", {begin, std::uint64_t(data.size())}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  std::string out;
  out.reserve(8 + text.size() + data.size());
  write_le(out, text.size(), 8);
  out += text;
  out += data;
  return out;
}

void write_file(const std::string& path, const File& f) {
  write_file_atomically(path, serialize(f));
}

double round_trip(DType t, double v) {
  switch (t) {
    case DType::F64: return v;
    case DType::F32: return to_float(v);
    case DType::F16: throw FormatError("", "F16 cannot be written (F64, F32, BF16)");
    case DType::BF16: return bf16_to_float(float_to_bf16(to_float(v)));
  }
  return v;
}

}  // namespace icl::numerics::safetensors
