#include "numerics/blas.hpp"

#include <dlfcn.h>
#include <sys/resource.h>

#include <cstdlib>
#include <mutex>
#include <optional>

#include <Eigen/Core>

namespace icl::numerics {

namespace {

// The Fortran BLAS interface and OpenBLAS's extensions, looked up at run time.
using Dgemm = void (*)(const char*, const char*, const int*, const int*, const int*,
                       const double*, const double*, const int*, const double*, const int*,
                       const double*, double*, const int*, std::size_t, std::size_t);
using SetThreads = void (*)(int);
using GetThreads = int (*)();
using GetString = char* (*)();

struct Backend {
  Dgemm dgemm = nullptr;  // null: Eigen's products
  std::string description;
};

// OpenBLAS is opened on first use, not linked (docs/simulation.md §13.4):
// - with OPENBLAS_NUM_THREADS=1 while it loads, so that it starts no thread pool of its own
//   (the callers run their fixed blocks on threads of their own; the variable is restored);
//   if the process had it loaded already (numpy), its pool is set to one thread, numpy's too;
// - not under an address-space limit (ulimit -v): each OpenBLAS thread maps a 128 MB buffer and
//   retries forever when the mapping fails, a hang where Eigen's products give a clean
//   out-of-memory error;
// - absent (no libopenblas0 package): Eigen's products, the same results up to rounding.
Backend open_backend() {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    return {nullptr, "Eigen's products (an address-space limit is set: OpenBLAS not used)"};
  const char* previous = std::getenv("OPENBLAS_NUM_THREADS");
  const std::optional<std::string> saved =
      previous ? std::optional<std::string>(previous) : std::nullopt;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (saved) setenv("OPENBLAS_NUM_THREADS", saved->c_str(), 1);
  else unsetenv("OPENBLAS_NUM_THREADS");
  if (!lib) return {nullptr, "Eigen's products (OpenBLAS not found: install libopenblas0)"};
  Backend b;
  b.dgemm = reinterpret_cast<Dgemm>(dlsym(lib, "dgemm_"));
  if (!b.dgemm) return {nullptr, "Eigen's products (libopenblas.so.0 has no dgemm_)"};
  auto set = reinterpret_cast<SetThreads>(dlsym(lib, "openblas_set_num_threads"));
  auto get = reinterpret_cast<GetThreads>(dlsym(lib, "openblas_get_num_threads"));
  if (set && get && get() != 1) set(1);
  auto config = reinterpret_cast<GetString>(dlsym(lib, "openblas_get_config"));
  auto core = reinterpret_cast<GetString>(dlsym(lib, "openblas_get_corename"));
  b.description = config ? config() : "OpenBLAS";
  if (core) b.description += ", kernels for " + std::string(core());
  return b;
}

const Backend& backend() {
  static const Backend b = open_backend();
  return b;
}

using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const Eigen::MatrixXd, 0, Stride>;

void eigen_gemm(Transpose ta, Transpose tb, int m, int n, int k, double alpha, const double* A,
                int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  const ConstMap a(A, ta == Transpose::No ? m : k, ta == Transpose::No ? k : m, Stride(lda));
  const ConstMap b(B, tb == Transpose::No ? k : n, tb == Transpose::No ? n : k, Stride(ldb));
  Eigen::Map<Eigen::MatrixXd, 0, Stride> c(C, m, n, Stride(ldc));
  if (beta == 0.0) c.setZero();
  else if (beta != 1.0) c *= beta;
  auto add = [&](const auto& opa, const auto& opb) { c.noalias() += alpha * opa * opb; };
  if (ta == Transpose::No && tb == Transpose::No) add(a, b);
  else if (ta == Transpose::No) add(a, b.transpose());
  else if (tb == Transpose::No) add(a.transpose(), b);
  else add(a.transpose(), b.transpose());
}

}  // namespace

void gemm(Transpose ta, Transpose tb, int m, int n, int k, double alpha, const double* A,
          int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  if (m == 0 || n == 0) return;
  const Backend& be = backend();
  if (!be.dgemm) return eigen_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  const char a = ta == Transpose::Yes ? 'T' : 'N', b = tb == Transpose::Yes ? 'T' : 'N';
  be.dgemm(&a, &b, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
}

std::string blas_description() { return backend().description; }

}  // namespace icl::numerics
