// Exact derivatives through the fixed point (docs/sensitivity.md §22). For a converged root x*
// of F(x, theta) = 0, dx*/dtheta = -F_x^{-1} F_theta (implicit function theorem); the outputs
// follow by the chain rule. Both Jacobians are exact: the residual, the spectral values and the
// observables are written once for ceres::Jet (theory/saddle_map.hpp, spectral_lift.hpp,
// observables.hpp, bayes_formulas.hpp), F_theta includes the parameters' effect through the
// Marchenko-Pastur law (the lifted Stieltjes transform), and nothing is a finite difference.
// This is also the one place where Jacobians of the saddle map are formed and solved: the
// finite-D theory's linear response (docs/finite_dim.md §21.2) uses it.
#pragma once
#include <string>
#include <vector>

#include <Eigen/Core>

#include "theory/gradient.hpp"
#include "theory/lowrank.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

// A linear solve whose condition number exceeds this is refused (NaN values, NumericalFailure).
inline constexpr double kMaxGradientCondition = 1e12;

// The parameters a gradient at p has, in Params::names() order: alpha alpha_test tau gamma
// kappa rho sigma sigma_test lambda test_overlap, less rho and test_overlap under a task
// spectrum, test_overlap unless p has one, and lambda for the ridgeless Letey/Lu method. Partial derivatives as the point was given:
// alpha moves alpha_test with it when alpha_test follows alpha (then alpha_test's own column
// moves it alone); kappa at fixed tau; gamma = tau / kappa at fixed kappa (kappa times the tau
// column).
std::vector<std::string> gradient_parameters(const Params& p, Method method = Method::Saddle);

// The gradient of s (theory/gradient.hpp): NaN values with status NotConverged when s did not
// converge; NumericalFailure with the condition number when the linear solve is singular or
// ill-conditioned (kMaxGradientCondition). Saddle and reduced solutions differentiate their
// own root (the same derivative, to rounding: a test), Letey its ridgeless root.
Gradient gradient(const Solution& s);

// The linear response through a root: dx = -J^{-1} B (J square, B one column per direction),
// with the condition number (1-norm estimate) of diag(1/scale) J diag(scale). ok is
// false, dx NaN, when J is singular or the condition number exceeds kMaxGradientCondition.
struct LinearResponse {
  Eigen::MatrixXd dx;
  double condition_number = 0;
  bool ok = false;
  std::string message;
};
LinearResponse linear_response(const Eigen::MatrixXd& J, const Eigen::MatrixXd& B,
                               const Eigen::VectorXd& scale);

// The exact Jacobian dF/dx of the saddle residual F = x - Phi(x) (docs/model.md §4.2) at x, with
// the closed-form spectral values of `model` (built for p): the J of linear_response for a
// saddle point. False when x is outside the map's domain (qh <= 0, z not below the spectrum).
bool saddle_jacobian(const Params& p, const SpectralModel& model, const Eigen::VectorXd& x,
                     Eigen::MatrixXd& J);

}  // namespace icl::theory
