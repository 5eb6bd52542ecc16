// Sharding a grid over independent runs (`--shard I/N` of icl sweep and icl phase): shard I of N
// computes the points whose global index k has k % N == I (strided, so that expensive regions
// spread over the shards). Every random quantity of point k is seeded from (base seed, k), so a
// point's result does not depend on N, and `icl merge` joins the shards.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace icl::numerics {

struct Shard {
  long index = 0, count = 1;
  bool owns(std::size_t k) const { return static_cast<long>(k % count) == index; }
  std::vector<std::size_t> indices(std::size_t n) const;  // the owned k < n, increasing
  void validate() const;  // InvalidParams("shard") unless 0 <= index < count
};
// "I/N" -> Shard; "" is 0/1. InvalidParams("shard") for anything else.
Shard shard_from_string(const std::string& text);

}  // namespace icl::numerics
