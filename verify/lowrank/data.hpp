// Data generation of the finite-D simulator (docs/simulation.md §13): sizes, tasks, context
// estimates and queries of one seed.
//
//   x ~ N(0, I_D/D); A (D x r) Haar, r = round(rho D); M0 = round(kappa D) tasks
//   w = sqrt(D/r) A v, v ~ N(0, I_r); N = round(tau D^2) sequences, each with one task;
//   L = round(alpha D) context pairs, y = w.x + sigma eps; s = (D/L) sum_l y_l x_l.
//
// General task covariance (Params::task_spectrum non-empty, beyond the paper): w = Sigma^{1/2} g,
// g ~ N(0, I_D), Sigma = U diag(t) U^T with U a D x D Haar orthogonal matrix and t the finite-D
// eigenvalues of task_eigenvalues() (population eigenvalue t_k repeated round(w_k D) times, mean
// rescaled to exactly 1). IDG test tasks are w ~ N(0, Sigma); ODG stays isotropic N(0, I_D).
// Empty task_spectrum: the low-rank construction above.
#pragma once
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "theory/finite_d_switches.hpp"
#include "theory/params.hpp"

namespace icl::verify::lowrank {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using Rng = std::mt19937_64;

enum class OdgKind { Isotropic, Subspace };  // ODG task: N(0, I_D) / low rank in an independent subspace
// How a context estimate s is drawn. Direct: the L x D context tokens. Factorized: exactly the
// same distribution from 2L + D normals (decompose each x_l along w and its complement; given the
// labels, the complement part of s is Gaussian with covariance (D/L)^2 sum y_l^2 P_perp / D).
enum class Sampler { Factorized, Direct };
const char* to_string(OdgKind k);
OdgKind odg_kind_from_string(const std::string& s);  // "isotropic" | "subspace"
const char* to_string(Sampler s);                    // "factorized" | "direct"
Sampler sampler_from_string(const std::string& s);

// Throws InvalidParams("odg") for OdgKind::Subspace with a general task_spectrum.
void check_odg_kind(const theory::Params& p, OdgKind odg);

// Derived integer sizes. r: the task rank, round(rho D) for low-rank tasks; for a general
// task_spectrum the number of non-zero entries of task_eigenvalues(p, D).
struct Sizes {
  int D = 0, r = 0, M0 = 0, N = 0, L = 0, Lt = 0;
};
Sizes sizes(const theory::Params& p, int dim);

// The ratios a simulation at dimension D realises (docs/simulation.md §13.1): the scalar ratios at
// the integer sizes (theory::at_dimension, the one rounding rule) and, for a task_spectrum, the
// finite-D spectrum of task_eigenvalues(): level k with weight n_k / D and its value rescaled so
// that the mean is 1, levels left with no direction dropped (test_levels rescaled alike). The
// theory compared with a simulation is solved here, not at the nominal p.
theory::Params simulated_params(const theory::Params& p, int dim);

// One ratio that the rounding may move, as given and as simulated.
struct SizedRatio {
  std::string name;  // "rho", "kappa", "tau", "alpha", "alpha_test", "task_spectrum[k].weight"
  double nominal = 0, simulated = 0;
  double relative_change() const;  // (simulated - nominal) / |nominal|
};
// Every such ratio of p at dim: rho (low-rank tasks) or each task_spectrum level's weight and
// value, kappa, tau, alpha, and alpha_test when it is explicit.
std::vector<SizedRatio> sized_ratios(const theory::Params& p, int dim);

// The D eigenvalues of the finite-D task covariance for a non-empty p.task_spectrum. Two
// finite-D choices: (1) population eigenvalue t_k gets n_k = round(w_k D) entries, and the group
// with the most entries (the first of them on a tie) absorbs D - sum_k n_k so the counts sum to
// D (a group may end up with no entry when w_k D < 1/2); (2) the entries are then rescaled so
// that their mean is exactly 1 (tr Sigma = D, as the theory's |w|^2/D -> 1 assumes). When every
// w_k D is an integer the finite-D spectrum equals the population one. Throws InvalidParams
// ("task_spectrum") for an empty spectrum or when the rounding leaves no positive eigenvalue.
VectorXd task_eigenvalues(const theory::Params& p, int dim);
// The D eigenvalues of the shifted test covariance (p.test_levels, docs/general_covariance.md §20)
// in the same order as task_eigenvalues(p, dim): direction i of level k gets t'_k, with the same
// counts n_k, then the entries are rescaled to mean exactly 1. Throws InvalidParams("test_levels")
// without test_levels or when the rounding leaves no positive test eigenvalue.
VectorXd test_level_eigenvalues(const theory::Params& p, int dim);

// One seed's data.
struct Dataset {
  Sizes n;
  bool general = false;  // task_spectrum non-empty: Sigma below; A is then empty
  MatrixXd A;      // D x r, orthonormal columns (low-rank tasks)
  MatrixXd Sigma;       // D x D population task covariance U diag(t) U^T (general only)
  MatrixXd Sigma_half;  // its symmetric square root U diag(sqrt t) U^T (general only)
  // Second moment of the shifted test tasks when p.has_test_shift() (docs/general_covariance.md
  // §20), else empty: C (D/r) A A^T + (1 - C) (D/(D - r)) (I - A A^T) for test_overlap C, or
  // U diag(t') U^T for test_levels (the eigenbasis U of Sigma).
  MatrixXd shift_covariance;
  MatrixXd W;      // D x M0, tasks as columns
  MatrixXd X;      // N x D queries
  MatrixXd Sm;     // N x D context estimates s_n
  VectorXd y;      // N query labels
  std::vector<int> task;  // N task indices
  MatrixXd S() const { return W * W.transpose() / double(n.M0); }
  // Second moment of a fresh (IDG) task: Sigma, or (D/r) A A^T for low-rank tasks.
  MatrixXd task_covariance() const;
};

// The finite-D switches (theory/finite_d_switches.hpp, docs/simulation.md §13.7): each keeps the
// D -> infinity limit and draws no extra random number (the Gaussian draw is made as usual and
// only rescaled), so with every switch off the data are bit-identical to the default.
using theory::Assignment;
using theory::FiniteDSwitches;

MatrixXd haar_orthonormal(int D, int r, Rng& rng);  // QR of a Gaussian, sign-fixed
Dataset generate(const theory::Params& p, int dim, Rng& rng, Sampler sampler,
                 const FiniteDSwitches& switches = {});
// One context estimate for task w with L pairs and label-noise std sigma.
// gaussian: the Gaussian model of FiniteDSwitches::gaussian_context (Factorized only).
VectorXd draw_context_estimate(const VectorXd& w, int L, double sigma, Rng& rng, Sampler sampler,
                               bool gaussian = false);

}  // namespace icl::verify::lowrank
