// The simulator with a general task covariance (Params::task_spectrum, beyond the paper):
// finite-D spectrum, task sampling, the generalized IDG quantities, and agreement with the
// theory (icl::theory::solve, generalized Marchenko-Pastur + deterministic equivalent).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <Eigen/Eigenvalues>

#include "numerics/error.hpp"
#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/gd_demo.hpp"
#include "verify/lowrank/simulator.hpp"

using namespace icl::verify::lowrank;
using icl::theory::low_rank_plus_complement_spectrum;
using icl::theory::Params;
using icl::theory::power_law_spectrum;

namespace {

Params general_params(std::vector<icl::numerics::Atom> spectrum, double kappa, double lambda) {
  Params p;
  p.alpha = 2;
  p.tau = 2.25;
  p.kappa = kappa;
  p.sigma = 0.3;
  p.lambda = lambda;
  p.task_spectrum = std::move(spectrum);
  return p;
}

double max_abs(const MatrixXd& a) { return a.cwiseAbs().maxCoeff(); }

}  // namespace

TEST_CASE("finite-D task spectrum: rounded multiplicities, largest group adjusted, mean 1") {
  Params p = general_params(power_law_spectrum(1.0, 4), 1.5, 0);
  // D = 20: 5 entries per level, exactly the population spectrum.
  const VectorXd t20 = task_eigenvalues(p, 20);
  REQUIRE(t20.size() == 20);
  CHECK(t20.mean() == doctest::Approx(1.0).epsilon(1e-14));
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      CHECK(t20(5 * k + j) == doctest::Approx(p.task_spectrum[k].position).epsilon(1e-14));
  // D = 30: round(7.5) = 8 each (32), the first of the tied largest groups gives back 2 -> 6,8,8,8,
  // then the mean is rescaled to 1.
  const VectorXd t30 = task_eigenvalues(p, 30);
  CHECK(t30.mean() == doctest::Approx(1.0).epsilon(1e-14));
  const double top = t30(0);
  int n_top = 0;
  for (int i = 0; i < 30; ++i) n_top += (t30(i) == top);
  CHECK(n_top == 6);
  CHECK(t30(6) / top == doctest::Approx(0.5).epsilon(1e-14));  // ratios are kept
  // Low rank + complement: zero-free, r counts the non-zero entries.
  Params q = general_params(low_rank_plus_complement_spectrum(0.4, 0.0), 1.5, 0);
  CHECK(sizes(q, 25).r == 10);
  CHECK(sizes(general_params(low_rank_plus_complement_spectrum(0.4, 0.2), 1.5, 0), 25).r == 25);
  Params empty;
  CHECK_THROWS_AS(task_eigenvalues(empty, 10), icl::InvalidParams);
}

TEST_CASE("general-spectrum tasks: Sigma = U diag(t) U^T, w = Sigma^{1/2} g") {
  Params p = general_params(power_law_spectrum(1.0, 4), 1.5, 0);
  Rng rng(17);
  const Dataset d = generate(p, 24, rng, Sampler::Factorized);
  REQUIRE(d.general);
  CHECK(d.A.size() == 0);
  CHECK(max_abs(d.Sigma_half * d.Sigma_half - d.Sigma) < 1e-12);
  CHECK(max_abs(d.Sigma - d.Sigma.transpose()) < 1e-13);
  CHECK(d.Sigma.trace() / 24 == doctest::Approx(1.0).epsilon(1e-13));
  Eigen::SelfAdjointEigenSolver<MatrixXd> es(d.Sigma);
  VectorXd t = task_eigenvalues(p, 24);
  std::sort(t.data(), t.data() + t.size());
  CHECK(max_abs(es.eigenvalues() - t) < 1e-12);
  CHECK(max_abs(d.task_covariance() - d.Sigma) == 0.0);
  // The second moment of many tasks drawn the same way approaches Sigma.
  Params many = p;
  many.kappa = 400;  // M0 = 9600 tasks
  Rng rng2(18);
  const Dataset dm = generate(many, 24, rng2, Sampler::Factorized, {.assignment = Assignment::Balanced});
  CHECK(max_abs(dm.S() - dm.Sigma) < 0.15);
  CHECK(dm.W.colwise().squaredNorm().mean() / 24 == doctest::Approx(1.0).epsilon(0.02));
}

TEST_CASE("general spectrum: IDG error and m0, q0 are averages over w ~ N(0, Sigma)") {
  Params p = general_params(low_rank_plus_complement_spectrum(0.4, 0.2), 1.5, 0.1);
  SimOptions o;
  o.dim = 10;
  const SeedMeasurement v = run_seed(p, o, 5);
  REQUIRE(v.status == icl::numerics::Status::Converged);
  auto get = [&](const std::string& name) {
    if (name == "error.idg") return v.error.idg;
    if (name == "order.m0") return v.order.m0;
    if (name == "order.q0") return v.order.q0;
    if (name == "order.qbar") return v.order.qbar;
    FAIL("missing " << name);
    return 0.0;
  };
  // Rebuild the seed's data and Gamma the same way run_seed does.
  Rng rng(5);
  const Dataset d = generate(p, 10, rng, o.sampler, o.switches);
  const MatrixXd G = train_cg(d, p.lambda, o.cg()).Gamma;
  const double D = 10;
  CHECK(get("order.m0") == doctest::Approx((G * d.Sigma).trace() / D).epsilon(1e-12));
  CHECK(get("order.q0") ==
        doctest::Approx((G * d.Sigma * G.transpose()).trace() / D).epsilon(1e-12));
  CHECK(get("error.idg") == doctest::Approx(exact_error(G, d.Sigma, d.n.Lt, 0.0)).epsilon(1e-12));
  // The IDG error in terms of m0, q0, qbar (docs/errors_phases.md §7, exact at finite D with tr
  // Sigma = D).
  const double Lt = d.n.Lt;
  CHECK(get("error.idg") ==
        doctest::Approx(1.0 - 2 * get("order.m0") + get("order.q0") +
                        (D * get("order.qbar") + get("order.q0")) / Lt)
            .epsilon(1e-12));
  // Monte Carlo over fresh tasks w ~ N(0, Sigma): the exact error is linear in w w^T.
  Rng rng3(6);
  std::normal_distribution<double> nd;
  const int n = 40000;
  double sum = 0, sum2 = 0;
  VectorXd g(10);
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < 10; ++i) g(i) = nd(rng3);
    const double e = exact_error_task(G, d.Sigma_half * g, d.n.Lt, 0.0);
    sum += e;
    sum2 += e * e;
  }
  const double mean = sum / n, se = std::sqrt((sum2 / n - mean * mean) / (n - 1));
  CHECK(std::abs(mean - get("error.idg")) < 4 * se);
}

TEST_CASE("general spectrum: subspace ODG is rejected, isotropic ODG and prompts work") {
  Params p = general_params(power_law_spectrum(1.0, 4), 1.5, 0.1);
  SimOptions o;
  o.dim = 8;
  o.seeds = 2;
  o.odg = OdgKind::Subspace;
  CHECK_THROWS_AS(LowRankSimulator(p, o), icl::InvalidParams);
  CHECK_THROWS_AS(run_seed(p, o, 1), icl::InvalidParams);
  GdDemoOptions g;
  g.dim = 8;
  g.init_scales = {0.0};
  g.steps = 5;
  g.odg = OdgKind::Subspace;
  CHECK_THROWS_AS(run(p, g), icl::InvalidParams);
  o.odg = OdgKind::Isotropic;
  o.theory = TheoryRef{-0.6, 0.3, 0.545};
  o.prediction_prompts = 50;
  const SimulationResult e = LowRankSimulator(p, o).run();
  REQUIRE(e.converged());
  REQUIRE(e.distribution);
  CHECK(std::isfinite((*e.distribution)[1].var_ratio.mean));
  REQUIRE(e.decomposition);
  CHECK(std::isfinite(e.decomposition->protocol.idg.algo.mean));
  CHECK(e.error.odg.mean > 0);
}

// Theory vs small-D simulation for general task covariances, with the colleague's rule of
// tests/verify_theory_vs_sim.cpp: the 1/D extrapolation (extrapolate_inverse_d via
// verify_point) must land within 3 se + 3% (+ 1e-3) of the theory. The dims are chosen so that
// round(w_k D) = w_k D for every level (power law with 4 levels: multiples of 4; rho = 0.4:
// multiples of 5): the finite-D spectrum is then the population one at every D, and the
// extrapolation is not disturbed by the non-smooth (in D) rounding of the multiplicities.
TEST_CASE("small-D simulation agrees with the theory for general task covariances") {
  struct Case {
    std::string name;
    std::vector<icl::numerics::Atom> spectrum;
    std::vector<int> dims;
  };
  const std::vector<Case> cases = {
      {"power law 1/k, 4 levels", power_law_spectrum(1.0, 4), {20, 28, 36}},
      {"low rank 0.4 + complement 0.2", low_rank_plus_complement_spectrum(0.4, 0.2), {20, 30, 40}},
  };
  const std::vector<std::string> required = {"error.tm", "error.idg", "error.odg", "order.m0",
                                             "order.q0"};
  for (const auto& c : cases)
    for (double kappa : {0.8, 1.5})
      for (double lambda : {0.0, 0.1}) {
        const Params p = general_params(c.spectrum, kappa, lambda);
        std::ostringstream label;
        label << c.name << ", kappa " << kappa << ", lambda " << lambda;
        VerifyOptions o;
        o.dims = c.dims;
        o.seeds = {96, 48, 24};
        o.k_se = 3.0;
        o.rel_tol = 0.03;
        const PointResult r = verify_point(GridPoint{label.str(), p}, o);
        INFO(label.str());
        REQUIRE(r.theory.converged());
        for (const auto& row : r.rows) {
          if (!row.enforced) continue;
          std::ostringstream line;
          line << label.str() << " | " << row.quantity << ": theory " << row.theory;
          for (const auto& d : row.dims) line << ", D" << d.dim << " " << d.mean << "+-" << d.sem;
          line << ", extrapolated " << row.extrapolated.value << " +- " << row.extrapolated.se
               << " (" << 100 * row.rel_dev << "%, tol " << row.tolerance << ")";
          MESSAGE(line.str());
          bool is_required = false;
          for (const auto& q : required) is_required = is_required || q == row.quantity;
          INFO(line.str());
          if (is_required) CHECK(row.passed());
        }
      }
}
