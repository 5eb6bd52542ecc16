#include "verify/lowrank/detail/normal_kernel.hpp"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ICL_HAVE_X86_KERNEL 1
#endif

namespace icl::verify::lowrank::detail {

namespace {

// Portable reference: the same arithmetic (row blocks of 4, padded sizes).
void kernel_portable(const double* X, const double* S, int Np, int Dp, const double* G,
                     double* O) {
  std::vector<double> xg(Dp);
  for (int n = 0; n < Np; ++n) {
    const double* x = X + std::size_t(n) * Dp;
    const double* s = S + std::size_t(n) * Dp;
    std::fill(xg.begin(), xg.end(), 0.0);
    for (int i = 0; i < Dp; ++i) {
      const double xi = x[i];
      const double* g = G + std::size_t(i) * Dp;
      for (int j = 0; j < Dp; ++j) xg[j] += xi * g[j];
    }
    double u = 0;
    for (int j = 0; j < Dp; ++j) u += xg[j] * s[j];
    for (int i = 0; i < Dp; ++i) {
      const double c = u * x[i];
      double* o = O + std::size_t(i) * Dp;
      for (int j = 0; j < Dp; ++j) o[j] += c * s[j];
    }
  }
}

#ifdef ICL_HAVE_X86_KERNEL
__attribute__((target("avx2,fma"))) double hsum(__m256d v) {
  const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  const __m128d s = _mm_add_pd(lo, hi);
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

__attribute__((target("avx2,fma"))) void kernel_avx2(const double* X, const double* S, int Np,
                                                     int Dp, const double* G, double* O) {
  for (int n = 0; n < Np; n += 4) {
    const double* x0 = X + std::size_t(n) * Dp;
    const double* x1 = x0 + Dp;
    const double* x2 = x1 + Dp;
    const double* x3 = x2 + Dp;
    const double* s0 = S + std::size_t(n) * Dp;
    const double* s1 = s0 + Dp;
    const double* s2 = s1 + Dp;
    const double* s3 = s2 + Dp;
    // u_r = x_r^T G s_r
    __m256d u0 = _mm256_setzero_pd(), u1 = u0, u2 = u0, u3 = u0;
    for (int jc = 0; jc < Dp; jc += 8) {
      __m256d a00 = _mm256_setzero_pd(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
              a30 = a00, a31 = a00;
      const double* g = G + jc;
      for (int i = 0; i < Dp; ++i, g += Dp) {
        const __m256d g0 = _mm256_loadu_pd(g), g1 = _mm256_loadu_pd(g + 4);
        __m256d b = _mm256_broadcast_sd(x0 + i);
        a00 = _mm256_fmadd_pd(b, g0, a00);
        a01 = _mm256_fmadd_pd(b, g1, a01);
        b = _mm256_broadcast_sd(x1 + i);
        a10 = _mm256_fmadd_pd(b, g0, a10);
        a11 = _mm256_fmadd_pd(b, g1, a11);
        b = _mm256_broadcast_sd(x2 + i);
        a20 = _mm256_fmadd_pd(b, g0, a20);
        a21 = _mm256_fmadd_pd(b, g1, a21);
        b = _mm256_broadcast_sd(x3 + i);
        a30 = _mm256_fmadd_pd(b, g0, a30);
        a31 = _mm256_fmadd_pd(b, g1, a31);
      }
      u0 = _mm256_fmadd_pd(a00, _mm256_loadu_pd(s0 + jc), u0);
      u0 = _mm256_fmadd_pd(a01, _mm256_loadu_pd(s0 + jc + 4), u0);
      u1 = _mm256_fmadd_pd(a10, _mm256_loadu_pd(s1 + jc), u1);
      u1 = _mm256_fmadd_pd(a11, _mm256_loadu_pd(s1 + jc + 4), u1);
      u2 = _mm256_fmadd_pd(a20, _mm256_loadu_pd(s2 + jc), u2);
      u2 = _mm256_fmadd_pd(a21, _mm256_loadu_pd(s2 + jc + 4), u2);
      u3 = _mm256_fmadd_pd(a30, _mm256_loadu_pd(s3 + jc), u3);
      u3 = _mm256_fmadd_pd(a31, _mm256_loadu_pd(s3 + jc + 4), u3);
    }
    const __m256d v0 = _mm256_set1_pd(hsum(u0)), v1 = _mm256_set1_pd(hsum(u1)),
                  v2 = _mm256_set1_pd(hsum(u2)), v3 = _mm256_set1_pd(hsum(u3));
    // O += sum_r x_r (u_r s_r)^T
    for (int jc = 0; jc < Dp; jc += 8) {
      const __m256d c00 = _mm256_mul_pd(v0, _mm256_loadu_pd(s0 + jc)),
                    c01 = _mm256_mul_pd(v0, _mm256_loadu_pd(s0 + jc + 4)),
                    c10 = _mm256_mul_pd(v1, _mm256_loadu_pd(s1 + jc)),
                    c11 = _mm256_mul_pd(v1, _mm256_loadu_pd(s1 + jc + 4)),
                    c20 = _mm256_mul_pd(v2, _mm256_loadu_pd(s2 + jc)),
                    c21 = _mm256_mul_pd(v2, _mm256_loadu_pd(s2 + jc + 4)),
                    c30 = _mm256_mul_pd(v3, _mm256_loadu_pd(s3 + jc)),
                    c31 = _mm256_mul_pd(v3, _mm256_loadu_pd(s3 + jc + 4));
      double* o = O + jc;
      for (int i = 0; i < Dp; ++i, o += Dp) {
        const __m256d b0 = _mm256_broadcast_sd(x0 + i), b1 = _mm256_broadcast_sd(x1 + i),
                      b2 = _mm256_broadcast_sd(x2 + i), b3 = _mm256_broadcast_sd(x3 + i);
        __m256d t0 = _mm256_mul_pd(b0, c00), t1 = _mm256_mul_pd(b0, c01);
        __m256d w0 = _mm256_mul_pd(b2, c20), w1 = _mm256_mul_pd(b2, c21);
        t0 = _mm256_fmadd_pd(b1, c10, t0);
        t1 = _mm256_fmadd_pd(b1, c11, t1);
        w0 = _mm256_fmadd_pd(b3, c30, w0);
        w1 = _mm256_fmadd_pd(b3, c31, w1);
        _mm256_storeu_pd(o, _mm256_add_pd(_mm256_loadu_pd(o), _mm256_add_pd(t0, w0)));
        _mm256_storeu_pd(o + 4, _mm256_add_pd(_mm256_loadu_pd(o + 4), _mm256_add_pd(t1, w1)));
      }
    }
  }
}
#endif

bool detect_avx2() {
#ifdef ICL_HAVE_X86_KERNEL
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace

bool normal_kernel_vectorized() {
  static const bool v = detect_avx2();
  return v;
}

PackedNormalOperator::PackedNormalOperator(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Sm)
    : N_(int(X.rows())), D_(int(X.cols())), Np_((N_ + 3) / 4 * 4), Dp_((D_ + 7) / 8 * 8),
      avx2_(normal_kernel_vectorized()),
      X_(std::size_t(Np_) * Dp_, 0.0), S_(std::size_t(Np_) * Dp_, 0.0),
      G_(std::size_t(Dp_) * Dp_, 0.0), O_(std::size_t(Dp_) * Dp_, 0.0) {
  for (int n = 0; n < N_; ++n)
    for (int i = 0; i < D_; ++i) {
      X_[std::size_t(n) * Dp_ + i] = X(n, i);
      S_[std::size_t(n) * Dp_ + i] = Sm(n, i);
    }
}

void PackedNormalOperator::apply(const Eigen::MatrixXd& G, Eigen::MatrixXd& out) const {
  for (int i = 0; i < D_; ++i)
    for (int j = 0; j < D_; ++j) G_[std::size_t(i) * Dp_ + j] = G(i, j);
  std::fill(O_.begin(), O_.end(), 0.0);
#ifdef ICL_HAVE_X86_KERNEL
  if (avx2_)
    kernel_avx2(X_.data(), S_.data(), Np_, Dp_, G_.data(), O_.data());
  else
#endif
    kernel_portable(X_.data(), S_.data(), Np_, Dp_, G_.data(), O_.data());
  out.resize(D_, D_);
  for (int i = 0; i < D_; ++i)
    for (int j = 0; j < D_; ++j) out(i, j) = O_[std::size_t(i) * Dp_ + j];
}

}  // namespace icl::verify::lowrank::detail
