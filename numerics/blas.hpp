// Dense matrix products through OpenBLAS when the machine has it (Debian's libopenblas0: kernels
// chosen at run time for the CPU, so one portable binary reaches the machine's peak), else
// through Eigen's products, equal up to rounding (docs/simulation.md §13.4).
// Column-major, as Eigen stores its matrices. Each call runs on the calling thread only: the
// callers parallelize over fixed blocks of their own, so that results do not depend on the
// number of threads (the reproducibility rule), and never oversubscribe the cores.
#pragma once
#include <string>

namespace icl::numerics {

enum class Transpose { No, Yes };

// C (m x n) = alpha op(A) op(B) + beta C, op(A) m x k, op(B) k x n; leading dimensions as in
// BLAS (the row count of each stored matrix). Sizes must be >= 0 (checked by the BLAS itself).
void gemm(Transpose ta, Transpose tb, int m, int n, int k, double alpha, const double* A,
          int lda, const double* B, int ldb, double beta, double* C, int ldc);

// Which products run here, e.g. "OpenBLAS 0.3.21 ... , kernels for Cooperlake" or "Eigen's
// products (OpenBLAS not found: ...)" (the benchmarks' record of where a number was measured).
std::string blas_description();

}  // namespace icl::numerics
