// The finite-D theory for a general task spectrum (docs/finite_dim.md §21.13-§21.16): the spectrum
// bias, the matrix path and the task sources against Monte Carlo of sampled task sets, and the
// Bayes-optimal baselines at finite D against the posterior trace. (The low-rank pieces:
// tests/theory_finite_dim.cpp.)
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <doctest/doctest.h>

#include "numerics/normal_sampler.hpp"
#include "numerics/seed.hpp"
#include "theory/bayes.hpp"
#include "theory/finite_dim.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/spectral_model.hpp"

#include "finite_dim_test_util.hpp"

using namespace icl::theory;

using icl_test::source;

// --- General task spectra (docs/finite_dim.md §21.13, §21.14) ------------------------------

namespace {

// The verify grid's general point (verify/lowrank/compare.cpp): eigenvalue a on 40% of the
// directions and a/5 on the rest.
Params general_point() {
  Params p;
  p.alpha = 2;
  p.tau = 2.25;
  p.kappa = 0.8;
  p.rho = 1;
  p.sigma = 0.3;
  p.lambda = 0.1;
  p.task_spectrum = low_rank_plus_complement_spectrum(0.4, 0.2);
  return p;
}

// Sampled task sets at dimension D: Sigma = diag(t) (the traces are invariant under the Haar
// rotation of docs/simulation.md §13.2), W = Sigma^{1/2} G, the columns rescaled to |w|^2 = D for
// fixed-norm tasks. `f` sees the eigenvalues of S, the Sigma-weight of each eigenvector and the
// list t; returns per-draw means and s.e. of its three outputs.
template <class F>
void sample_tasks(const std::vector<double>& t, int M0, bool fixed, int draws, std::uint64_t seed,
                  F f, double mean[3], double sem[3]) {
  std::mt19937_64 rng(icl::numerics::derive_seed(seed, "tasks"));
  icl::numerics::NormalSampler nd(rng);
  const int D = int(t.size());
  double s[3] = {}, s2[3] = {};
  for (int k = 0; k < draws; ++k) {
    Eigen::MatrixXd W(D, M0);
    for (int m = 0; m < M0; ++m) {
      for (int i = 0; i < D; ++i) W(i, m) = std::sqrt(t[i]) * nd();
      if (fixed) W.col(m) *= std::sqrt(double(D)) / W.col(m).norm();
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(W * W.transpose() / M0);
    const Eigen::ArrayXd ev = es.eigenvalues().cwiseMax(0.0).array();
    const Eigen::ArrayXd tw = (es.eigenvectors().array().square().colwise() *
                               Eigen::Map<const Eigen::ArrayXd>(t.data(), D)).colwise().sum().transpose();
    double out[3];
    f(ev, tw, out);
    for (int i = 0; i < 3; ++i) {
      s[i] += out[i];
      s2[i] += out[i] * out[i];
    }
  }
  for (int i = 0; i < 3; ++i) {
    mean[i] = s[i] / draws;
    sem[i] = std::sqrt((s2[i] / draws - mean[i] * mean[i]) / (draws - 1));
  }
}

std::vector<double> levels_at(const Params& p, int D) {
  std::vector<double> t;
  for (const auto& a : p.population_spectrum())
    for (long i = 0; i < std::lround(a.mass * D); ++i) t.push_back(a.position);
  REQUIRE(int(t.size()) == D);  // the test's spectra are exact at its D
  return t;
}

}  // namespace

TEST_CASE("finite_dim_general_spectrum_bias_matches_wishart_monte_carlo") {
  // D x (E tr(S - z)^{-1}/D - R01) and D x (E tr Sigma (S - z)^{-1}/D - T01) against the derived
  // biases, Gaussian and fixed-norm tasks, at D = 40 (1500 draws each), at the general point's
  // ratio and a second spectrum (power law) at kappa = 1.5. Tolerance 4 s.e. + 0.04 (the
  // O(1/D^2) rest: the same comparison at D = 80 moves by about 0.02).
  Params pl = general_point();
  pl.kappa = 1.5;
  pl.task_spectrum = power_law_spectrum(1.0, 4);
  int case_no = 0;
  for (const Params& p : {general_point(), pl}) {
    const int D = 40, M0 = int(std::lround(p.kappa * D));
    const SpectralModel model(p);
    const double z = p.kappa < 1 ? -0.3 : -0.2;
    const auto v = model.at(z, icl::numerics::MomentMethod::Exact);
    for (TaskLaw law : {TaskLaw::Gaussian, TaskLaw::FixedNorm}) {
      const ResolventBias b = task_spectrum_resolvent_bias(p, model, z, law);
      double mean[3], sem[3];
      sample_tasks(levels_at(p, D), M0, law == TaskLaw::FixedNorm, 1500, 7 + case_no++,
                   [&](const Eigen::ArrayXd& ev, const Eigen::ArrayXd& tw, double out[3]) {
                     out[0] = (1 / (ev - z)).mean();
                     out[1] = (tw / (ev - z)).mean();
                     out[2] = 0;
                   },
                   mean, sem);
      const double mR = D * (mean[0] - v.R(0, 1)), mT = D * (mean[1] - v.T(0, 1));
      const std::string what = law == TaskLaw::FixedNorm ? "fixed" : "gaussian";
      INFO("kappa " << p.kappa << " " << what << ": R01 "
                    << mR << " +- " << D * sem[0] << " vs " << b.R01 << "; T01 " << mT << " +- "
                    << D * sem[1] << " vs " << b.T01);
      CHECK(std::abs(mR - b.R01) <= 4 * D * sem[0] + 0.04);
      CHECK(std::abs(mT - b.T01) <= 4 * D * sem[1] + 0.04);
    }
  }
}

TEST_CASE("finite_dim_general_matrix_path_reproduces_the_saddle_map") {
  // docs/finite_dim.md §21.14: without corrections the integrals over the whole spectrum of S
  // (atom at 0 included) are the map of docs/model.md §4.2.
  Params pl = general_point();
  pl.kappa = 1.5;
  pl.task_spectrum = power_law_spectrum(1.0, 4);
  for (const Params& p : {general_point(), pl}) CHECK(detail::matrix_path_gap(p) < 1e-7);
}

TEST_CASE("finite_dim_low_rank_tasks_written_as_a_spectrum_give_the_low_rank_sources") {
  // The general routes (docs/finite_dim.md §21.13, §21.14) with Sigma = (1/rho) P_A given as a
  // spectrum against the low-rank routes (§21.4, §21.5: Bai-Silverstein minus the norm mixture;
  // integrals over the spectrum of S on span(A)): the same task_sampling and
  // context_quadratic_forms slopes, at kappa on both sides of rho.
  Params low;
  for (double kappa : {0.7, 1.5}) {
    low.kappa = kappa;
    Params gen = low;
    gen.task_spectrum = {{1 / low.rho, low.rho}, {0.0, 1 - low.rho}};
    FiniteDimOptions o;
    o.dim = 40;
    const FiniteDimResult a = solve_finite_dim(low, o), b = solve_finite_dim(gen, o);
    REQUIRE(a.converged());
    REQUIRE(b.converged());
    for (const char* name : {"task_sampling", "context_quadratic_forms"}) {
      const auto &sa = source(a, name).slope, &sb = source(b, name).slope;
      INFO(name << ", kappa " << kappa << ": " << sa.tm << " " << sa.idg << " " << sa.odg
                << " vs " << sb.tm << " " << sb.idg << " " << sb.odg);
      CHECK(sb.tm == doctest::Approx(sa.tm).epsilon(1e-5));
      CHECK(sb.idg == doctest::Approx(sa.idg).epsilon(1e-5));
      CHECK(sb.odg == doctest::Approx(sa.odg).epsilon(1e-5));
    }
  }
}

TEST_CASE("finite_dim_general_task_spectrum_sources_match_sampled_task_sets") {
  // At tau -> infinity only the spectrum of S carries finite-D effects of the tasks
  // (docs/finite_dim.md §21.13, §21.15): the predictor is Gamma = S (S + nu)^{-1}, and against
  // sampled task sets (the errors without the test-context term, as in
  // finite_dim_task_spectrum_sources_match_wishart_monte_carlo), D x (fixed-norm errors - the
  // limit) is task_sampling's slope and D x (Gaussian - fixed-norm errors) task_norms' (the
  // task-resolved theory with the tasks' energies per level of Sigma). D = 40, 2000 draws per
  // law (the same draws before and after the normalization; the s.e. of the difference ignores
  // their correlation); tolerance 4 s.e. + 0.02. An independent norm law misses IDG by 0.1 here.
  Params p = general_point();
  p.tau = 1e5;
  p.lambda = 0;
  const int D = 40, M0 = int(std::lround(p.kappa * D));
  FiniteDimOptions o;
  o.dim = D;
  const FiniteDimResult r = solve_finite_dim(p, o);
  REQUIRE(r.converged());
  const double nu = p.nu(), v = 1 / p.effective_alpha_test();
  auto errors = [&](const Eigen::ArrayXd& ev, const Eigen::ArrayXd& tw, double out[3]) {
    const Eigen::ArrayXd g = ev / (ev + nu);
    const double e2 = (g * g).mean();
    out[0] = ev.mean() - 2 * (g * ev).mean() + (g * g * ev).mean() + v * e2;
    out[1] = 1 - 2 * (g * tw).mean() + (g * g * tw).mean() + v * e2;
    out[2] = 1 - 2 * g.mean() + e2 + v * e2;
  };
  double mg[3], sg[3], mf[3], sf[3];
  sample_tasks(levels_at(p, D), M0, false, 2000, 5, errors, mg, sg);
  sample_tasks(levels_at(p, D), M0, true, 2000, 5, errors, mf, sf);
  const auto &s = source(r, "task_sampling").slope, &n = source(r, "task_norms").slope;
  const double pred_s[3] = {s.tm, s.idg, s.odg}, pred_n[3] = {n.tm, n.idg, n.odg};
  const auto& dec = r.limit.decomposition;
  const double lim[3] = {dec.tm.algo, dec.idg.algo, dec.odg.algo};
  for (int i = 0; i < 3; ++i) {
    const double meas_s = D * (mf[i] - lim[i]), se_s = D * sf[i];
    const double meas_n = D * (mg[i] - mf[i]), se_n = D * std::hypot(sg[i], sf[i]);
    INFO("protocol " << i << ": sampling " << meas_s << " +- " << se_s << " vs " << pred_s[i]
                     << "; norms " << meas_n << " +- " << se_n << " vs " << pred_n[i]);
    CHECK(std::abs(meas_s - pred_s[i]) <= 4 * se_s + 0.02);
    CHECK(std::abs(meas_n - pred_n[i]) <= 4 * se_n + 0.02);
  }
}

namespace {
// (1/n) E tr(diag(1/prior) + X^T X / s2)^{-1}, the Bayes posterior's trace per direction for
// the prior N(0, diag(prior)) and L examples with features X (L x n, entries N(0, 1/n)), by
// Monte Carlo: mean and s.e.
std::pair<double, double> posterior_trace_mc(const std::vector<double>& prior, int L, double s2,
                                             int draws, icl::numerics::NormalSampler& nd) {
  const int n = int(prior.size());
  double sum = 0, sum2 = 0;
  for (int k = 0; k < draws; ++k) {
    Eigen::MatrixXd X(L, n);
    for (int i = 0; i < L; ++i)
      for (int j = 0; j < n; ++j) X(i, j) = nd() / std::sqrt(double(n));
    Eigen::MatrixXd M = X.transpose() * X / s2;
    for (int j = 0; j < n; ++j) M(j, j) += 1 / prior[j];
    const double v = M.inverse().trace() / n;
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / draws;
  return {mean, std::sqrt((sum2 / draws - mean * mean) / draws)};
}

}  // namespace

TEST_CASE("finite_dim_bayes_baselines_match_the_posterior_trace_by_monte_carlo") {
  // docs/finite_dim.md §21.16: sigma_t^2 + (1/r) E tr(I + U^T U / s2)^{-1}, U the L_t x r test
  // features of variance 1/r, sampled exactly at D = 20 (r = 18 for IDG, 20 for ODG, L_t = 20).
  // The O(1/D) term must carry most of the gap to the limit (measured: 93%, the rest O(1/D^2)).
  const Params p{.alpha = 2, .alpha_test = 1, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3,
                 .sigma_test = 0.3};
  FiniteDimOptions o;
  o.dim = 20;
  const FiniteDimResult r = solve_finite_dim(p, o);
  REQUIRE(r.converged());
  std::mt19937_64 rng(icl::numerics::derive_seed(20261203, "bayes"));
  icl::numerics::NormalSampler nd(rng);
  const double s2 = 0.09;
  const auto monte_carlo = [&](int dirs, int L, int draws, double& se) {
    const auto [mean, sem] = posterior_trace_mc(std::vector<double>(dirs, 1.0), L, s2, draws, nd);
    se = sem;
    return s2 + mean;
  };
  double se_idg = 0, se_odg = 0;
  const double idg = monte_carlo(18, 20, 3000, se_idg), odg = monte_carlo(20, 20, 3000, se_odg);
  INFO("IDG MC " << idg << " +- " << se_idg << ", finite-D " << r.bayes_optimal.idg << ", limit "
                 << r.limit.bayes_optimal.idg);
  INFO("ODG MC " << odg << " +- " << se_odg << ", finite-D " << r.bayes_optimal.odg << ", limit "
                 << r.limit.bayes_optimal.odg);
  CHECK(std::abs(idg - r.bayes_optimal.idg) <= 4 * se_idg + 0.0015);
  CHECK(std::abs(odg - r.bayes_optimal.odg) <= 4 * se_odg + 0.0015);
  CHECK(std::abs(idg - r.bayes_optimal.idg) < 0.3 * std::abs(idg - r.limit.bayes_optimal.idg));
  CHECK(std::abs(odg - r.bayes_optimal.odg) < 0.3 * std::abs(odg - r.limit.bayes_optimal.odg));
  // Noiseless test prompts: no correction (the null directions are counted exactly).
  Params clean = p;
  clean.sigma_test = 0;
  const FiniteDimResult c = solve_finite_dim(clean, o);
  CHECK(c.bayes_optimal.idg == c.limit.bayes_optimal.idg);
}

TEST_CASE("finite_dim_bayes_baseline_of_a_general_prior_matches_the_posterior_trace_by_monte_carlo") {
  // docs/finite_dim.md §21.16: with the prior N(0, Sigma) the baseline at D is sigma_t^2 +
  // (1/D) E tr(Sigma^{-1} + X^T X / s2)^{-1}, X the L_t x D test features of variance 1/D,
  // sampled exactly at D = 20 (L_t = 20). Two priors: the general-covariance point's two levels
  // (its IDG) and the shifted protocol's test levels of the paper's point (overlap 0.3, its
  // shift baseline). The O(1/D) term must carry most of the gap to the limit. And the general
  // route on the low-rank prior {1/rho on rho, 0} is the low-rank (Marchenko-Pastur) term.
  std::mt19937_64 rng(icl::numerics::derive_seed(20261203, "bayes-general"));
  icl::numerics::NormalSampler nd(rng);
  const int D = 20;
  const double s2 = 0.09, at = 1;
  const auto monte_carlo = [&](const std::vector<double>& eig, int draws, double& se) {
    const auto [mean, sem] = posterior_trace_mc(eig, D, s2, draws, nd);  // L_t = D
    se = sem;
    return s2 + mean;
  };
  // The D eigenvalues of a two-level prior (position, count).
  const auto eigenvalues = [&](double t1, int n1, double t2) {
    std::vector<double> e(D, t2);
    std::fill(e.begin(), e.begin() + n1, t1);
    return e;
  };
  struct Prior {
    std::vector<icl::numerics::Atom> atoms;
    std::vector<double> eig;
  };
  // The general point's levels (a on 40%, a/5 on the rest, mean 1) and the paper point's shift
  // (overlap 0.3 at rho = 0.9: 0.3/0.9 on 18 directions, 0.7/0.1 on 2).
  const double a = 1 / (0.4 + 0.6 / 5);
  const std::vector<Prior> priors = {
      {{{a, 0.4}, {a / 5, 0.6}}, eigenvalues(a, 8, a / 5)},
      {{{0.3 / 0.9, 0.9}, {0.7 / 0.1, 0.1}}, eigenvalues(0.3 / 0.9, 18, 0.7 / 0.1)}};
  for (const Prior& pr : priors) {
    const double limit = bayes_error_spectrum(pr.atoms, at, std::sqrt(s2));
    // The limit is s2 + (s2/alpha_t) T_{0,1}(-s2/alpha_t) of the features' sample covariance
    // (kappa = alpha_t): the route of the O(1/D) term against §17.3's closed form.
    Params features;
    features.task_spectrum = pr.atoms;
    features.kappa = at;
    const SpectralModel model(features);
    const double T01 = model.at(-s2 / at, icl::numerics::MomentMethod::Exact).T(0, 1);
    CHECK(s2 + (s2 / at) * T01 == doctest::Approx(limit).epsilon(1e-9));
    const double at_d = bayes_error_spectrum_at_dimension(pr.atoms, at, std::sqrt(s2), D);
    double se = 0;
    const double mc = monte_carlo(pr.eig, 3000, se);
    INFO("MC " << mc << " +- " << se << ", finite-D " << at_d << ", limit " << limit);
    CHECK(std::abs(mc - at_d) <= 4 * se + 0.0015);
    CHECK(std::abs(mc - at_d) < 0.3 * std::abs(mc - limit));
  }
  // The general route on the low-rank prior reproduces the low-rank term (two derivations).
  const Params p{.alpha = 2, .alpha_test = 1, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3,
                 .sigma_test = 0.3};
  const BayesOptimal low_rank = bayes_optimal_at_dimension(p, D);
  const double general = bayes_error_spectrum_at_dimension(p.population_spectrum(), 1, 0.3, D);
  CHECK(general == doctest::Approx(low_rank.idg).epsilon(1e-7));
  // Noiseless: exact 0 when L_t covers the prior's rank, else not derived.
  CHECK(bayes_error_spectrum_at_dimension(priors[0].atoms, 1.2, 0, D) == 0);
  CHECK(std::isnan(bayes_error_spectrum_at_dimension(priors[0].atoms, 0.5, 0, D)));
}
