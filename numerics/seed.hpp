// The one derivation of every seed in the project. A run has one base seed; each random stream
// inside it is derive_seed(base, k) for an index (seed k of a simulation, point k of a sweep)
// or derive_seed(base, "name") for a named stream ("weights", "prompts", "training", ...), and
// streams nest: derive_seed(derive_seed(base, "training"), k). Streams derived this way are
// statistically independent for practical purposes (splitmix64 finalizers), and a result never
// depends on how work is spread over threads, because each piece of work draws only from the
// streams named after it.
#pragma once
#include <cstdint>
#include <string_view>

namespace icl::numerics {

// What a base seed is, for the refusal of a negative or oversized one by the front ends (the
// CLI's --seed, Python's seed=): "the seed is an integer in [0, 18446744073709551615]".
inline constexpr const char* kSeedRange = "the seed is an integer in [0, 18446744073709551615]";

// The splitmix64 finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Indexed stream k of `base`.
constexpr std::uint64_t derive_seed(std::uint64_t base, std::uint64_t k) {
  return splitmix64(splitmix64(base) ^ splitmix64(k + 0x632BE59BD9B4E019ULL));
}

// Named stream of `base`: the name is hashed (64-bit FNV-1a) into a stream index, then mixed as
// above, so that the same name always gives the same stream.
constexpr std::uint64_t derive_seed(std::uint64_t base, std::string_view stream) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (char c : stream) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ULL;
  }
  return derive_seed(base, splitmix64(h));
}

// Indexed stream k of the named stream: derive_seed(derive_seed(base, stream), k).
constexpr std::uint64_t derive_seed(std::uint64_t base, std::string_view stream, std::uint64_t k) {
  return derive_seed(derive_seed(base, stream), k);
}

}  // namespace icl::numerics
