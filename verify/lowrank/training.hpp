// Training of the simulator (docs/simulation.md §13): Gamma = argmin sum_n (y_n - x_n^T Gamma
// s_n)^2 + lambda M0 |Gamma|_F^2 through its normal equations, by matrix-free preconditioned
// conjugate gradients (CG) or a dense D^2 x D^2 solve (small D, a cross-check).
#pragma once
#include <string>

#include <Eigen/Core>

#include "numerics/progress.hpp"
#include "numerics/status.hpp"
#include "verify/lowrank/data.hpp"

namespace icl::verify::lowrank {

enum class Solver { CG, Direct };  // matrix-free PCG / dense D^2 x D^2 normal equations
const char* to_string(Solver s);   // "cg" | "direct"
Solver solver_from_string(const std::string& s);

struct CgOptions {
  // Relative Frobenius residual |A(Gamma) - B|_F / |B|_F of the normal equations at which CG
  // stops (Converged); in (0, 1). 1e-6 moves Gamma by about cond(preconditioned operator) x 1e-6
  // ~ (1 + tau^-1/2)^2/(1 - tau^-1/2)^2 x 1e-6 (2.5e-5 at tau = 2.25) relative, far below the
  // seed-to-seed standard errors (~1e-3).
  double tolerance = 1e-6;
  int max_iterations = 5000;  // >= 1; stopping here above the tolerance is NotConverged
  // lambda = 0 with N < D^2 is rejected unless this is set; then the minimum-norm solution is
  // computed (unpreconditioned CG from zero stays in the range of the operator).
  bool min_norm = false;
  bool precondition = true;        // Kronecker preconditioner (ignored for the minimum norm)
  const MatrixXd* start = nullptr; // initial Gamma (D x D); default: the preconditioned rhs / zero
  // Threads of the operator's products within this one fit (1..numerics::kMaxThreads; at most
  // detail::BlockedNormalOperator::kLanes are used). Gamma does not depend on it.
  int threads = 1;
  // Called after every iteration with (iteration, estimated total, "CG iteration"): the total is
  // the iteration count at which the residual, shrinking at its average rate so far, reaches
  // the tolerance (at least iteration + 1). An exception from it stops nothing: it is the
  // caller's (run() records an interrupt from it and lets the fit finish).
  numerics::Progress progress;
  void validate() const;           // InvalidParams naming the field
};

// A trained Gamma with the convergence facts of its solver.
struct RidgeFit {
  MatrixXd Gamma;
  numerics::Status status = numerics::Status::Converged;
  std::string message;       // empty when Converged
  double residual_norm = 0;  // |A(Gamma) - B|_F / |B|_F recomputed at the end
  int iterations = 0;
  double seconds = 0;
  bool converged() const { return status == numerics::Status::Converged; }
};

// Throws icl::InvalidParams("lambda", ...) for lambda = 0 with N < D^2 unless min_norm. Never
// throws for slow convergence: a residual above the tolerance is status NotConverged.
RidgeFit train_cg(const Dataset& d, double lambda, const CgOptions& options = {});
// Dense solve (D <= 40); status NumericalFailure when the factorization fails.
RidgeFit train_direct(const Dataset& d, double lambda, bool min_norm = false);
// The normal operator (1/N)[X^T diag(rowdot(X G, Sm)) Sm] + (lambda M0/N) G and right side.
// blocked: BLAS products on fixed row blocks (detail/normal_kernel.hpp, used by the solvers) on
// `threads` threads; else plain Eigen products.
MatrixXd apply_normal_operator(const Dataset& d, const MatrixXd& G, double lambda,
                               bool blocked = false, int threads = 1);
MatrixXd normal_rhs(const Dataset& d, int threads = 1);  // (1/N) X^T diag(y) Sm
double training_loss(const Dataset& d, const MatrixXd& G, double lambda);  // the sum loss

}  // namespace icl::verify::lowrank
