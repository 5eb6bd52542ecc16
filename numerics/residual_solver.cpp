// Ceres wrapper for square residual systems, damped fixed point, bracketed scalar root.
#include "numerics/residual_solver.hpp"

#include <functional>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <boost/math/tools/toms748_solve.hpp>
#include <ceres/ceres.h>

#include "numerics/error.hpp"

namespace icl::numerics {

namespace {

bool all_finite(const Eigen::VectorXd& v) { return v.allFinite(); }

// Evaluates F (and J) for Ceres: one parameter block of size n, n residuals. Without an analytic
// Jacobian, central differences dF/dx_j ~ (F(x + h e_j) - F(x - h e_j)) / 2h with
// h = eps^{1/3} max(1, |x_j|) (balances truncation O(h^2) and rounding O(eps/h)); falls back to a
// one-sided difference when one side is outside the domain.
class SystemCost final : public ceres::CostFunction {
 public:
  explicit SystemCost(const ResidualSystem& s) : sys_(s) {
    set_num_residuals(s.size);
    mutable_parameter_block_sizes()->push_back(s.size);
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const int n = sys_.size;
    Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(parameters[0], n);
    Eigen::VectorXd F(n);
    const bool want_j = jacobians != nullptr && jacobians[0] != nullptr;
    if (want_j && sys_.jacobian) {
      Eigen::MatrixXd J(n, n);
      if (!sys_.jacobian(x, F, J) || !all_finite(F) || !J.allFinite()) return false;
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(jacobians[0], n, n) = J;
    } else {
      if (!sys_.residual(x, F) || !all_finite(F)) return false;
      if (want_j) {
        Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> J(jacobians[0], n, n);
        const double eps3 = std::cbrt(std::numeric_limits<double>::epsilon());
        Eigen::VectorXd Fp(n), Fm(n);
        for (int j = 0; j < n; ++j) {
          const double h = eps3 * std::max(1.0, std::abs(x[j]));
          Eigen::VectorXd xp = x, xm = x;
          xp[j] += h;
          xm[j] -= h;
          const bool okp = sys_.residual(xp, Fp) && all_finite(Fp);
          const bool okm = sys_.residual(xm, Fm) && all_finite(Fm);
          if (okp && okm)
            J.col(j) = (Fp - Fm) / (xp[j] - xm[j]);
          else if (okp)
            J.col(j) = (Fp - F) / (xp[j] - x[j]);
          else if (okm)
            J.col(j) = (F - Fm) / (x[j] - xm[j]);
          else
            return false;
        }
      }
    }
    Eigen::Map<Eigen::VectorXd>(residuals, n) = F;
    return true;
  }

 private:
  const ResidualSystem& sys_;
};

// |F(x)|_2, or NaN when F cannot be evaluated.
double residual_norm(const ResidualSystem& s, const Eigen::VectorXd& x) {
  Eigen::VectorXd F(s.size);
  if (!s.residual(x, F) || !all_finite(F)) return std::numeric_limits<double>::quiet_NaN();
  return F.norm();
}

}  // namespace

SolveResult solve_residual_system(const ResidualSystem& system, const Eigen::VectorXd& x0,
                                  const SolverOptions& options) {
  SolveResult out;
  out.x = x0;
  const int n = system.size;
  if (n <= 0 || x0.size() != n || !system.residual)
    throw InvalidParams("system", "size must be positive and match x0, residual must be set");
  const double r0 = residual_norm(system, x0);
  if (!std::isfinite(r0)) {
    out.status = Status::NumericalFailure;
    out.residual_norm = std::numeric_limits<double>::quiet_NaN();
    out.message = "residual cannot be evaluated at the starting point";
    return out;
  }
  if (r0 <= options.residual_tolerance) {
    out.status = Status::Converged;
    out.residual_norm = r0;
    out.message = "starting point is a root";
    return out;
  }
  std::vector<double> x(x0.data(), x0.data() + n);
  ceres::Problem::Options popt;
  popt.cost_function_ownership = ceres::TAKE_OWNERSHIP;
  ceres::Problem problem(popt);
  problem.AddResidualBlock(new SystemCost(system), nullptr, x.data());
  for (int i = 0; i < n; ++i) {
    if (options.lower_bounds.size() == n && std::isfinite(options.lower_bounds[i]))
      problem.SetParameterLowerBound(x.data(), i, options.lower_bounds[i]);
    if (options.upper_bounds.size() == n && std::isfinite(options.upper_bounds[i]))
      problem.SetParameterUpperBound(x.data(), i, options.upper_bounds[i]);
  }
  ceres::Solver::Options so;
  so.minimizer_type = ceres::TRUST_REGION;
  so.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  so.linear_solver_type = ceres::DENSE_QR;
  so.function_tolerance = options.function_tolerance;
  so.parameter_tolerance = options.parameter_tolerance;
  so.gradient_tolerance = options.gradient_tolerance;
  so.max_num_iterations = options.max_iterations;
  so.logging_type = ceres::SILENT;
  so.minimizer_progress_to_stdout = false;
  so.num_threads = 1;
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  out.x = Eigen::Map<Eigen::VectorXd>(x.data(), n);
  out.iterations = static_cast<int>(summary.iterations.size());
  out.message = summary.message;
  // Ceres minimises 1/2 |F|^2: accept only a true root, by our own evaluation.
  out.residual_norm = residual_norm(system, out.x);
  if (std::isfinite(out.residual_norm) && out.residual_norm <= options.residual_tolerance)
    out.status = Status::Converged;
  else
    out.status = Status::NotConverged;
  return out;
}

SolveResult damped_fixed_point(const FixedPointMap& map, const Eigen::VectorXd& x0,
                               const FixedPointOptions& options) {
  SolveResult out;
  out.x = x0;
  Eigen::VectorXd x = x0, G(x0.size());
  if (!map(x, G) || !G.allFinite()) {
    out.status = Status::NumericalFailure;
    out.residual_norm = std::numeric_limits<double>::quiet_NaN();
    out.message = "map cannot be evaluated at the starting point";
    return out;
  }
  for (int it = 0;; ++it) {
    const double r = (G - x).norm();
    out.x = x;
    out.residual_norm = r;
    out.iterations = it;
    if (r <= options.tolerance) {
      out.status = Status::Converged;
      out.message = "fixed point reached";
      return out;
    }
    if (it >= options.max_iterations) {
      out.status = Status::NotConverged;
      out.message = "maximum iterations reached";
      return out;
    }
    // x <- (1 - damping) x + damping G(x)
    Eigen::VectorXd xn = (1.0 - options.damping) * x + options.damping * G;
    Eigen::VectorXd Gn(x.size());
    if (!map(xn, Gn) || !Gn.allFinite()) {
      out.status = Status::NotConverged;
      out.message = "map failed at iteration " + std::to_string(it + 1);
      return out;
    }
    x = std::move(xn);
    G = std::move(Gn);
  }
}

ScalarRoot bracketed_root(const std::function<double(double)>& f, double lo, double hi,
                          const ScalarRootOptions& options) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi))
    throw InvalidParams("bracket", "need finite lo < hi");
  lo = std::max(lo, options.hard_lo);
  hi = std::min(hi, options.hard_hi);
  if (!(lo < hi)) throw InvalidParams("bracket", "empty after clamping to the hard limits");
  double flo = f(lo), fhi = f(hi);
  auto finite_or_throw = [&](double v, double at) {
    if (!std::isfinite(v)) throw NumericalError("bracketed_root: f not finite at " + std::to_string(at));
  };
  finite_or_throw(flo, lo);
  finite_or_throw(fhi, hi);
  if (flo == 0.0) return ScalarRoot{lo, 0.0, 0};
  if (fhi == 0.0) return ScalarRoot{hi, 0.0, 0};
  // Grow both ends by (growth - 1) times the width; near a hard limit move geometrically towards
  // it (distance divided by growth) so that it is approached but never passed.
  int steps = 0;
  while ((flo > 0.0) == (fhi > 0.0)) {
    if (steps++ >= options.max_growth_steps)
      throw NumericalError("bracketed_root: no sign change in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
    const double width = (hi - lo) * (options.growth - 1.0);
    const double nlo = lo - width, nhi = hi + width;
    const double glo = nlo > options.hard_lo ? nlo : options.hard_lo + (lo - options.hard_lo) / options.growth;
    const double ghi = nhi < options.hard_hi ? nhi : options.hard_hi - (options.hard_hi - hi) / options.growth;
    if (glo == lo && ghi == hi)
      throw NumericalError("bracketed_root: no sign change up to the hard limits");
    if (glo != lo) {
      lo = glo;
      flo = f(lo);
      finite_or_throw(flo, lo);
    }
    if (ghi != hi) {
      hi = ghi;
      fhi = f(hi);
      finite_or_throw(fhi, hi);
    }
    if (flo == 0.0) return ScalarRoot{lo, 0.0, 0};
    if (fhi == 0.0) return ScalarRoot{hi, 0.0, 0};
  }
  boost::uintmax_t iters = static_cast<boost::uintmax_t>(options.max_iterations);
  std::pair<double, double> br;
  try {
    // By reference: Boost copies the functor into every bracketing step (a std::function copy
    // allocates when its closure is larger than the small buffer).
    br = boost::math::tools::toms748_solve(std::cref(f), lo, hi, flo, fhi,
                                           boost::math::tools::eps_tolerance<double>(options.digits), iters);
  } catch (const std::exception& e) {
    throw NumericalError(std::string("bracketed_root: ") + e.what());
  }
  // Return the best of the final bracket ends and midpoint.
  ScalarRoot best{br.first, f(br.first), static_cast<int>(iters)};
  for (double x : {br.second, 0.5 * (br.first + br.second)}) {
    const double fx = f(x);
    if (std::abs(fx) < std::abs(best.f)) best = ScalarRoot{x, fx, static_cast<int>(iters)};
  }
  return best;
}

}  // namespace icl::numerics
