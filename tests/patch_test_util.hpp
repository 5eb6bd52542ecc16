// Shared by the patch tests: seeded random matrices.
#pragma once
#include <cstdint>
#include <random>

#include "verify/patch/model.hpp"

namespace icl_test {

inline icl::verify::patch::Mat<double> random_mat(int r, int c, std::uint64_t seed, double s = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, s);
  icl::verify::patch::Mat<double> m(r, c);
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) m(i, j) = nd(rng);
  return m;
}

}  // namespace icl_test
