// Internal to the simulator (not part of the public API): the standard-normal sampler shared by
// the data generation, the measurements and the gradient-descent demo.
#pragma once
#include <cmath>

#include <Eigen/Core>

#include "verify/lowrank/data.hpp"

namespace icl::verify::lowrank::detail {

// Standard normals by the Marsaglia polar method on the raw 64-bit engine output (exact,
// deterministic for a given engine state; several times faster than going through
// std::normal_distribution's generate_canonical). One object per stream keeps the draw order
// explicit; the spare value is discarded when the object goes away.
class Normal {
 public:
  explicit Normal(Rng& r) : rng_(r) {}
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
  Rng& rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace icl::verify::lowrank::detail
