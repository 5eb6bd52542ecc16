// A fixed-length array of MPFR numbers at one precision, the extended precision of the
// multi-step theory (the test-time iteration's series, theory/cot.cpp; the depth polynomial's
// reference coefficients, theory/depth.cpp). MPFR's C interface: inner loops are fused
// operations on preallocated numbers, no temporaries, and it compiles in a fraction of the time
// of a templated multiprecision type. Internal to icl_theory (mpfr.h is a private dependency).
#pragma once
#include <mpfr.h>

#include <cstddef>
#include <vector>

namespace icl::theory::detail {

// Every MPFR operation of the theory rounds to nearest.
inline constexpr mpfr_rnd_t kMpRound = MPFR_RNDN;

class MpArray {
 public:
  MpArray(std::size_t n, mpfr_prec_t bits) : v_(n) {
    for (auto& x : v_) mpfr_init2(&x, bits), mpfr_set_zero(&x, 1);
  }
  ~MpArray() {
    for (auto& x : v_) mpfr_clear(&x);
  }
  MpArray(const MpArray&) = delete;
  MpArray& operator=(const MpArray&) = delete;
  mpfr_ptr operator[](std::size_t i) { return &v_[i]; }
  std::size_t size() const { return v_.size(); }

 private:
  std::vector<__mpfr_struct> v_;
};

}  // namespace icl::theory::detail
