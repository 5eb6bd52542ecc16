// The scalar parameters of a point as a scalar type T (double, or ceres::Jet carrying their
// derivative directions): the form in which the theory's formulas are written once and
// differentiated exactly (docs/sensitivity.md §22, theory/sensitivity.hpp). Internal to
// theory/. What is not a scalar parameter (a task spectrum, explicit test levels, whether
// alpha_test follows alpha) stays in the Params it was made from.
#pragma once
#include <vector>

#include <ceres/jet.h>

#include "theory/params.hpp"

namespace icl::theory {

// The value of a scalar, without its derivatives.
inline double scalar_value(double x) { return x; }
template <typename S, int N>
double scalar_value(const ceres::Jet<S, N>& x) {
  return scalar_value(x.a);
}

template <class T>
struct ScalarParams {
  const Params* base = nullptr;  // the point: spectrum, test levels, flags
  T alpha, alpha_test, tau, kappa, rho, sigma, sigma_test, lambda, test_overlap;

  T nu() const { return (1.0 + sigma * sigma) / alpha; }
  T effective_alpha_test() const { return alpha_test; }  // already the effective one
  // The shifted protocol's test eigenvalue per population level, as Params::test_eigenvalues():
  // explicit test_levels are constants; from test_overlap C: {C/rho, (1 - C)/(1 - rho)}, {1}
  // at rho = 1.
  std::vector<T> test_eigenvalues() const {
    std::vector<T> out;
    if (!base->test_levels.empty()) {
      for (double l : base->test_levels) out.push_back(T(l));
    } else if (base->test_overlap) {
      if (base->rho == 1) return {T(1.0)};
      out = {test_overlap / rho, (1.0 - test_overlap) / (1.0 - rho)};
    }
    return out;
  }
};

// The parameters of p as values (no derivatives).
template <class T>
ScalarParams<T> scalar_params(const Params& p) {
  ScalarParams<T> s;
  s.base = &p;
  s.alpha = T(p.alpha);
  s.alpha_test = T(p.effective_alpha_test());
  s.tau = T(p.tau);
  s.kappa = T(p.kappa);
  s.rho = T(p.rho);
  s.sigma = T(p.sigma);
  s.sigma_test = T(p.sigma_test);
  s.lambda = T(p.lambda);
  s.test_overlap = T(p.test_overlap.value_or(0.0));
  return s;
}

}  // namespace icl::theory
