// The Bayes-optimal baselines (docs/errors_phases.md §17) against a Monte Carlo of the exact
// posterior mean at finite D, their limits, and their meaning (no predictor beats them).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "numerics/error.hpp"
#include "numerics/normal_sampler.hpp"
#include "numerics/seed.hpp"
#include "numerics/statistics.hpp"
#include "theory/bayes.hpp"
#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"

using namespace icl::theory;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// One test prompt with L pairs: tasks w = sqrt(D/r) A v, v ~ N(0, I_r) (A Haar, D x r; r = D:
// the isotropic prior), tokens x ~ N(0, I_D / D), labels y = w.x + sigma eps. The exact
// posterior mean of w given the prompt (A known), and the error of its prediction on a fresh
// query with label noise: sigma^2 + |w - w_hat|^2 / D (the query average in closed form).
double posterior_mean_error(int D, int r, int L, double sigma, std::mt19937_64& rng) {
  icl::numerics::NormalSampler normal(rng);
  auto gaussian = [&](int rows, int cols, double scale) {
    MatrixXd M(rows, cols);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) M(i, j) = scale * normal();
    return M;
  };
  MatrixXd A = MatrixXd::Identity(D, D);
  if (r < D) A = Eigen::HouseholderQR<MatrixXd>(gaussian(D, r, 1.0)).householderQ() * MatrixXd::Identity(D, r);
  const double a = std::sqrt(double(D) / r);
  const VectorXd v = gaussian(r, 1, 1.0);
  const VectorXd w = a * A * v;
  const MatrixXd X = gaussian(L, D, 1.0 / std::sqrt(double(D)));
  const VectorXd y = X * w + sigma * gaussian(L, 1, 1.0);
  const MatrixXd U = a * X * A;  // L x r features of v
  VectorXd v_hat;
  if (sigma > 0) {
    // prior N(0, I_r): posterior mean (U^T U + sigma^2 I)^{-1} U^T y
    v_hat = (U.transpose() * U + sigma * sigma * MatrixXd::Identity(r, r)).ldlt().solve(U.transpose() * y);
  } else {
    // noiseless: the prior conditioned on U v = y has mean U^+ y (minimum norm)
    v_hat = U.completeOrthogonalDecomposition().solve(y);
  }
  const VectorXd w_hat = a * A * v_hat;
  return sigma * sigma + (w - w_hat).squaredNorm() / D;
}

}  // namespace

TEST_CASE("Bayes-optimal errors: closed form vs Monte Carlo of the exact posterior mean at D = 200") {
  struct Case {
    int D, r, L;
    double sigma;
  };
  // IDG (r < D) and ODG (r = D); both sides of r = L; noisy and noiseless.
  const Case cases[] = {{200, 100, 200, 0.3}, {200, 160, 100, 0.5}, {200, 80, 50, 0.0},
                        {200, 200, 400, 0.3}, {200, 200, 100, 0.0}, {200, 200, 150, 1.0}};
  std::uint64_t k = 0;
  for (const auto& c : cases) {
    std::mt19937_64 rng(icl::numerics::derive_seed(7, "bayes-mc", k++));
    std::vector<double> errs;
    for (int draw = 0; draw < 200; ++draw) errs.push_back(posterior_mean_error(c.D, c.r, c.L, c.sigma, rng));
    const auto mc = icl::numerics::estimate(errs);
    const double theory = bayes_error(double(c.r) / c.L, c.sigma);
    INFO("D " << c.D << " r " << c.r << " L " << c.L << " sigma " << c.sigma << ": MC " << mc.mean
              << " +- " << mc.sem << ", closed form " << theory);
    // 4 s.e. for the statistics, 1/r for the O(1/r) finite-size bias of a linear spectral
    // statistic of the r x r Wishart matrix (the closed form is the D -> infinity value).
    CHECK(std::abs(mc.mean - theory) <= 4 * mc.sem + 1.0 / c.r);
  }
}

TEST_CASE("Bayes-optimal errors: limits") {
  // No noise: the fraction of undetermined directions, max(0, 1 - L/r).
  CHECK(bayes_error(2.0, 0.0) == doctest::Approx(0.5));
  CHECK(bayes_error(0.5, 0.0) == 0.0);
  CHECK(bayes_error(2.0, 1e-6) == doctest::Approx(0.5).epsilon(1e-5));
  CHECK(bayes_error(0.5, 1e-6) == doctest::Approx(0.0).epsilon(1e-6));
  // Much more data than directions: only the label noise is left.
  CHECK(bayes_error(1e-6, 0.3) == doctest::Approx(0.09).epsilon(1e-4));
  // Overwhelming noise: the prior's variance (1 per direction) plus the noise.
  CHECK(bayes_error(0.5, 1e3) - 1e6 == doctest::Approx(1.0).epsilon(1e-3));
  // Monotone: more examples (smaller ratio) never hurt.
  double prev = 2.0;
  for (double c : {4.0, 2.0, 1.0, 0.5, 0.25}) {
    const double e = bayes_error(c, 0.4);
    CHECK(e < prev);
    prev = e;
  }
}

TEST_CASE("Bayes-optimal errors: linear attention never beats them, and rho = 1 makes IDG = ODG") {
  for (const Params& p : {Params{.alpha = 2, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3},
                          Params{.alpha = 2, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3,
                                 .sigma_test = 0.3},
                          Params{.alpha = 4, .alpha_test = 1, .tau = 3, .kappa = 0.5, .rho = 0.3,
                                 .sigma = 0.1, .lambda = 0.1},
                          Params{.alpha = 1, .tau = 0.6, .kappa = 2, .rho = 0.5, .sigma = 0.5,
                                 .lambda = 0.05}}) {
    const Solution s = solve(p);
    REQUIRE(s.converged());
    INFO("rho " << p.rho << " alpha " << p.alpha);
    CHECK(s.bayes_optimal.idg < s.error.idg);
    CHECK(s.bayes_optimal.odg < s.error.odg);
    CHECK(s.bayes_optimal.idg <= s.bayes_optimal.odg);  // knowing the subspace helps
  }
  const BayesOptimal full = bayes_optimal(Params{.rho = 1.0, .sigma_test = 0.2});
  CHECK(full.idg == doctest::Approx(full.odg).epsilon(1e-14));
}

TEST_CASE("Bayes-optimal errors: in the solve JSON, for general spectra and shifted test tasks") {
  const Solution s = solve(Params{});
  const auto j = to_json(s);
  REQUIRE(j.contains("bayes_optimal"));
  CHECK(j["bayes_optimal"]["idg"].get<double>() == s.bayes_optimal.idg);
  CHECK_FALSE(j["bayes_optimal"].contains("shift"));
  Params g;
  g.task_spectrum = power_law_spectrum(1.0, 5);
  const BayesOptimal b = bayes_optimal(g);
  CHECK(b.idg == bayes_error_spectrum(g.task_spectrum, g.effective_alpha_test(), g.sigma_test));
  CHECK(b.odg == doctest::Approx(bayes_error(1.0 / g.effective_alpha_test(), g.sigma_test)));
  CHECK(std::isnan(b.shift));
  // Shifted test tasks: the prior is C_test; C = 1 is the IDG prior, C = rho the isotropic one.
  Params shifted{.sigma_test = 0.4};
  shifted.test_overlap = 1.0;
  const BayesOptimal b1 = bayes_optimal(shifted);
  CHECK(b1.shift == doctest::Approx(b1.idg).epsilon(1e-10));
  shifted.test_overlap = shifted.rho;
  const BayesOptimal brho = bayes_optimal(shifted);
  CHECK(brho.shift == doctest::Approx(brho.odg).epsilon(1e-10));
  CHECK(to_json(solve(shifted))["bayes_optimal"]["shift"].get<double>() == brho.shift);
  CHECK_THROWS_AS(bayes_optimal(Params{.rho = 1.5}), icl::InvalidParams);
}

TEST_CASE("Bayes-optimal errors: the effective-ridge equation reproduces the Marchenko-Pastur form") {
  // Two routes to the low-rank and isotropic baselines (docs/errors_phases.md §17.1 vs §17.3): the
  // Stieltjes transform of the MP law against the scalar root kappa (alpha_t - F(kappa)) = s2.
  for (double rho : {0.3, 0.9, 1.0}) {
    std::vector<icl::numerics::Atom> prior{{1.0 / rho, rho}};
    if (rho < 1) prior.push_back({0.0, 1.0 - rho});
    for (double at : {0.2, 0.5, 1.0, 2.5})
      for (double sigma : {0.0, 0.1, 0.5, 2.0}) {
        CAPTURE(rho);
        CAPTURE(at);
        CAPTURE(sigma);
        const double mp = bayes_error(rho / at, sigma);
        const double root = bayes_error_spectrum(prior, at, sigma);
        CHECK(std::abs(root - mp) <= 1e-10 * std::max(1.0, mp));
      }
  }
}

namespace {

// The exact posterior mean for the prior N(0, Sigma), Sigma = U diag(t) U^T with Haar U:
// w_hat = Sigma X^T (X Sigma X^T + sigma^2 I)^{-1} y (sigma = 0: the pseudo-inverse, the
// minimum-Sigma^{-1}-norm interpolant), error sigma^2 + |w - w_hat|^2 / D.
double general_posterior_error(const Eigen::VectorXd& t, int L, double sigma, std::mt19937_64& rng) {
  const int D = int(t.size());
  icl::numerics::NormalSampler normal(rng);
  MatrixXd G(D, D);
  for (int j = 0; j < D; ++j)
    for (int i = 0; i < D; ++i) G(i, j) = normal();
  const MatrixXd U = Eigen::HouseholderQR<MatrixXd>(G).householderQ();
  const MatrixXd Sigma = U * t.asDiagonal() * U.transpose();
  VectorXd g(D);
  for (int i = 0; i < D; ++i) g(i) = normal();
  const VectorXd w = U * (t.cwiseSqrt().asDiagonal() * g);
  MatrixXd X(L, D);
  for (int j = 0; j < D; ++j)
    for (int i = 0; i < L; ++i) X(i, j) = normal() / std::sqrt(double(D));
  VectorXd y = X * w;
  for (int i = 0; i < L; ++i) y(i) += sigma * normal();
  const MatrixXd K = X * Sigma * X.transpose() + sigma * sigma * MatrixXd::Identity(L, L);
  const VectorXd w_hat = Sigma * X.transpose() * K.completeOrthogonalDecomposition().solve(y);
  return sigma * sigma + (w - w_hat).squaredNorm() / D;
}

}  // namespace

TEST_CASE("Bayes-optimal errors: general prior, closed form vs Monte Carlo of the posterior mean at D = 200") {
  const int D = 200;
  struct Case {
    std::vector<icl::numerics::Atom> spectrum;
    double alpha_test, sigma;
  };
  const std::vector<Case> cases = {{power_law_spectrum(1.0, 4), 0.5, 0.3},
                                   {power_law_spectrum(2.0, 5), 1.5, 0.0},
                                   {power_law_spectrum(1.0, 4), 0.4, 0.0},
                                   {low_rank_plus_complement_spectrum(0.4, 0.2), 0.8, 0.5}};
  std::uint64_t k = 0;
  for (const auto& c : cases) {
    // The D eigenvalues: level k on round(w_k D) directions (every w_k D is an integer here).
    Eigen::VectorXd t(D);
    int i = 0;
    for (const auto& a : c.spectrum)
      for (int n = 0; n < int(std::lround(a.mass * D)); ++n) t(i++) = a.position;
    REQUIRE(i == D);
    std::mt19937_64 rng(icl::numerics::derive_seed(7, "bayes-general-mc", k++));
    std::vector<double> errs;
    const int L = int(std::lround(c.alpha_test * D));
    for (int draw = 0; draw < 60; ++draw) errs.push_back(general_posterior_error(t, L, c.sigma, rng));
    const auto mc = icl::numerics::estimate(errs);
    const double theory = bayes_error_spectrum(c.spectrum, c.alpha_test, c.sigma);
    INFO("alpha_test " << c.alpha_test << " sigma " << c.sigma << ": MC " << mc.mean << " +- "
                       << mc.sem << ", closed form " << theory);
    // 4 s.e. plus 5/D for the O(1/D) finite-size bias of the linear spectral statistic
    // (as for the low-rank case above, with the smallest level's D w_k = 40 directions).
    CHECK(std::abs(mc.mean - theory) <= 4 * mc.sem + 5.0 / D);
  }
}
