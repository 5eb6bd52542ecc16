// Finite-D simulator of linear attention trained on low-rank regression tasks (spec lowrank.md
// section 1 conventions), the independent judge of the replica theory.
//
//   x ~ N(0, I_D/D); A (D x r) Haar, r = round(rho D); M0 = round(kappa D) tasks
//   w = sqrt(D/r) A v, v ~ N(0, I_r); N = round(tau D^2) sequences, each with one task;
//   L = round(alpha D) context pairs, y = w.x + sigma eps; s = (D/L) sum_l y_l x_l;
//   prediction x_q^T Gamma s; Gamma = argmin sum_n (y_n - x_n^T Gamma s_n)^2 + lambda M0 |Gamma|_F^2.
//
// General task covariance (Params::task_spectrum non-empty, beyond the paper): w = Sigma^{1/2} g,
// g ~ N(0, I_D), Sigma = U diag(t) U^T with U a D x D Haar orthogonal matrix and t the finite-D
// eigenvalues of task_eigenvalues() (population eigenvalue t_k repeated round(w_k D) times, mean
// rescaled to exactly 1). IDG test tasks are w ~ N(0, Sigma); ODG stays isotropic N(0, I_D).
// Empty task_spectrum: the low-rank construction above, with the same random streams as before.
//
// Everything is seeded (std::mt19937_64); seed k of a run is derived from (base seed, k) only,
// so results do not depend on the number of threads.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "numerics/seed.hpp"
#include "theory/params.hpp"

namespace icl::verify::lowrank {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using Rng = std::mt19937_64;

enum class Assignment { Random, Balanced };  // task of each sequence: uniform with replacement / cyclic
enum class OdgKind { Isotropic, Subspace };  // ODG task: N(0, I_D) / low rank in an independent subspace
// How a context estimate s is drawn. Direct: the L x D context tokens. Factorized: exactly the
// same distribution from 2L + D normals (decompose each x_l along w and its complement; given the
// labels, the complement part of s is Gaussian with covariance (D/L)^2 sum y_l^2 P_perp / D).
enum class Sampler { Factorized, Direct };
enum class Solver { CG, Direct };  // matrix-free PCG / dense D^2 x D^2 normal equations
const char* to_string(OdgKind k);
OdgKind odg_kind_from_string(const std::string& s);  // "isotropic" | "subspace"

// Derived integer sizes. r: the task rank, round(rho D) for low-rank tasks; for a general
// task_spectrum the number of non-zero entries of task_eigenvalues(p, D).
struct Sizes {
  int D = 0, r = 0, M0 = 0, N = 0, L = 0, Lt = 0;
};
Sizes sizes(const theory::Params& p, int dim);

// The D eigenvalues of the finite-D task covariance for a non-empty p.task_spectrum. Two
// finite-D choices: (1) population eigenvalue t_k gets n_k = round(w_k D) entries, and the group
// with the most entries (the first of them on a tie) absorbs D - sum_k n_k so the counts sum to
// D (a group may end up with no entry when w_k D < 1/2); (2) the entries are then rescaled so
// that their mean is exactly 1 (tr Sigma = D, as the theory's |w|^2/D -> 1 assumes). When every
// w_k D is an integer the finite-D spectrum equals the population one. Throws InvalidParams
// ("task_spectrum") for an empty spectrum or when the rounding leaves no positive eigenvalue.
VectorXd task_eigenvalues(const theory::Params& p, int dim);

// Quantities from the theory used by the decomposition and the distribution of predictions.
struct TheoryRef {
  double z = 0, e = 0, nu = 0;
};

struct SimOptions {
  int dim = 60;
  int seeds = 5;
  std::uint64_t base_seed = 20251;
  int threads = 2;
  Assignment assignment = Assignment::Random;
  OdgKind odg = OdgKind::Isotropic;
  Sampler sampler = Sampler::Factorized;
  Solver solver = Solver::CG;
  // Relative Frobenius residual of the normal equations. 1e-6 moves Gamma by about
  // cond(preconditioned operator) x 1e-6 ~ (1 + tau^-1/2)^2/(1 - tau^-1/2)^2 x 1e-6 (2.5e-5 at
  // tau = 2.25) relative, far below the seed-to-seed standard errors (~1e-3).
  double cg_tolerance = 1e-6;
  int cg_max_iterations = 5000;
  // lambda = 0 with N < D^2 is rejected unless this is set; then the minimum-norm solution is
  // computed (unpreconditioned CG from zero / complete orthogonal decomposition).
  bool min_norm = false;
  // ODG Subspace is only defined for low-rank tasks (InvalidParams "odg" with a task_spectrum).
  std::optional<TheoryRef> theory;  // enables the decomposition and prediction distribution
  int prediction_prompts = 0;       // fresh test prompts per protocol for the distribution
  int histogram_bins = 16;          // standardized residuals on [-4, 4]
};

// One seed's data.
struct Dataset {
  Sizes n;
  bool general = false;  // task_spectrum non-empty: Sigma below; A is then empty
  MatrixXd A;      // D x r, orthonormal columns (low-rank tasks)
  MatrixXd Sigma;       // D x D population task covariance U diag(t) U^T (general only)
  MatrixXd Sigma_half;  // its symmetric square root U diag(sqrt t) U^T (general only)
  MatrixXd W;      // D x M0, tasks as columns
  MatrixXd X;      // N x D queries
  MatrixXd Sm;     // N x D context estimates s_n
  VectorXd y;      // N query labels
  std::vector<int> task;  // N task indices
  MatrixXd S() const { return W * W.transpose() / double(n.M0); }
  // Second moment of a fresh (IDG) task: Sigma, or (D/r) A A^T for low-rank tasks.
  MatrixXd task_covariance() const;
};

MatrixXd haar_orthonormal(int D, int r, Rng& rng);  // QR of a Gaussian, sign-fixed
Dataset generate(const theory::Params& p, int dim, Rng& rng, Assignment assignment,
                 Sampler sampler);
// One context estimate for task w with L pairs and label-noise std sigma.
VectorXd draw_context_estimate(const VectorXd& w, int L, double sigma, Rng& rng, Sampler sampler);

struct TrainResult {
  MatrixXd Gamma;
  int iterations = 0;
  double relative_residual = 0;  // |A(Gamma) - B|_F / |B|_F recomputed at the end
  double seconds = 0;
};
// Throws icl::InvalidParams("lambda", ...) for lambda = 0 with N < D^2 unless min_norm.
TrainResult train_cg(const Dataset& d, double lambda, double tolerance, int max_iterations,
                     bool min_norm = false, const MatrixXd* start = nullptr,
                     bool precondition = true);
TrainResult train_direct(const Dataset& d, double lambda, bool min_norm = false);
// The normal operator (1/N)[X^T diag(rowdot(X G, Sm)) Sm] + (lambda M0/N) G and right side.
// packed: the AVX2/FMA kernel of normal_kernel.hpp (used by the solvers); else Eigen products.
MatrixXd apply_normal_operator(const Dataset& d, const MatrixXd& G, double lambda,
                               bool packed = false);
MatrixXd normal_rhs(const Dataset& d);
double training_loss(const Dataset& d, const MatrixXd& G, double lambda);  // the sum loss

// Exact finite-D test error of Gamma averaged over a task distribution with second moment
// C = E[w w^T] (the formula is linear in w w^T):
//   sigma_t^2 + tr((I-G) C (I-G)^T)/D + (1/L_t)[(tr C/D + sigma_t^2)|G|_F^2 + tr(G C G^T)/D].
double exact_error(const MatrixXd& G, const MatrixXd& C, int Lt, double sigma_t);
double exact_error_task(const MatrixXd& G, const VectorXd& w, int Lt, double sigma_t);
// Plain Monte Carlo of the same error on `prompts` fresh sequences of the fixed task w.
std::pair<double, double> monte_carlo_error(const MatrixXd& G, const VectorXd& w, int Lt,
                                            double sigma_t, int prompts, Rng& rng,
                                            Sampler sampler);  // (mean, standard error)

// A flat list of named measurements ("error.tm", "order.q", "decomp.idg.algo", ...).
using Values = std::vector<std::pair<std::string, double>>;

struct Stat {
  double mean = 0, sem = 0;
  int count = 0;
};
struct Estimate {
  std::vector<std::string> names;  // in order of first appearance
  std::vector<Stat> stats;
  std::vector<Values> per_seed;
  std::vector<double> histogram_edges;           // for "hist.<protocol>.<bin>" entries
  bool has(const std::string& name) const;
  Stat get(const std::string& name) const;  // throws std::out_of_range
};
Estimate summarize(const std::vector<Values>& per_seed);

// Throws InvalidParams("odg") for OdgKind::Subspace with a general task_spectrum.
void check_odg_kind(const theory::Params& p, OdgKind odg);

// One full seed: data, training, measurements.
Values run_seed(const theory::Params& p, const SimOptions& o, std::uint64_t seed);

class LowRankSimulator {
 public:
  LowRankSimulator(theory::Params p, SimOptions o);
  Estimate run() const;  // seeds spread over o.threads std::threads
  const theory::Params& params() const { return p_; }
  const SimOptions& options() const { return o_; }

 private:
  theory::Params p_;
  SimOptions o_;
};

// Ill-posedness demo (spec section 8): gradient descent on the same loss from several
// initializations, against the CG (ridge / exact) solution.
struct GdRun {
  double init_scale = 0;
  int steps = 0;
  double loss = 0, odg = 0, idg = 0, tm = 0;
  double null_norm2 = 0;        // |Gamma P0|_F^2 / D  (P0 = projector on null(S))
  double null_dist2 = 0;        // |(Gamma - Gamma_cg) P0|_F^2 / D
  double span_dist2 = 0;        // |(Gamma - Gamma_cg) P_S|_F^2 / D
};
struct GdDemo {
  double cg_odg = 0, cg_idg = 0, cg_tm = 0, cg_null_norm2 = 0, cg_loss = 0;
  std::vector<GdRun> runs;
  double odg_spread = 0;  // standard deviation of ODG across initializations
  double null_spread = 0; // standard deviation of |Gamma P0|^2/D across initializations
};
GdDemo gd_demo(const theory::Params& p, int dim, std::uint64_t seed,
               const std::vector<double>& init_scales, int steps, OdgKind odg);

}  // namespace icl::verify::lowrank
