#include "verify/lowrank/training.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include <Eigen/QR>

#include "numerics/dense_decompositions.hpp"
#include "numerics/error.hpp"
#include "numerics/parallel.hpp"
#include "verify/lowrank/detail/normal_operator.hpp"
#include "numerics/timing.hpp"

namespace icl::verify::lowrank {

namespace detail {

NormalOperator::NormalOperator(const Dataset& data, double lambda, int threads, bool use_blocked)
    : d_(data), ridge_(lambda * data.n.M0 / double(data.n.N)) {
  if (use_blocked) blocked_.emplace(d_.X, d_.Sm, threads);
  else XG_.resize(d_.n.N, d_.n.D);
}

void NormalOperator::apply(const MatrixXd& G, MatrixXd& out) {
  if (blocked_) {
    blocked_->apply(G, out);
  } else {
    XG_.noalias() = d_.X * G;
    const VectorXd u = XG_.cwiseProduct(d_.Sm).rowwise().sum();
    XG_.array() = d_.Sm.array().colwise() * u.array();
    out.noalias() = d_.X.transpose() * XG_;
  }
  out /= double(d_.n.N);
  if (ridge_ != 0.0) out += ridge_ * G;
}

MatrixXd NormalOperator::rhs() const {
  if (!blocked_) return normal_rhs(d_);
  return blocked_->weighted_cross(d_.y) / double(d_.n.N);
}

}  // namespace detail

namespace {

using numerics::Clock;
using numerics::seconds_since;

void check_well_posed(const Dataset& d, double lambda, bool min_norm) {
  const long long D2 = (long long)d.n.D * d.n.D;
  if (lambda == 0.0 && d.n.N < D2 && !min_norm)
    throw InvalidParams("lambda", "lambda = 0 with N = " + std::to_string(d.n.N) + " < D^2 = " +
                                      std::to_string(D2) +
                                      " sequences: Gamma is not unique (use lambda > 0, tau > 1,"
                                      " or ask for the minimum-norm solution)");
  if (lambda < 0) throw InvalidParams("lambda", "must be >= 0");
}

// Kronecker preconditioner (X^T X / N) G (Sm^T Sm / N) + ridge G, inverted through two
// eigendecompositions: exact for the expected operator when queries are independent of s.
struct KroneckerPreconditioner {
  MatrixXd U, V, inv_denominator;
  KroneckerPreconditioner(const Dataset& d, double ridge, int threads) {
    const double N = d.n.N;
    numerics::SymmetricEigen ex = numerics::symmetric_eigen(detail::blocked_gram(d.X, threads) / N);
    numerics::SymmetricEigen es = numerics::symmetric_eigen(detail::blocked_gram(d.Sm, threads) / N);
    U = std::move(ex.vectors);
    V = std::move(es.vectors);
    const VectorXd a = ex.values.cwiseMax(0.0), b = es.values.cwiseMax(0.0);
    inv_denominator = ((a * b.transpose()).array() + ridge).inverse().matrix();
    const double big = 1e300;
    for (Eigen::Index k = 0; k < inv_denominator.size(); ++k)
      if (!std::isfinite(inv_denominator.data()[k]) || inv_denominator.data()[k] > big)
        inv_denominator.data()[k] = 0.0;
  }
  MatrixXd apply(const MatrixXd& R) const {
    MatrixXd T = U.transpose() * R * V;
    T.array() *= inv_denominator.array();
    return U * T * V.transpose();
  }
};

double dot(const MatrixXd& a, const MatrixXd& b) { return a.cwiseProduct(b).sum(); }

// CgOptions::progress after iteration `it` (relative residual rel0 at the start, rel now).
void report_iteration(const CgOptions& o, int it, double rel0, double rel) {
  int total = o.max_iterations;
  if (rel <= o.tolerance) {
    total = it;
  } else if (rel < rel0) {
    const double per_iteration = std::log(rel / rel0) / it;  // < 0: the average rate so far
    const double more = std::ceil(std::log(o.tolerance / rel) / per_iteration);
    total = int(std::min<double>(o.max_iterations, it + std::max(1.0, more)));
  }
  try {
    o.progress(std::size_t(it), std::size_t(std::max(total, it)), "CG iteration");
  } catch (...) {  // the caller's to handle (CgOptions::progress)
  }
}

}  // namespace

const char* to_string(Solver s) { return s == Solver::CG ? "cg" : "direct"; }
Solver solver_from_string(const std::string& s) {
  if (s == "cg") return Solver::CG;
  if (s == "direct") return Solver::Direct;
  throw InvalidParams("solver", "must be 'cg' or 'direct', got '" + s + "'");
}

void CgOptions::validate() const {
  if (!(tolerance > 0 && tolerance < 1))
    throw InvalidParams("cg_tolerance", "must be in (0, 1), got " + std::to_string(tolerance));
  if (max_iterations < 1)
    throw InvalidParams("cg_max_iterations", "must be >= 1, got " + std::to_string(max_iterations));
  numerics::check_threads(threads, false);
}

MatrixXd apply_normal_operator(const Dataset& d, const MatrixXd& G, double lambda, bool blocked,
                               int threads) {
  detail::NormalOperator op(d, lambda, threads, blocked);
  MatrixXd out(d.n.D, d.n.D);
  op.apply(G, out);
  return out;
}

MatrixXd normal_rhs(const Dataset& d, int threads) {
  return detail::BlockedNormalOperator(d.X, d.Sm, threads).weighted_cross(d.y) / double(d.n.N);
}

double training_loss(const Dataset& d, const MatrixXd& G, double lambda) {
  const VectorXd pred = (d.X * G).cwiseProduct(d.Sm).rowwise().sum();
  return (d.y - pred).squaredNorm() + lambda * d.n.M0 * G.squaredNorm();
}

RidgeFit train_cg(const Dataset& d, double lambda, const CgOptions& o) {
  o.validate();
  check_well_posed(d, lambda, o.min_norm);
  const auto t0 = Clock::now();
  const int D = d.n.D;
  // Minimum-norm (lambda = 0, N < D^2): plain CG from zero stays in the range of the operator.
  const bool use_pc = o.precondition && !(o.min_norm && lambda == 0.0);
  detail::NormalOperator op(d, lambda, o.threads);
  const MatrixXd B = op.rhs();
  const double bnorm = B.norm();
  RidgeFit res;
  res.Gamma = MatrixXd::Zero(D, D);
  if (bnorm == 0.0) {
    res.seconds = seconds_since(t0);
    return res;
  }
  std::optional<KroneckerPreconditioner> pc;
  if (use_pc) pc.emplace(d, op.ridge(), o.threads);
  auto precond = [&](const MatrixXd& R) { return use_pc ? pc->apply(R) : R; };
  MatrixXd& G = res.Gamma;
  if (o.start) G = *o.start;
  else if (use_pc) G = pc->apply(B);
  MatrixXd AG(D, D), AP(D, D);
  op.apply(G, AG);
  MatrixXd R = B - AG;
  MatrixXd Z = precond(R);
  MatrixXd P = Z;
  double rz = dot(R, Z);
  int it = 0;
  double rel = R.norm() / bnorm;
  const double rel0 = rel;
  while (rel > o.tolerance && it < o.max_iterations) {
    op.apply(P, AP);
    const double pap = dot(P, AP);
    if (!(pap > 0)) break;
    const double step = rz / pap;
    G += step * P;
    R -= step * AP;
    ++it;
    rel = R.norm() / bnorm;
    if (o.progress) report_iteration(o, it, rel0, rel);
    if (rel <= o.tolerance) break;
    Z = precond(R);
    const double rz_new = dot(R, Z);
    P = Z + (rz_new / rz) * P;
    rz = rz_new;
  }
  op.apply(G, AG);
  res.residual_norm = (B - AG).norm() / bnorm;
  res.iterations = it;
  res.seconds = seconds_since(t0);
  if (!(res.residual_norm <= o.tolerance)) {
    res.status = numerics::Status::NotConverged;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "CG stopped at relative residual %.3g > tolerance %.3g after %d iterations",
                  res.residual_norm, o.tolerance, it);
    res.message = buf;
  }
  return res;
}

RidgeFit train_direct(const Dataset& d, double lambda, bool min_norm) {
  check_well_posed(d, lambda, min_norm);
  const auto t0 = Clock::now();
  const int D = d.n.D, N = d.n.N;
  if (D > 40) throw InvalidParams("dim", "the dense direct solve is for D <= 40");
  const int P = D * D;
  MatrixXd Phi(N, P);  // Phi(n, i + D j) = x_i s_j  (column-major vec of x s^T)
  for (int j = 0; j < D; ++j)
    for (int i = 0; i < D; ++i) Phi.col(i + D * j) = d.X.col(i).cwiseProduct(d.Sm.col(j));
  VectorXd g;
  RidgeFit res;
  if (lambda == 0.0 && min_norm) {
    Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(Phi);
    g = cod.solve(d.y);
  } else {
    MatrixXd H = Phi.transpose() * Phi;
    H.diagonal().array() += lambda * d.n.M0;
    const VectorXd rhs = Phi.transpose() * d.y;
    if (!numerics::ldlt_solve(H, rhs, g)) {
      res.Gamma = MatrixXd::Constant(D, D, std::nan(""));
      res.status = numerics::Status::NumericalFailure;
      res.message = "dense normal equations: factorization failed";
      res.residual_norm = std::nan("");
      res.seconds = seconds_since(t0);
      return res;
    }
  }
  res.Gamma = Eigen::Map<MatrixXd>(g.data(), D, D);
  const MatrixXd B = normal_rhs(d);
  res.residual_norm = (B - apply_normal_operator(d, res.Gamma, lambda)).norm() / B.norm();
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace icl::verify::lowrank
