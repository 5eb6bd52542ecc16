// The safetensors container (numerics/safetensors.hpp): round trips, the documented rounding,
// and malformed files that must throw FormatError naming the tensor (never crash).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include "numerics/safetensors.hpp"

namespace st = icl::numerics::safetensors;

namespace {

st::File sample(st::DType dtype) {
  st::File f;
  f.metadata = {{"purpose", "test"}};
  st::Tensor a{dtype, {2, 3}, {1.0, -2.5, 3.25, 1e-3, 0.1, -7.0}};
  st::Tensor b{dtype, {4}, {0.5, 0.25, -0.125, 1024.0}};
  st::Tensor s{dtype, {}, {42.0}};
  st::Tensor z{dtype, {0, 3}, {}};
  f.tensors = {{"a", a}, {"b", b}, {"scalar", s}, {"empty", z}};
  return f;
}

std::uint64_t header_length(const std::string& bytes) {
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return n;
}

// The bytes with the header replaced by `header` (data section kept).
std::string with_header(const std::string& bytes, const std::string& header) {
  const std::uint64_t n = header_length(bytes);
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + bytes.substr(8 + n);
}

std::string header_of(const std::string& bytes) { return bytes.substr(8, header_length(bytes)); }

// The tensor named by the FormatError `bytes` raise; "(none thrown)" if parse succeeds.
std::string error_tensor(const std::string& bytes) {
  try {
    st::parse(bytes);
  } catch (const st::FormatError& e) {
    return e.tensor();
  }
  return "(none thrown)";
}

}  // namespace

TEST_CASE("safetensors: F64 round trip is exact, with shapes, order, metadata and 8-byte alignment") {
  const st::File f = sample(st::DType::F64);
  const std::string bytes = st::serialize(f);
  CHECK((8 + header_length(bytes)) % 8 == 0);
  const st::File g = st::parse(bytes);
  CHECK(g.metadata == f.metadata);
  REQUIRE(g.tensors.size() == f.tensors.size());
  for (std::size_t i = 0; i < f.tensors.size(); ++i) {
    CAPTURE(f.tensors[i].first);
    CHECK(g.tensors[i].first == f.tensors[i].first);  // written in order, read in offset order
    CHECK(g.tensors[i].second.shape == f.tensors[i].second.shape);
    CHECK(g.tensors[i].second.values == f.tensors[i].second.values);
  }
}

TEST_CASE("safetensors: F32 and BF16 store the documented rounding of each value") {
  for (st::DType t : {st::DType::F32, st::DType::BF16}) {
    CAPTURE(st::to_string(t));
    const st::File f = sample(t);
    const st::File g = st::parse(st::serialize(f));
    for (std::size_t i = 0; i < f.tensors.size(); ++i)
      for (std::size_t k = 0; k < f.tensors[i].second.values.size(); ++k)
        CHECK(g.tensors[i].second.values[k] == st::round_trip(t, f.tensors[i].second.values[k]));
  }
  // F32: the nearest float.
  CHECK(st::round_trip(st::DType::F32, 0.1) == static_cast<double>(0.1f));
  // BF16 keeps 8 significant bits (ulp 2^-7 at 1): ties go to the even mantissa.
  CHECK(st::round_trip(st::DType::BF16, 1.0 + std::ldexp(1.0, -8)) == 1.0);
  CHECK(st::round_trip(st::DType::BF16, 1.0 + 3 * std::ldexp(1.0, -8)) == 1.0 + std::ldexp(1.0, -6));
  CHECK(st::round_trip(st::DType::BF16, 1.0 + 1.1 * std::ldexp(1.0, -8)) == 1.0 + std::ldexp(1.0, -7));
  CHECK(st::round_trip(st::DType::BF16, -3.0) == -3.0);
  CHECK(std::isnan(st::round_trip(st::DType::BF16, std::numeric_limits<double>::quiet_NaN())));
  CHECK(std::isinf(st::round_trip(st::DType::BF16, 1e300)));
  // beyond the float range: FLT_MAX up to half an ulp (2^103) above it, infinite from there
  const double fmax = std::numeric_limits<float>::max();
  CHECK(st::round_trip(st::DType::F32, -1e300) == -std::numeric_limits<double>::infinity());
  CHECK(st::round_trip(st::DType::F32, fmax + std::ldexp(1.0, 102)) == fmax);
  CHECK(std::isinf(st::round_trip(st::DType::F32, fmax + std::ldexp(1.0, 103))));
  CHECK_THROWS_AS(st::round_trip(st::DType::F16, 1.0), st::FormatError);
}

TEST_CASE("safetensors: F16 files are read (normal, subnormal, signed values)") {
  // Header and data written by hand: 1.0 = 0x3c00, -2.0 = 0xc000, smallest subnormal 2^-24 = 0x0001.
  const std::string header = R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[0,6]}})";
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  bytes += header;
  for (unsigned v : {0x3c00u, 0xc000u, 0x0001u}) {
    bytes.push_back(static_cast<char>(v & 0xff));
    bytes.push_back(static_cast<char>(v >> 8));
  }
  const st::File f = st::parse(bytes);
  REQUIRE(f.tensors.size() == 1);
  CHECK(f.tensors[0].second.values == std::vector<double>{1.0, -2.0, std::ldexp(1.0, -24)});
  CHECK_THROWS_AS(st::serialize(f), st::FormatError);  // F16 is not written
}

TEST_CASE("safetensors: every truncation and random header corruption throws FormatError, never crashes") {
  const std::string bytes = st::serialize(sample(st::DType::F32));
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    CAPTURE(cut);
    CHECK_THROWS_AS(st::parse(bytes.substr(0, cut)), st::FormatError);
  }
  // Random single-byte changes: either a valid file or a FormatError (the data bytes are
  // arbitrary floats, so only header bytes can make the file invalid).
  std::mt19937_64 rng(5);
  int errors = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string b = bytes;
    const std::size_t pos = rng() % b.size();
    b[pos] = static_cast<char>(rng() & 0xff);
    try {
      st::parse(b);
    } catch (const st::FormatError&) {
      ++errors;
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("safetensors: malformed headers name the tensor concerned") {
  const std::string bytes = st::serialize(sample(st::DType::F32));
  const std::string h = header_of(bytes);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = h;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return with_header(bytes, t);
  };
  // a: [2,3] F32 at [0,24]; b: [4] at [24,40]; scalar at [40,44]; empty [0,3] at [44,44]
  CHECK(error_tensor(replace(R"("dtype":"F32","shape":[2,3])", R"("dtype":"F99","shape":[2,3])")) == "a");
  CHECK(error_tensor(replace(R"("dtype":"F32","shape":[2,3])", R"("dtype":"I64","shape":[2,3])")) == "a");
  CHECK(error_tensor(replace(R"("shape":[2,3])", R"("shape":[3,3])")) == "a");       // size mismatch
  CHECK(error_tensor(replace(R"("shape":[2,3])", R"("shape":[2,-3])")) == "a");      // negative
  CHECK(error_tensor(replace(R"([24,40])", R"([20,36])")) == "b");                    // overlaps a
  CHECK(error_tensor(replace(R"([24,40])", R"([40,24])")) == "b");                    // decreasing
  CHECK(error_tensor(replace(R"([40,44])", R"([4000,4004])")) == "scalar");           // past the end
  CHECK(error_tensor(replace(R"("shape":[2,3])", R"("shape":[4294967296,4294967296,4294967296])")) == "a");
  CHECK(error_tensor(replace(R"("data_offsets":[24,40])", R"("data_offsets":[24])")) == "b");
  CHECK(error_tensor(replace(R"("purpose":"test")", R"("purpose":7)")) == "");
  CHECK(error_tensor(with_header(bytes, "[1,2,3]")) == "");
  CHECK(error_tensor(with_header(bytes, h.substr(0, h.size() - 9))) == "");         // broken JSON
  // a duplicate name: the JSON object would silently keep the last one
  std::string dup = h;
  dup.insert(1, R"("b":{"dtype":"F32","shape":[4],"data_offsets":[24,40]},)");
  CHECK(error_tensor(with_header(bytes, dup)) == "b");
  // trailing bytes that belong to no tensor
  CHECK(error_tensor(bytes + std::string(4, '\0')) == "");
  // header length past the end of the file
  std::string huge = bytes;
  huge[6] = 1;
  CHECK(error_tensor(huge) == "");
}

TEST_CASE("safetensors: serialize rejects a value count that does not match the shape, and repeated names") {
  st::File f = sample(st::DType::F64);
  f.tensors[0].second.values.pop_back();
  try {
    st::serialize(f);
    FAIL("no error");
  } catch (const st::FormatError& e) {
    CHECK(e.tensor() == "a");
  }
  st::File g = sample(st::DType::F64);
  g.tensors.push_back(g.tensors[1]);
  CHECK_THROWS_AS(st::serialize(g), st::FormatError);
}

TEST_CASE("safetensors: write_file is atomic (no temporary left) and a missing folder is an error") {
  const auto dir = std::filesystem::temp_directory_path() / "icl_numerics_safetensors";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.safetensors").string();
  st::write_file(path, sample(st::DType::BF16));
  CHECK(st::read_file(path).tensors.size() == 4);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 1);
  CHECK_THROWS_AS(st::write_file((dir / "missing" / "t.safetensors").string(), sample(st::DType::F64)),
                  std::runtime_error);
  CHECK_THROWS_AS(st::read_file((dir / "none.safetensors").string()), st::FormatError);
  std::filesystem::remove_all(dir);
}
