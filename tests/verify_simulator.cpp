// The finite-D simulator: solvers, exact error formula, sampling, reproducibility.
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/error.hpp"
#include "verify/lowrank/simulator.hpp"

using namespace icl::verify::lowrank;
using icl::theory::Params;

namespace {
Params base_params() {
  Params p;
  p.alpha = 2;
  p.tau = 2.25;
  p.kappa = 1.5;
  p.rho = 0.6;
  p.sigma = 0.3;
  return p;
}
double max_abs(const MatrixXd& a) { return a.cwiseAbs().maxCoeff(); }
}  // namespace

TEST_CASE("sizes follow the rounding conventions of spec section 1") {
  Params p = base_params();
  const Sizes n = sizes(p, 60);
  CHECK(n.D == 60);
  CHECK(n.r == 36);
  CHECK(n.M0 == 90);
  CHECK(n.N == 8100);
  CHECK(n.L == 120);
  CHECK(n.Lt == 120);
}

TEST_CASE("Haar subspace has orthonormal columns and task norms |w|^2/D ~ 1") {
  Rng rng(7);
  const MatrixXd A = haar_orthonormal(30, 12, rng);
  CHECK(max_abs(A.transpose() * A - MatrixXd::Identity(12, 12)) < 1e-12);
  Params p = base_params();
  Rng rng2(8);
  const Dataset d = generate(p, 40, rng2, Assignment::Random, Sampler::Factorized);
  const double mean_norm = d.W.colwise().squaredNorm().mean() / 40.0;
  CHECK(mean_norm == doctest::Approx(1.0).epsilon(0.1));
  // Tasks lie in span(A).
  CHECK(max_abs(d.W - d.A * (d.A.transpose() * d.W)) < 1e-10);
}

TEST_CASE("matrix-free PCG matches the dense direct solve of the D^2 x D^2 normal equations") {
  for (double lambda : {0.0, 0.05}) {
    for (Assignment as : {Assignment::Random, Assignment::Balanced}) {
      Params p = base_params();
      p.lambda = lambda;
      Rng rng(11);
      const Dataset d = generate(p, 10, rng, as, Sampler::Factorized);
      const TrainResult cg = train_cg(d, lambda, 1e-13, 5000);
      const TrainResult dir = train_direct(d, lambda);
      INFO("lambda = " << lambda << ", CG iterations " << cg.iterations);
      CHECK(cg.relative_residual < 1e-12);
      CHECK(dir.relative_residual < 1e-9);
      const double rel = (cg.Gamma - dir.Gamma).norm() / dir.Gamma.norm();
      CHECK(rel < 1e-9);
      // Optimality: the gradient of the sum loss vanishes at the direct solution.
      CHECK(training_loss(d, dir.Gamma, lambda) <=
            training_loss(d, dir.Gamma + 1e-4 * MatrixXd::Ones(10, 10), lambda));
    }
  }
}

TEST_CASE("lambda = 0 with N < D^2 is an error unless minimum norm is asked for") {
  Params p = base_params();
  p.tau = 0.6;  // N = 60 < 100
  Rng rng(3);
  const Dataset d = generate(p, 10, rng, Assignment::Random, Sampler::Factorized);
  CHECK_THROWS_AS(train_cg(d, 0.0, 1e-10, 1000), icl::InvalidParams);
  CHECK_THROWS_AS(train_direct(d, 0.0), icl::InvalidParams);
  SimOptions o10;
  o10.dim = 10;
  CHECK_THROWS_AS(LowRankSimulator(p, o10), icl::InvalidParams);
  // Minimum norm: unpreconditioned CG from zero equals the pseudo-inverse solution.
  const TrainResult cg = train_cg(d, 0.0, 1e-13, 20000, true);
  const TrainResult dir = train_direct(d, 0.0, true);
  CHECK((cg.Gamma - dir.Gamma).norm() / dir.Gamma.norm() < 1e-7);
  // It interpolates: zero training loss.
  CHECK(training_loss(d, dir.Gamma, 0.0) < 1e-16 * d.y.squaredNorm() + 1e-18);
}

TEST_CASE("exact finite-D error formula agrees with plain Monte Carlo on fresh sequences") {
  // E(w) = sigma_t^2 + |(I-G)w|^2/D + (1/L)[(|w|^2/D + sigma_t^2)|G|_F^2 + |Gw|^2/D]
  // (derivation: E s = w, Cov s = (D/L)[(|w|^2/D + sigma^2) I + w w^T/D] for x ~ N(0, I/D)).
  const int D = 12, Lt = 18;
  const double st = 0.4;
  Rng rng(99);
  MatrixXd G = 0.5 * MatrixXd::Identity(D, D) + 0.2 * MatrixXd::Random(D, D);
  VectorXd w = VectorXd::Random(D) * 1.5;
  const double exact = exact_error_task(G, w, Lt, st);
  for (Sampler s : {Sampler::Factorized, Sampler::Direct}) {
    const auto [mc, se] = monte_carlo_error(G, w, Lt, st, 200000, rng, s);
    INFO("exact " << exact << " MC " << mc << " +- " << se);
    CHECK(std::abs(mc - exact) < 4.5 * se);
    CHECK(se < 0.01 * exact);  // the test has power
  }
  // The averaged form with C = w w^T equals the single-task form.
  CHECK(exact_error(G, w * w.transpose(), Lt, st) == doctest::Approx(exact).epsilon(1e-13));
}

TEST_CASE("factorized and direct context samplers have the same moments") {
  const int D = 8, L = 10;
  const double sigma = 0.5;
  VectorXd w = VectorXd::LinSpaced(D, -1.0, 1.5);
  const MatrixXd cov_exact =
      (double(D) / L) * ((w.squaredNorm() / D + sigma * sigma) * MatrixXd::Identity(D, D) +
                         w * w.transpose() / D);
  for (Sampler smp : {Sampler::Factorized, Sampler::Direct}) {
    Rng rng(5);
    const int n = 200000;
    VectorXd mean = VectorXd::Zero(D);
    MatrixXd second = MatrixXd::Zero(D, D);
    double fourth = 0;
    for (int k = 0; k < n; ++k) {
      const VectorXd s = draw_context_estimate(w, L, sigma, rng, smp);
      mean += s;
      second += s * s.transpose();
      fourth += s.squaredNorm() * s.squaredNorm();
    }
    mean /= n;
    const MatrixXd cov = second / n - mean * mean.transpose();
    CHECK(max_abs(mean - w) < 0.02);
    CHECK(max_abs(cov - cov_exact) < 0.03 * cov_exact.diagonal().maxCoeff());
    // A fourth moment, compared across samplers by value (not only second moments).
    MESSAGE("sampler " << int(smp) << ": E|s|^4 = " << fourth / n);
    static double first_fourth = 0;
    if (smp == Sampler::Factorized) first_fourth = fourth / n;
    else CHECK(fourth / n == doctest::Approx(first_fourth).epsilon(0.02));
  }
}

TEST_CASE("same seed gives the same output, independent of the thread count") {
  Params p = base_params();
  p.lambda = 0.01;
  SimOptions o;
  o.dim = 12;
  o.seeds = 4;
  o.base_seed = 123;
  o.threads = 1;
  const Estimate a = LowRankSimulator(p, o).run();
  o.threads = 2;
  const Estimate b = LowRankSimulator(p, o).run();
  o.threads = 3;
  const Estimate c = LowRankSimulator(p, o).run();
  for (const char* name : {"error.tm", "error.idg", "error.odg", "order.q", "order.qbar"}) {
    CHECK(a.get(name).mean == b.get(name).mean);
    CHECK(a.get(name).sem == b.get(name).sem);
    CHECK(a.get(name).mean == c.get(name).mean);
  }
  o.base_seed = 124;
  const Estimate d = LowRankSimulator(p, o).run();
  CHECK(d.get("error.tm").mean != a.get("error.tm").mean);
}

TEST_CASE("packed (AVX2 when available) normal operator equals the Eigen products") {
  Params p = base_params();
  for (int D : {7, 12, 17}) {
    Rng rng(40 + D);
    const Dataset d = generate(p, D, rng, Assignment::Random, Sampler::Factorized);
    const MatrixXd G = MatrixXd::Random(D, D);
    const MatrixXd a = apply_normal_operator(d, G, 0.1, false);
    const MatrixXd b = apply_normal_operator(d, G, 0.1, true);
    CHECK(max_abs(a - b) < 1e-13 * max_abs(a));
  }
}

TEST_CASE("ill-posedness demo: gradient descent depends on its initialization in null(S)") {
  Params p = base_params();
  p.alpha = 20;  // nu small: null(S) directions are barely constrained
  p.kappa = 0.5;
  p.rho = 0.9;   // rank S = M0 < D
  const GdDemo few = gd_demo(p, 12, 5, {0.0, 2.0, 4.0}, 100, OdgKind::Isotropic);
  REQUIRE(few.runs.size() == 3);
  // From zero GD is near the minimum after 100 steps; the null(S) part depends on the start.
  CHECK(few.runs[0].loss < 1.5 * few.cg_loss);
  CHECK(few.runs[2].null_dist2 > 4 * few.runs[0].null_dist2);
  CHECK(few.null_spread > 0);
  // Far more steps: GD from zero approaches the unique (lambda = 0, tau > 1) minimizer.
  const GdDemo many = gd_demo(p, 12, 5, {0.0}, 20000, OdgKind::Isotropic);
  CHECK(many.runs[0].loss <= few.runs[0].loss);
  CHECK(many.runs[0].null_dist2 < few.runs[0].null_dist2);
}
