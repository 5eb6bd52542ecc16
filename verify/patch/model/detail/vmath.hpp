// exp and erf over arrays of doubles, vectorized with runtime CPU dispatch (docs/patch.md §2.6):
// the patch model's softmax, GELU and SiLU (internal to verify/patch/model).
//
// The same value on every CPU: each element goes through the same sequence of IEEE operations
// (no fused multiply-add, no table) whichever width runs it (AVX-512F 8 lanes, AVX2 4 lanes,
// SSE2 2 lanes, one lane for the tail), so results do not depend on the machine, on the
// position of an element in the array or on the thread count. Accuracy: within 2 ulp of
// glibc's exp and erf (tests/patch_vmath.cpp measures it).
#pragma once
#include <cstddef>

namespace icl::verify::patch::detail {

// x[i] = exp(x[i]) for i < n.
void exp_inplace(double* x, std::size_t n);
// x[i] = erf(x[i]) for i < n.
void erf_inplace(double* x, std::size_t n);

// The widest level this CPU runs (8: AVX-512F, 4: AVX2, 2: SSE2 or another CPU, 1: one lane).
int vmath_width();
// The same at a given width no larger than vmath_width() (tests: every width gives the same bits).
void exp_inplace_width(int width, double* x, std::size_t n);
void erf_inplace_width(int width, double* x, std::size_t n);

}  // namespace icl::verify::patch::detail
