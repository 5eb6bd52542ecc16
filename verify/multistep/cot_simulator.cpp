#include "verify/multistep/cot_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "numerics/blas.hpp"
#include "numerics/dense_decompositions.hpp"
#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/memory.hpp"
#include "numerics/normal_sampler.hpp"
#include "numerics/parallel.hpp"
#include "numerics/seed.hpp"
#include "numerics/statistics.hpp"
#include "numerics/timing.hpp"

namespace icl::verify::multistep {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using numerics::Status;
using numerics::Transpose;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Pretraining tasks per GEMM update of the two D x D sums.
constexpr int kPretrainingBlock = 64;
// Test tasks iterated together (the A-product is a D x D times D x k GEMM): as many contexts as
// fit in about 8 MB, 1..32, so that the block stays in the last-level cache from one step to the
// next (each step reads every context twice; at D = 400, L = 800 blocks of 3 contexts ran the
// iteration twice as fast as blocks of 12 on the project's machine, 32 MB L3 for 2 cores). A
// function of (D, L) only, so the same for every thread count.
int test_block(int D, int L) {
  const double per_task = 8.0 * D * L;
  return int(std::clamp(std::floor(8e6 / per_task), 1.0, 32.0));
}
// The pretraining Gram matrix is refused below this reciprocal condition number (LLT::rcond):
// A would carry relative errors of order 1e-4 or more.
constexpr double kMinRcond = 1e-12;

struct Sizes {
  int D = 0, L = 0, M = 0;
};

// L = round(alpha D) and M = round(tau D), each refused when below 1 or beyond int.
Sizes sizes(const theory::CotParams& p, int dim, bool check) {
  const auto size = [&](double ratio, const char* field, const char* what) {
    const double n = std::round(ratio * dim);
    if (check && !(n >= 1 && n <= double(std::numeric_limits<int>::max())))
      throw InvalidParams(field, std::string("at D = ") + std::to_string(dim) + " the " + what +
                                     " round(" + field + " D) = " +
                                     numerics::format_significant(n) +
                                     " is not in [1, 2147483647]");
    return int(std::clamp(n, 1.0, double(std::numeric_limits<int>::max())));
  };
  return {dim, size(p.alpha, "alpha", "context length"), size(p.tau, "tau", "number of tasks")};
}

int seeds_at_once(const CotSimOptions& o) {
  const int threads =
      o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  return std::min(threads, o.seeds);
}

struct SeedOutput {
  std::vector<double> errors;  // E_t of test task j at [j (T + 1) + t]
  std::vector<double> mean;    // over the seed's test tasks, t = 0..T
  double spectral_radius = kNaN;
  Status status = Status::Converged;
  std::string message;
};

// One stream per task: the draws of a task do not depend on the block it is computed in.
std::mt19937_64 task_rng(std::uint64_t seed, const char* stream, int task) {
  return std::mt19937_64(numerics::derive_seed(seed, stream, std::uint64_t(task)));
}

// b = (D/L) X y of one pretraining task with its w, from the task's own stream. Direct: the D x L
// context X (columns N(0, I/D)), then y = X^T w + sigma eps. Factorized (docs/simulation.md §13.3,
// exact in distribution): with omega = |w|, u = w/omega, each token is x_l = a_l u + x_l_perp,
// a_l ~ N(0, 1/D); the labels y_l = omega a_l + sigma eps_l see only the a_l, and given them
// sum_l y_l x_l_perp ~ N(0, (sum_l y_l^2) P_perp / D) = sqrt(sum_l y_l^2 / D) P_perp g, so
// X y = (a . y) u + sqrt(|y|^2 / D) (g - u (u . g)): 2 L + D normals instead of D L.
class PretrainingSampler {
 public:
  PretrainingSampler(const theory::CotParams& p, const Sizes& n, bool direct)
      : sigma_(p.sigma), ratio_(double(n.D) / n.L), direct_(direct), y_(n.L), eps_(n.L) {
    if (direct_) X_.resize(n.D, n.L);
    else {
      a_.resize(n.L);
      g_.resize(n.D);
    }
  }
  template <class W, class B>
  void draw(std::uint64_t seed, int task, W&& w, B&& b) {
    std::mt19937_64 rng = task_rng(seed, "pretraining", task);
    numerics::NormalSampler normal(rng);
    const Eigen::Index D = w.size(), L = y_.size();
    const double scale = 1.0 / std::sqrt(double(D));
    normal.fill(w.data(), D, 1.0);
    if (direct_) {
      normal.fill(X_.data(), X_.size(), scale);
      normal.fill(eps_.data(), L, 1.0);
      y_.noalias() = X_.transpose() * w;
      y_ += sigma_ * eps_;
      b.noalias() = ratio_ * (X_ * y_);
      return;
    }
    normal.fill(a_.data(), L, scale);
    normal.fill(eps_.data(), L, 1.0);
    normal.fill(g_.data(), D, 1.0);
    const double omega = w.norm();
    y_ = omega * a_ + sigma_ * eps_;
    const double along = a_.dot(y_), across = std::sqrt(y_.squaredNorm() / D);
    if (omega > 0) {
      const double ug = w.dot(g_) / omega;
      b = ratio_ * ((along - across * ug) / omega * w + across * g_);
    } else {  // w = 0 (probability 0): y = sigma eps, X y has covariance |y|^2 I / D
      b = ratio_ * across * g_;
    }
  }

 private:
  double sigma_, ratio_;
  bool direct_;
  VectorXd y_, eps_, a_, g_;
  MatrixXd X_;
};

// A = (sum w b^T) (sum b b^T + (M lambda/2) I)^{-1}; false (and `why`) when the Gram matrix is
// not safely positive definite.
bool pretrain(const theory::CotParams& p, const Sizes& n, bool direct, std::uint64_t seed,
              MatrixXd& A, std::string& why) {
  const int D = n.D;
  PretrainingSampler sampler(p, n, direct);
  MatrixXd WB = MatrixXd::Zero(D, D), BB = MatrixXd::Zero(D, D);
  MatrixXd W(D, kPretrainingBlock), B(D, kPretrainingBlock);
  for (int start = 0; start < n.M; start += kPretrainingBlock) {
    const int k = std::min(kPretrainingBlock, n.M - start);
    for (int j = 0; j < k; ++j) sampler.draw(seed, start + j, W.col(j), B.col(j));
    numerics::gemm(Transpose::No, Transpose::Yes, D, D, k, 1.0, W.data(), D, B.data(), D, 1.0,
                   WB.data(), D);
    numerics::gemm(Transpose::No, Transpose::Yes, D, D, k, 1.0, B.data(), D, B.data(), D, 1.0,
                   BB.data(), D);
  }
  BB.diagonal().array() += n.M * p.lambda / 2;
  const Eigen::LLT<MatrixXd> llt(BB);
  const bool factored = llt.info() == Eigen::Success;
  const double rcond = factored ? llt.rcond() : 0.0;
  if (!(rcond >= kMinRcond)) {
    why = "the pretraining Gram matrix sum b b^T + (M lambda/2) I is singular (" +
          (factored ? "reciprocal condition number " + numerics::format_significant(rcond, 3) +
                          " < 1e-12"
                    : std::string("Cholesky failed")) +
          ") with M = " + std::to_string(n.M) + " tasks at D = " + std::to_string(D) +
          ", lambda = " + numerics::format_significant(p.lambda) +
          ": use lambda > 0, or M >= D tasks (tau >= 1) with lambda = 0";
    return false;
  }
  A = llt.solve(WB.transpose()).transpose();  // the Gram matrix is symmetric
  if (!A.allFinite()) {
    why = "the trained map A has non-finite entries";
    return false;
  }
  return true;
}

// max |eigenvalue| of I - A S.
double spectral_radius(const MatrixXd& A, const MatrixXd& S) {
  MatrixXd J = -A * S;
  J.diagonal().array() += 1.0;
  const numerics::GeneralEigenvalues es = numerics::general_eigenvalues(J);
  if (!es.converged) return kNaN;
  return es.values.cwiseAbs().maxCoeff();
}

SeedOutput run_seed(const theory::CotParams& p, const CotSimOptions& o, const Sizes& n,
                    std::uint64_t seed) {
  SeedOutput out;
  const int D = n.D, L = n.L, T = o.steps, N = o.test_tasks;
  MatrixXd A;
  if (!pretrain(p, n, o.direct_pretraining, seed, A, out.message)) {
    out.status = Status::NumericalFailure;
    out.mean.assign(T + 1, kNaN);
    return out;
  }
  const double scale = 1.0 / std::sqrt(double(D)), ratio = double(D) / L;
  const int kb = test_block(D, L);
  out.errors.resize(std::size_t(N) * (T + 1));
  MatrixXd X(D, Eigen::Index(L) * kb), E(D, kb), U(D, kb);
  VectorXd v(L);
  for (int start = 0; start < N; start += kb) {
    const int k = std::min(kb, N - start);
    const auto context = [&](int j) { return X.middleCols(Eigen::Index(j) * L, L); };
    const auto record = [&](int t) {
      for (int j = 0; j < k; ++j)
        out.errors[std::size_t(start + j) * (T + 1) + t] = E.col(j).squaredNorm() / D;
    };
    for (int j = 0; j < k; ++j) {
      std::mt19937_64 rng = task_rng(seed, "test", start + j);
      numerics::NormalSampler normal(rng);
      normal.fill(E.col(j).data(), D, 1.0);  // e_0 = w - w_0 = w
      normal.fill(X.col(Eigen::Index(j) * L).data(), Eigen::Index(D) * L, scale);
    }
    if (start == 0) {
      const MatrixXd S = ratio * (context(0) * context(0).transpose());
      out.spectral_radius = spectral_radius(A, S);
    }
    record(0);
    for (int t = 1; t <= T; ++t) {
      for (int j = 0; j < k; ++j) {  // U = S E, one context per column
        v.noalias() = context(j).transpose() * E.col(j);
        U.col(j).noalias() = ratio * (context(j) * v);
      }
      numerics::gemm(Transpose::No, Transpose::No, D, k, D, -1.0, A.data(), D, U.data(), D, 1.0,
                     E.data(), D);  // E <- E - A S E
      record(t);
    }
  }
  out.mean.assign(T + 1, 0.0);
  for (int j = 0; j < N; ++j)
    for (int t = 0; t <= T; ++t) out.mean[t] += out.errors[std::size_t(j) * (T + 1) + t];
  for (double& m : out.mean) m /= N;
  return out;
}

double median(std::vector<double>& v) {
  const std::size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + h, v.end());
  const double upper = v[h];
  if (v.size() % 2) return upper;
  return 0.5 * (*std::max_element(v.begin(), v.begin() + h) + upper);
}

nlohmann::ordered_json number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}
nlohmann::ordered_json numbers(const std::vector<double>& v) {
  auto a = nlohmann::ordered_json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}

}  // namespace

void CotSimOptions::validate() const {
  if (dim < 1) throw InvalidParams("dim", "must be >= 1, got " + std::to_string(dim));
  if (seeds < 1) throw InvalidParams("seeds", "must be >= 1, got " + std::to_string(seeds));
  if (test_tasks < 1)
    throw InvalidParams("test_tasks", "must be >= 1, got " + std::to_string(test_tasks));
  if (steps < 0 || steps == std::numeric_limits<int>::max())
    throw InvalidParams("steps", "must be in [0, 2147483646], got " + std::to_string(steps));
  numerics::check_threads(threads, true);
}

double CotSimOptions::memory_bytes(const theory::CotParams& p) const {
  const Sizes n = sizes(p, dim, false);
  const double D = n.D, L = n.L, d8 = sizeof(double), kb = test_block(n.D, n.L);
  // Per seed at once: about eight D x D matrices (the two sums, A, the Cholesky factor; then S,
  // I - A S and the eigensolver's work space), one pretraining context with its block of w and
  // b, the block of test contexts with its E and S E columns. For every seed, the E_t of all its
  // test tasks (kept for the pooled median).
  const double seed = d8 * (8 * D * D + D * L * (1 + kb) + 2 * D * (kPretrainingBlock + kb) + 3 * L);
  return seeds_at_once(*this) * seed + d8 * double(seeds) * test_tasks * (double(steps) + 2);
}

CotSimResult simulate(const theory::CotParams& p, const CotSimOptions& o,
                      const numerics::Progress& progress) {
  const auto t0 = numerics::Clock::now();
  p.validate();
  o.validate();
  const Sizes n = sizes(p, o.dim, true);
  numerics::check_fits_in_memory(
      o.memory_bytes(p), "dim",
      "a test-time iteration simulation at D = " + std::to_string(o.dim) + " (L = " +
          std::to_string(n.L) + ", M = " + std::to_string(n.M) + ", " +
          std::to_string(seeds_at_once(o)) + " seeds at once)");

  CotSimResult r;
  r.params = p;
  r.options = o;
  r.context_length = n.L;
  r.tasks = n.M;
  const int S = o.seeds, T = o.steps;
  std::vector<SeedOutput> seeds(S);
  std::vector<std::exception_ptr> errors(S);
  numerics::parallel_for(
      std::size_t(S), o.threads,
      [&](std::size_t k) {
        try {
          seeds[k] = run_seed(p, o, n, numerics::derive_seed(o.seed, "cot", std::uint64_t(k)));
        } catch (...) {
          errors[k] = std::current_exception();
        }
      },
      progress, "seed");
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  int failed = 0;
  for (int k = 0; k < S; ++k) {
    r.seed_means.push_back(seeds[k].mean);
    r.spectral_radius.push_back(seeds[k].spectral_radius);
    if (seeds[k].status == Status::Converged) continue;
    if (failed++ == 0) {
      r.status = seeds[k].status;
      r.message = "seed " + std::to_string(k) + ": " + seeds[k].message;
    }
  }
  if (failed > 1) r.message += " (and " + std::to_string(failed - 1) + " more seeds)";

  r.error.mean.assign(T + 1, kNaN);
  r.error.sem.assign(T + 1, kNaN);
  r.error.median.assign(T + 1, kNaN);
  if (failed == 0) {
    std::vector<double> per_seed(S), pooled(std::size_t(S) * o.test_tasks);
    for (int t = 0; t <= T; ++t) {
      for (int k = 0; k < S; ++k) {
        per_seed[k] = seeds[k].mean[t];
        for (int j = 0; j < o.test_tasks; ++j)
          pooled[std::size_t(k) * o.test_tasks + j] = seeds[k].errors[std::size_t(j) * (T + 1) + t];
      }
      const numerics::Estimate e = numerics::estimate(per_seed);
      r.error.mean[t] = e.mean;
      r.error.sem[t] = e.sem;
      r.error.median[t] = median(pooled);
    }
  }
  r.seconds = numerics::seconds_since(t0);
  return r;
}

nlohmann::ordered_json to_json(const CotSimResult& r) {
  nlohmann::ordered_json j;
  j["dim"] = r.options.dim;
  j["seeds"] = r.options.seeds;
  j["test_tasks"] = r.options.test_tasks;
  j["context_length"] = r.context_length;
  j["tasks"] = r.tasks;
  j["seed"] = r.options.seed;
  j["mean"] = numbers(r.error.mean);
  j["sem"] = numbers(r.error.sem);
  j["median"] = numbers(r.error.median);
  j["spectral_radius"] = numbers(r.spectral_radius);
  nlohmann::ordered_json per_seed = nlohmann::ordered_json::array();
  for (const auto& m : r.seed_means) per_seed.push_back(numbers(m));
  j["seed_means"] = per_seed;
  j["status"] = numerics::to_string(r.status);
  j["message"] = r.message;
  return j;
}

std::string to_text(const CotSimResult& r) {
  std::ostringstream os;
  const auto num = [](double v) { return numerics::format_significant(v, 6); };
  os << "simulation  D " << r.options.dim << "  L " << r.context_length << "  M " << r.tasks
     << "  seeds " << r.options.seeds << "  test tasks " << r.options.test_tasks << "  ("
     << numerics::to_string(r.status) << (r.message.empty() ? "" : ": " + r.message) << ")\n";
  os << "t\tmean\tsem\tmedian\n";
  for (std::size_t t = 0; t < r.error.mean.size(); ++t)
    os << t << '\t' << num(r.error.mean[t]) << '\t' << num(r.error.sem[t]) << '\t'
       << num(r.error.median[t]) << '\n';
  os << "spectral radius of I - A S per seed:";
  for (double v : r.spectral_radius) os << ' ' << num(v);
  os << '\n';
  return os.str();
}

}  // namespace icl::verify::multistep

namespace icl::verify::multistep {

CotComparison compare(const theory::CotParams& p, theory::CotOptions theory_options,
                      CotSimOptions sim_options, const numerics::Progress& progress) {
  p.validate();
  sim_options.steps = theory_options.steps;
  if (theory_options.finite_dim == 0) theory_options.finite_dim = sim_options.dim;
  theory_options.validate();
  sim_options.validate();
  CotComparison c;
  c.has_theory = theory::cot_theory_applies(p);
  if (c.has_theory) c.theory = theory::run(p, theory_options);
  c.simulation = simulate(p, sim_options, progress);
  return c;
}

nlohmann::ordered_json to_json(const CotComparison& c) {
  nlohmann::ordered_json j;
  if (c.has_theory) j = theory::to_json(c.theory);
  else j["params"] = theory::to_json(c.simulation.params);
  j["simulation"] = to_json(c.simulation);
  return j;
}

}  // namespace icl::verify::multistep
