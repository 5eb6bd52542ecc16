#include "numerics/dense_decompositions.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

namespace icl::numerics {

SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& a) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(a);
  SymmetricEigen out;
  out.converged = es.info() == Eigen::Success;
  out.values = es.eigenvalues();
  out.vectors = es.eigenvectors();
  return out;
}

Eigen::VectorXd symmetric_eigenvalues(const Eigen::MatrixXd& a) {
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(a, Eigen::EigenvaluesOnly).eigenvalues();
}

GeneralEigenvalues general_eigenvalues(const Eigen::MatrixXd& a) {
  const Eigen::EigenSolver<Eigen::MatrixXd> es(a, /*computeEigenvectors=*/false);
  GeneralEigenvalues out;
  out.converged = es.info() == Eigen::Success;
  out.values = es.eigenvalues();
  return out;
}

namespace {

// One factorization for both right-hand sides; the solve itself stays Eigen's for each (a
// vector right-hand side takes the triangular vector solves, a matrix one the blocked ones).
template <class Rhs>
bool ldlt_solve_any(const Eigen::MatrixXd& a, const Rhs& b, Rhs& x) {
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(a);
  x = ldlt.solve(b);
  return ldlt.info() == Eigen::Success;
}

}  // namespace

bool ldlt_solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  return ldlt_solve_any(a, b, x);
}

bool ldlt_solve(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::MatrixXd& x) {
  return ldlt_solve_any(a, b, x);
}

}  // namespace icl::numerics
