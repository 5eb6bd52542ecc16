// The dense decompositions that several layers use, compiled once. Each of Eigen's
// decompositions is a few thousand lines of templates that every translation unit using it
// instantiates again (about 15 s of compile time for EigenSolver, 7 s for
// SelfAdjointEigenSolver, 3 s for LDLT on this kind of machine; bench/README.md, "Install"):
// these free functions are their one instantiation for Eigen::MatrixXd. Results are Eigen's,
// bit for bit.
#pragma once
#include <Eigen/Core>

namespace icl::numerics {

// Eigenvalues in increasing order and orthonormal eigenvectors (columns) of a symmetric matrix,
// of which the lower triangle is read (Eigen::SelfAdjointEigenSolver).
struct SymmetricEigen {
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  bool converged = false;  // the QR iteration converged (Eigen's info() == Success)
};
SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& a);

// The eigenvalues alone, in increasing order (no eigenvectors computed).
Eigen::VectorXd symmetric_eigenvalues(const Eigen::MatrixXd& a);

// The eigenvalues of a general real square matrix, complex, in Eigen::EigenSolver's order;
// converged = false (the values then unreliable) when the real Schur iteration failed.
struct GeneralEigenvalues {
  Eigen::VectorXcd values;
  bool converged = false;
};
GeneralEigenvalues general_eigenvalues(const Eigen::MatrixXd& a);

// x solving a x = b for a symmetric positive or negative semidefinite a (Eigen::LDLT, with
// pivoting). Returns false when the factorization failed (x is then what Eigen's solve gave).
bool ldlt_solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, Eigen::VectorXd& x);
bool ldlt_solve(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::MatrixXd& x);

}  // namespace icl::numerics
