// Standard normals from a 64-bit engine: the one sampler of every simulator (the low-rank
// simulator's data, measurements and gradient-descent demo, the softmax check's prompts), so that
// the same seed gives the same draws everywhere.
#pragma once
#include <cmath>
#include <random>

#include <Eigen/Core>

namespace icl::numerics {

// Standard normals by the Marsaglia polar method on the raw 64-bit engine output (exact,
// deterministic for a given engine state; several times faster than going through
// std::normal_distribution's generate_canonical). One object per stream keeps the draw order
// explicit; the spare value is discarded when the object goes away.
class NormalSampler {
 public:
  explicit NormalSampler(std::mt19937_64& r) : rng_(r) {}
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = uniform_pm1();
      v = uniform_pm1();
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }
  void fill(double* p, Eigen::Index n, double scale) {
    for (Eigen::Index i = 0; i < n; ++i) p[i] = scale * (*this)();
  }

 private:
  double uniform_pm1() { return double(rng_() >> 11) * 0x1.0p-52 - 1.0; }  // [-1, 1)
  std::mt19937_64& rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace icl::numerics
