#include "verify/lowrank/detail/normal_kernel.hpp"

#include <algorithm>
#include <thread>

#include "numerics/blas.hpp"

namespace icl::verify::lowrank::detail {

namespace {

using numerics::Transpose;
constexpr int kLanes = BlockedNormalOperator::kLanes;
constexpr int kBlockRows = BlockedNormalOperator::kBlockRows;

// Lane l holds rows [lane_begin(l), lane_begin(l + 1)): N split as evenly as it goes.
long lane_begin(long N, int lane) { return N * lane / kLanes; }

// partial_l = sum over the blocks [r0, r0 + m) of lane l, in row order, of
// block(r0, m, work, partial_l) (which accumulates into partial_l); then out = sum_l partial_l
// in lane order. Lanes run on `threads` threads, thread t taking lanes t, t + threads, ...
template <class Block>
Eigen::MatrixXd sum_over_lanes(long N, int D, int threads, double* work, double* partials,
                               const Block& block) {
  const std::size_t DD = std::size_t(D) * D, W = std::size_t(kBlockRows) * D;
  auto lanes_of = [&](int t) {
    for (int lane = t; lane < kLanes; lane += threads) {
      double* partial = partials + lane * DD;
      std::fill(partial, partial + DD, 0.0);
      const long end = lane_begin(N, lane + 1);
      for (long r0 = lane_begin(N, lane); r0 < end; r0 += kBlockRows)
        block(r0, int(std::min<long>(kBlockRows, end - r0)), work ? work + t * W : nullptr,
              partial);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(lanes_of, t);
  lanes_of(0);
  for (auto& th : pool) th.join();
  Eigen::MatrixXd out = Eigen::Map<const Eigen::MatrixXd>(partials, D, D);
  for (int lane = 1; lane < kLanes; ++lane)
    out += Eigen::Map<const Eigen::MatrixXd>(partials + lane * DD, D, D);
  return out;
}

// The two passes between the products, compiled for AVX-512, AVX2 and baseline x86-64 and
// chosen once at load time for the CPU (GCC's target_clones), so one machine always runs the
// same code; across kinds of CPU the results differ by rounding (fused multiply-adds), as
// OpenBLAS's kernels do (docs/simulation.md §13.4).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ICL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ICL_CLONES
#endif

// u_i = sum_j work(i, j) Sb(i, j): work m x D (leading dimension m), Sb the block's rows of Sm
// (leading dimension N).
ICL_CLONES void row_dots(const double* work, const double* Sb, long N, int m, int D, double* u) {
  std::fill(u, u + m, 0.0);
  for (int j = 0; j < D; ++j) {
    const double* wj = work + std::size_t(j) * m;
    const double* sj = Sb + std::size_t(j) * N;
    for (int i = 0; i < m; ++i) u[i] += wj[i] * sj[i];
  }
}

// work (m x D, leading dimension m) <- diag(u) Sb.
ICL_CLONES void scale_rows(const double* u, const double* Sb, long N, int m, int D,
                           double* work) {
  for (int j = 0; j < D; ++j) {
    double* wj = work + std::size_t(j) * m;
    const double* sj = Sb + std::size_t(j) * N;
    for (int i = 0; i < m; ++i) wj[i] = u[i] * sj[i];
  }
}

}  // namespace

BlockedNormalOperator::BlockedNormalOperator(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Sm,
                                             int threads)
    : X_(X), S_(Sm), threads_(std::clamp(threads, 1, kLanes)) {
  const std::size_t D = std::size_t(X.cols());
  blocks_.resize(std::size_t(threads_) * kBlockRows * D);
  partials_.resize(std::size_t(kLanes) * D * D);
}

double BlockedNormalOperator::work_bytes(double D, int threads) {
  return (double(std::clamp(threads, 1, kLanes)) * kBlockRows * D + kLanes * D * D) *
         sizeof(double);
}

void BlockedNormalOperator::apply(const Eigen::MatrixXd& G, Eigen::MatrixXd& out) const {
  const long N = X_.rows();
  const int D = int(X_.cols());
  // Per block: work = X_b G; u = rowdot(work, S_b); work = diag(u) S_b; partial += X_b^T work.
  out = sum_over_lanes(N, D, threads_, blocks_.data(), partials_.data(),
                       [&](long r0, int m, double* work, double* partial) {
    const double* Xb = X_.data() + r0;
    const double* Sb = S_.data() + r0;
    numerics::gemm(Transpose::No, Transpose::No, m, D, D, 1.0, Xb, int(N), G.data(), D, 0.0,
                   work, m);
    thread_local std::vector<double> u;
    u.resize(std::size_t(m));
    row_dots(work, Sb, N, m, D, u.data());
    scale_rows(u.data(), Sb, N, m, D, work);
    numerics::gemm(Transpose::Yes, Transpose::No, D, D, m, 1.0, Xb, int(N), work, m, 1.0,
                   partial, D);
  });
}

Eigen::MatrixXd BlockedNormalOperator::weighted_cross(const Eigen::VectorXd& w) const {
  const long N = X_.rows();
  const int D = int(X_.cols());
  return sum_over_lanes(N, D, threads_, blocks_.data(), partials_.data(),
                        [&](long r0, int m, double* work, double* partial) {
    scale_rows(w.data() + r0, S_.data() + r0, N, m, D, work);
    numerics::gemm(Transpose::Yes, Transpose::No, D, D, m, 1.0, X_.data() + r0, int(N), work,
                   m, 1.0, partial, D);
  });
}

Eigen::MatrixXd blocked_gram(const Eigen::MatrixXd& A, int threads) {
  const long N = A.rows();
  const int D = int(A.cols());
  threads = std::clamp(threads, 1, kLanes);
  std::vector<double> partials(std::size_t(kLanes) * D * D);
  return sum_over_lanes(N, D, threads, nullptr, partials.data(),
                        [&](long r0, int m, double*, double* partial) {
    const double* Ab = A.data() + r0;
    numerics::gemm(Transpose::Yes, Transpose::No, D, D, m, 1.0, Ab, int(N), Ab, int(N), 1.0,
                   partial, D);
  });
}

}  // namespace icl::verify::lowrank::detail
