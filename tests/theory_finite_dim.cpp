// The finite-D theory (docs/finite_dim.md §21): its pieces checked in isolation, each against an
// independent route (a closed form, a Monte Carlo of the random matrix it is about).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <doctest/doctest.h>

#include "numerics/error.hpp"
#include "numerics/normal_sampler.hpp"
#include "numerics/seed.hpp"
#include "theory/finite_dim.hpp"
#include "theory/finite_dim_channel.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/spectral_model.hpp"

#include "finite_dim_test_util.hpp"

using namespace icl::theory;

using icl_test::source;

TEST_CASE("finite_dim_switches_zero_exactly_their_sources") {
  Params p;
  FiniteDimOptions o;
  o.dim = 40;
  const FiniteDimResult all = solve_finite_dim(p, o);
  REQUIRE(all.converged());
  REQUIRE(all.sources.size() == finite_dim_source_names().size());
  double sum = all.second_order.odg;  // docs/finite_dim.md §21.18
  for (const auto& s : all.sources) {
    CHECK(std::isfinite(s.slope.tm));
    CHECK(s.correction.idg == doctest::Approx(s.slope.idg / 40).epsilon(1e-14));
    sum += s.correction.odg;
  }
  CHECK(all.error.odg - all.limit.error.odg == doctest::Approx(sum).epsilon(1e-12));
  o.switches = {.sphere_queries = true, .fixed_norm_tasks = true,
                .assignment = Assignment::Balanced, .gaussian_context = true};
  const FiniteDimResult off = solve_finite_dim(p, o);
  for (const char* name :
       {"query_norms", "task_norms", "task_counts", "context_mean", "context_scalars"}) {
    CHECK(source(off, name).slope.tm == 0.0);
    CHECK(source(off, name).slope.odg == 0.0);
    CHECK(source(all, name).slope.idg != 0.0);  // on by default: the switch matters
  }
  for (const char* name : {"test_context", "context_quadratic_forms", "task_sampling"})
    CHECK(source(off, name).slope.idg == source(all, name).slope.idg);
}

TEST_CASE("finite_dim_refuses_bad_dim_and_the_interpolation_peak") {
  Params p;
  p.tau = 2.25;
  FiniteDimOptions o;
  o.dim = 1;
  CHECK_THROWS_AS(solve_finite_dim(p, o), icl::InvalidParams);
  // tau = 1.01 at D = 2: N = round(4.04) = 4 = D^2, the peak of the minimum-norm branch.
  p.tau = 1.01;
  o.dim = 2;
  try {
    solve_finite_dim(p, o);
    FAIL("the interpolation peak was not refused");
  } catch (const icl::InvalidParams& e) {
    CHECK(e.field() == "tau");
  }
}

TEST_CASE("finite_dim_ridgeless_branch_is_the_ridge_prediction_as_lambda_goes_to_zero") {
  // docs/finite_dim.md §21.10: the slopes are extrapolated from lambda >= 1.25e-4 (at tau = 0.6
  // the agreement settles there), so the ridge prediction at lambda = 1e-5, not used, is an
  // independent check of the extrapolation: its slopes differ from the limit's by about
  // lambda * 145 = 1.5e-3 (measured: the ridge slopes are linear in lambda below 5e-4).
  const Params p{.alpha = 2, .tau = 0.6, .kappa = 1.5, .rho = 0.9, .sigma = 0.3, .lambda = 0};
  FiniteDimOptions o;
  o.dim = 30;
  const FiniteDimResult r = solve_finite_dim(p, o);
  REQUIRE(r.converged());
  CHECK(r.message.find("ridgeless branch") != std::string::npos);
  // The limit is Letey/Lu's ridgeless solution at the sizes of D.
  SolveOptions letey;
  letey.method = Method::Letey;
  const Solution l = solve(at_dimension(p, 30), letey);
  CHECK(r.limit.error.idg == l.error.idg);
  Params ridge = p;
  ridge.lambda = 1e-5;
  const FiniteDimResult near = solve_finite_dim(ridge, o);
  REQUIRE(near.converged());
  for (std::size_t k = 0; k < r.sources.size(); ++k) {
    INFO(r.sources[k].name);
    CHECK(r.sources[k].slope.tm == doctest::Approx(near.sources[k].slope.tm).epsilon(2e-3));
    CHECK(r.sources[k].slope.idg == doctest::Approx(near.sources[k].slope.idg).epsilon(2e-3));
  }
  CHECK(r.slope.odg == doctest::Approx(near.slope.odg).epsilon(1e-3));
  CHECK(r.slope.odg != doctest::Approx(near.slope.odg).epsilon(1e-5));  // lambda still matters
  CHECK(r.error.tm ==
        doctest::Approx(l.error.tm + r.slope.tm / 30 + r.second_order.tm).epsilon(1e-14));
  // Closer to the interpolation peak the slopes grow (docs/finite_dim.md §21.10).
  Params peak = p;
  peak.tau = 0.9;
  const FiniteDimResult rp = solve_finite_dim(peak, o);
  REQUIRE(rp.converged());
  CHECK(rp.slope.idg > 4 * r.slope.idg);
}

TEST_CASE("finite_dim_sizes_are_the_simulators_integers") {
  const Params p{.alpha = 1.5, .alpha_test = 1.0, .tau = 0.83, .kappa = 0.4, .rho = 0.8};
  const Params s = at_dimension(p, 33);
  CHECK(s.rho == 26.0 / 33);    // round(26.4)
  CHECK(s.kappa == 13.0 / 33);  // round(13.2)
  CHECK(s.alpha == 50.0 / 33);  // round(49.5) = 50
  CHECK(s.alpha_test == 1.0);
  CHECK(s.tau == 904.0 / (33.0 * 33.0));  // round(903.87)
}

TEST_CASE("finite_dim_test_context_is_q_over_alpha_test") {
  // docs/finite_dim.md §21.3: exact, (1/L_t) tr(Gamma C Gamma^T)/D with the limit's q_P.
  const Params p{.alpha_test = 4, .sigma_test = 0.2, .lambda = 0.05};
  const FiniteDimResult r = solve_finite_dim(p, {.dim = 50});
  REQUIRE(r.converged());
  const auto& s = source(r, "test_context");
  const auto& ord = r.limit.order;
  CHECK(s.slope.tm == doctest::Approx(ord.q / 4).epsilon(1e-7));
  CHECK(s.slope.idg == doctest::Approx(ord.q0 / 4).epsilon(1e-7));
  CHECK(s.slope.odg == doctest::Approx(ord.qbar / 4).epsilon(1e-7));
}

TEST_CASE("finite_dim_matrix_path_reproduces_the_saddle_map") {
  // The integral form of the order parameters (used by the context's quadratic forms) equals
  // the resolvent-moment form at the root (quadrature tolerance 1e-13; the root solve 1e-10).
  Params p;
  CHECK(detail::matrix_path_gap(p) < 1e-9);
  p.kappa = 0.5;  // task-poor: an atom of S at 0 inside span(A)
  p.lambda = 0.1;
  CHECK(detail::matrix_path_gap(p) < 1e-9);
}

TEST_CASE("finite_dim_channel_second_order_is_the_exact_law_at_second_order") {
  // docs/finite_dim.md §21.18. The exact law of a training sample's scalars at D = 20 (L = 40):
  // a = chi^2_D/D has mean 1, variance 2/D and third central moment 8/D^2; the scale along w
  // with its along-task noise, e = (G + sigma sqrt(G) z)/L, has mean 1 and variance
  // (2 + sigma^2)/L; the noise level b = (1/L) sum v_l^2 mean 1, variance 2/L, Cov(e, b) = 2/L
  // (E[g eps v^2] = 2 sigma r^2); the sample's S-weight shift -nu b/D has mean -nu/D.
  const Params p;  // alpha 2, sigma 0.3
  const double D = 20, L = p.alpha * D, s2 = p.sigma * p.sigma;
  const auto law = detail::exact_scalar_law(p, D, true, true, 8);
  double w = 0, ma = 0, me = 0, mb = 0, va = 0, ka = 0, ve = 0, vb = 0, ceb = 0, cae = 0, sh = 0;
  for (const auto& n : law) {
    const double a = n.xi[detail::A_NORM], e = n.xi[detail::ETA], b = n.xi[detail::B_NOISE];
    w += n.weight;
    ma += n.weight * a;
    me += n.weight * e;
    mb += n.weight * b;
    va += n.weight * a * a;
    ka += n.weight * a * a * a;
    ve += n.weight * e * e;
    vb += n.weight * b * b;
    ceb += n.weight * e * b;
    cae += n.weight * a * e;
    sh += n.weight * n.shift;
  }
  CHECK(w == doctest::Approx(1).epsilon(1e-12));
  for (double m : {ma, me, mb, cae}) CHECK(std::abs(m) < 1e-12);
  CHECK(va == doctest::Approx(2 / D).epsilon(1e-10));
  CHECK(ka == doctest::Approx(8 / (D * D)).epsilon(1e-10));
  CHECK(ve == doctest::Approx((2 + s2) / L).epsilon(1e-10));
  CHECK(vb == doctest::Approx(2 / L).epsilon(1e-10));
  CHECK(ceb == doctest::Approx(2 / L).epsilon(1e-10));
  CHECK(sh == doctest::Approx(-p.nu() / D).epsilon(1e-10));
  // The rest is O(1/D^2): D^2 second_order settles (D = 80, 160, 320: its differences fall by
  // about 2, the next order's 1/D), at the paper's point and at the ridgeless point (the ridge
  // path at lambda -> 0+); and it is in `error`.
  Params ridgeless = p;
  ridgeless.tau = 0.6;
  ridgeless.lambda = 0;
  for (const Params& q : {p, ridgeless}) {
    double d2[3];
    int k = 0;
    for (int dim : {80, 160, 320}) {
      const FiniteDimResult r = solve_finite_dim(q, {.dim = dim});
      REQUIRE(r.converged());
      d2[k++] = dim * dim * r.second_order.idg;
      double sum = r.limit.error.idg + r.second_order.idg;
      for (const auto& s : r.sources) sum += s.correction.idg;
      CHECK(r.error.idg == doctest::Approx(sum).epsilon(1e-13));
    }
    INFO("D^2 second_order (IDG) at D = 80, 160, 320: " << d2[0] << " " << d2[1] << " " << d2[2]);
    CHECK(std::abs(d2[2]) > 0.5);
    CHECK(std::abs(d2[1] - d2[2]) < 0.6 * std::abs(d2[0] - d2[1]) + 1e-3 * std::abs(d2[2]));
    CHECK(std::abs(d2[1] - d2[2]) < 0.02 * std::abs(d2[2]));
  }
}

TEST_CASE("finite_dim_query_norms_match_the_reduced_closed_form") {
  // An independent route to the query-norm source at lambda = 0, tau > 1 (docs/finite_dim.md
  // §21.4): there z = -nu and mh = qh stay, Q = kappa qh solves 1 = tau E[a/(Q + a)] and
  //   e = tau E[a (sigma^2 + a E0)/(Q + a)^2] / (1 - tau E[a^2/(Q + a)^2]),
  // E0 = (tau - 1) e_inf - sigma^2; q, qbar, q0 move with e only. The law of a: two points
  // 1 +- sqrt(2/n) (variance 2/n) at n = 1e5, so D (E(n) - E(inf)) is the slope to ~1e-5.
  const Params p{.tau = 3, .sigma = 0.4};
  const FiniteDimResult r = solve_finite_dim(p, {.dim = 60});
  REQUIRE(r.converged());
  const Solution& lim = r.limit;
  const double tau = p.tau, s2 = p.sigma * p.sigma, nu = p.nu(), v = 1 / p.alpha;
  const double e_inf = lim.e;
  const double E0 = (tau - 1) * e_inf - s2;
  const double n = 1e5, sd = std::sqrt(2 / n);
  const double as[2] = {1 - sd, 1 + sd};
  auto E = [&](auto f) { return 0.5 * (f(as[0]) + f(as[1])); };
  double lo = 1e-6, hi = 100;  // 1 = tau E[a/(Q + a)], decreasing in Q
  for (int it = 0; it < 200; ++it) {
    const double Q = 0.5 * (lo + hi);
    (tau * E([&](double a) { return a / (Q + a); }) > 1 ? lo : hi) = Q;
  }
  const double Q = 0.5 * (lo + hi);
  const double e = tau * E([&](double a) { return a * (s2 + a * E0) / ((Q + a) * (Q + a)); }) /
                   (1 - tau * E([&](double a) { return a * a / ((Q + a) * (Q + a)); }));
  const SpectralModel model(p);
  const SpectralValues sv = model.at(-nu, icl::numerics::MomentMethod::Exact);
  const double dq = sv.R(2, 2) + nu * sv.R(1, 2), dqbar = sv.R(1, 2) + nu * sv.R(0, 2);
  const double dq0 = sv.T(1, 2) + nu * sv.T(0, 2);
  const double de = n * (e - e_inf);
  const auto& s = source(r, "query_norms");
  CHECK(s.slope.tm == doctest::Approx(de * (dq + v * dqbar)).epsilon(1e-3));
  CHECK(s.slope.idg == doctest::Approx(de * (dq0 + v * dqbar)).epsilon(1e-3));
  CHECK(s.slope.odg == doctest::Approx(de * (dqbar + v * dqbar)).epsilon(1e-3));
}

namespace {
// Monte Carlo of the D -> infinity predictor Gamma = S (S + nu)^{-1} (tau -> infinity: no
// memorization) on sampled pretraining tasks at dimension D: the errors of docs/simulation.md §13.5
// without the test-context term (1/L_t) |Gamma w|^2/D, per draw for fixed-norm tasks and, on the
// same draws before normalization, Gaussian tasks. Means and s.e. of "fixed" and "gauss - fixed".
struct McErrors {
  double fixed[3] = {0, 0, 0}, fixed_sem[3] = {0, 0, 0};
  double diff[3] = {0, 0, 0}, diff_sem[3] = {0, 0, 0};
};
void errors_of(const Params& p, const Eigen::MatrixXd& A, const Eigen::MatrixXd& V, double out[3]) {
  const int D = int(A.rows()), r = int(A.cols()), M0 = int(V.cols());
  const double nu = p.nu(), v = 1 / p.effective_alpha_test();
  const Eigen::MatrixXd W = std::sqrt(double(D) / r) * A * V;
  const Eigen::MatrixXd S = W * W.transpose() / M0;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(S);
  const Eigen::ArrayXd ev = es.eigenvalues().cwiseMax(0.0).array();
  const Eigen::ArrayXd g = ev / (ev + nu);
  // Weight of each eigenvector in the IDG covariance (D/r) A A^T.
  const Eigen::ArrayXd wA =
      (es.eigenvectors().transpose() * A).rowwise().squaredNorm().array() * (double(D) / r);
  const double e2 = (g * g).sum() / D;
  out[0] = ev.sum() / D - 2 * (g * ev).sum() / D + (g * g * ev).sum() / D + v * e2;
  out[1] = 1 - 2 * (g * wA).sum() / D + (g * g * wA).sum() / D + v * e2;
  out[2] = 1 - 2 * g.sum() / D + e2 + v * e2;
}
McErrors algorithmic_errors_mc(const Params& p, int D, int draws, std::uint64_t seed) {
  std::mt19937_64 rng(icl::numerics::derive_seed(seed, "tasks"));
  icl::numerics::NormalSampler nd(rng);
  const int r = int(std::lround(p.rho * D)), M0 = int(std::lround(p.kappa * D));
  double sf[3] = {}, sf2[3] = {}, sd[3] = {}, sd2[3] = {};
  for (int k = 0; k < draws; ++k) {
    Eigen::MatrixXd G(D, r), V(r, M0);
    for (int i = 0; i < G.size(); ++i) G.data()[i] = nd();
    for (int i = 0; i < V.size(); ++i) V.data()[i] = nd();
    const Eigen::MatrixXd A = Eigen::HouseholderQR<Eigen::MatrixXd>(G).householderQ() *
                              Eigen::MatrixXd::Identity(D, r);
    double eg[3], ef[3];
    errors_of(p, A, V, eg);
    for (int m = 0; m < M0; ++m) V.col(m) *= std::sqrt(double(r)) / V.col(m).norm();
    errors_of(p, A, V, ef);
    for (int i = 0; i < 3; ++i) {
      sf[i] += ef[i];
      sf2[i] += ef[i] * ef[i];
      sd[i] += eg[i] - ef[i];
      sd2[i] += (eg[i] - ef[i]) * (eg[i] - ef[i]);
    }
  }
  McErrors out;
  for (int i = 0; i < 3; ++i) {
    out.fixed[i] = sf[i] / draws;
    out.fixed_sem[i] = std::sqrt((sf2[i] / draws - out.fixed[i] * out.fixed[i]) / (draws - 1));
    out.diff[i] = sd[i] / draws;
    out.diff_sem[i] = std::sqrt((sd2[i] / draws - out.diff[i] * out.diff[i]) / (draws - 1));
  }
  return out;
}
}  // namespace

TEST_CASE("finite_dim_task_spectrum_sources_match_wishart_monte_carlo") {
  // At tau -> infinity only the spectrum of S carries finite-D effects of the tasks
  // (docs/finite_dim.md §21.5): task_sampling is the bias of fixed-norm tasks, task_norms the
  // difference Gaussian - fixed norm (paired: the same draws). Checked against sampled task sets
  // at D = 40 (2000 draws): within 4 s.e. plus 0.02 for the O(1/D^2) curvature (the same
  // comparison at D = 30 and 60 moves by less than 0.005).
  Params p;
  p.tau = 1e5;  // memorization and the channel's O(1/D) terms are O(1/tau)
  const int D = 40, draws = 2000;
  FiniteDimOptions o;
  o.dim = D;
  const FiniteDimResult r = solve_finite_dim(p, o);
  REQUIRE(r.converged());
  const McErrors mc = algorithmic_errors_mc(p, D, draws, 11);
  const auto& sampling = source(r, "task_sampling").slope;
  const auto& norms = source(r, "task_norms").slope;
  const double pred_s[3] = {sampling.tm, sampling.idg, sampling.odg};
  const double pred_n[3] = {norms.tm, norms.idg, norms.odg};
  // The D -> infinity algorithmic errors (with the test-context term v qbar's algo piece, as the
  // Monte Carlo's v e2).
  const auto& dec = r.limit.decomposition;
  const double lim[3] = {dec.tm.algo, dec.idg.algo, dec.odg.algo};
  for (int i = 0; i < 3; ++i) {
    const double meas_s = D * (mc.fixed[i] - lim[i]), se_s = D * mc.fixed_sem[i];
    const double meas_n = D * mc.diff[i], se_n = D * mc.diff_sem[i];
    INFO("protocol " << i << ": sampling " << meas_s << " +- " << se_s << " vs " << pred_s[i]
                     << "; norms " << meas_n << " +- " << se_n << " vs " << pred_n[i]);
    CHECK(std::abs(meas_s - pred_s[i]) <= 4 * se_s + 0.02);
    CHECK(std::abs(meas_n - pred_n[i]) <= 4 * se_n + 0.02);
  }
}

namespace {
// docs/finite_dim.md §21.11: with a test covariance a Sigma + b I (a + b = 1) the shifted error is
// a IDG + b ODG at every D. The finite-D shift is computed source by source with C_test in place
// of Sigma, independently of that identity, so the identity checks it: the error, every source's
// slope (central differences: 1e-6 relative to |a| + |b|) and the algo part at D.
void check_affine_shift(const FiniteDimResult& r) {
  REQUIRE(r.converged());
  REQUIRE(r.test_shift.has_value());
  const auto w = shift_as_idg_odg(r.sized);
  REQUIRE(w.has_value());
  const double a = w->first, b = w->second, scale = std::abs(a) + std::abs(b);
  CHECK(r.test_shift->error == doctest::Approx(a * r.error.idg + b * r.error.odg).epsilon(1e-8));
  CHECK(r.test_shift->error != r.limit.test_shift->error);
  for (const FiniteDimSource& s : r.sources) {
    INFO(s.name);
    CHECK(std::abs(s.shift_slope - (a * s.slope.idg + b * s.slope.odg)) <= 1e-6 * scale);
  }
  CHECK(r.test_shift->decomposition.algo ==
        doctest::Approx(a * r.decomposition.idg.algo + b * r.decomposition.odg.algo).epsilon(1e-12));
}
}  // namespace

TEST_CASE("finite_dim_test_shift_is_the_idg_odg_combination_where_exact") {
  // The identity of §21.11 at the paper's point (overlap 0.3: a = -6, b = 7), on the ridgeless
  // branch (overlap 0.5), for one training level and for a two-level general spectrum; the
  // D -> infinity theory obeys it too (an independent check of the weights).
  Params p{.alpha = 2, .tau = 2.25, .kappa = 1.5, .rho = 0.9, .sigma = 0.3};
  p.test_overlap = 0.3;
  FiniteDimOptions o;
  o.dim = 40;
  const FiniteDimResult r = solve_finite_dim(p, o);
  check_affine_shift(r);
  const auto w = shift_as_idg_odg(r.sized);
  const double b = (1 - 0.3) / (1 - r.sized.rho);
  CHECK(w->second == doctest::Approx(b).epsilon(1e-14));
  CHECK(w->first + w->second == doctest::Approx(1).epsilon(1e-14));
  CHECK(r.limit.test_shift->error ==
        doctest::Approx(w->first * r.limit.error.idg + w->second * r.limit.error.odg).epsilon(1e-10));
  Params ridgeless = p;
  ridgeless.tau = 0.6;
  ridgeless.test_overlap = 0.5;
  o.dim = 30;
  check_affine_shift(solve_finite_dim(ridgeless, o));
  o.dim = 40;
  // One training level (rho = 1, where only C = 1 is valid): the shift is IDG = ODG.
  Params full = p;
  full.rho = 1;
  full.test_overlap = 1;
  const FiniteDimResult f = solve_finite_dim(full, o);
  REQUIRE(f.converged());
  CHECK(f.test_shift->error == doctest::Approx(f.error.idg).epsilon(1e-12));
  // A general spectrum with two levels: always affine.
  Params g{.alpha = 2, .tau = 2.25, .kappa = 0.8, .sigma = 0.3, .lambda = 0.1};
  g.task_spectrum = low_rank_plus_complement_spectrum(0.4, 0.2);
  g.test_levels = {0.5, 4.0 / 3.0};
  const FiniteDimResult two = solve_finite_dim(g, o);
  check_affine_shift(two);
  CHECK(two.limit.test_shift->error ==
        doctest::Approx(shift_as_idg_odg(two.sized)->first * two.limit.error.idg +
                        shift_as_idg_odg(two.sized)->second * two.limit.error.odg)
            .epsilon(1e-8));
}

TEST_CASE("finite_dim_general_spectrum_where_a_quadratic_form_trace_nearly_vanishes_converges") {
  // docs/finite_dim.md §21.8: at this point (the verify grid's general spectrum, tau 1.6578947,
  // D = 30) tr(S (Gbar - P) G)/D nearly vanishes; traced as one sign-changing integrand, GSL
  // could not reach its relative tolerance and the exception stopped a whole sweep.
  Params g{.alpha = 2, .tau = 1.6578947, .kappa = 0.8, .sigma = 0.3, .lambda = 0.1};
  g.task_spectrum = low_rank_plus_complement_spectrum(0.4, 0.2);
  FiniteDimOptions o;
  o.dim = 30;
  const FiniteDimResult r = solve_finite_dim(g, o);
  REQUIRE(r.converged());
  CHECK(r.error.idg > r.limit.error.idg);
  // Between its neighbours (the errors fall with tau).
  Params lo = g, hi = g;
  lo.tau = 1.6;
  hi.tau = 1.7;
  const double below = solve_finite_dim(hi, o).error.idg, above = solve_finite_dim(lo, o).error.idg;
  CHECK(r.error.idg < above);
  CHECK(r.error.idg > below);
}

TEST_CASE("finite_dim_test_shift_at_non_affine_levels_has_its_own_slopes") {
  // docs/finite_dim.md §21.11: three levels with test levels that are not an affine function of
  // the training ones. The shift is derived source by source (no IDG/ODG combination exists);
  // it is finite and nothing is omitted. The same three-level path with the test levels equal to
  // the training levels is IDG, with all levels 1 it is ODG, source by source; the simulation
  // judges the values (tests/verify_finite_dim.cpp).
  Params g{.alpha = 2, .tau = 1.5, .kappa = 1, .sigma = 0.3, .lambda = 0.05};
  g.task_spectrum = {{2.0, 0.3}, {1.0, 0.3}, {0.25, 0.4}};
  g.test_levels = {0.25, 0.5, 1.9375};  // mean 0.075 + 0.15 + 0.775 = 1
  REQUIRE_FALSE(shift_as_idg_odg(g).has_value());
  FiniteDimOptions o;
  o.dim = 20;
  const FiniteDimResult r = solve_finite_dim(g, o);
  REQUIRE(r.converged());
  REQUIRE(r.test_shift.has_value());
  CHECK(std::isfinite(r.test_shift->error));
  CHECK(std::isfinite(r.test_shift->decomposition.algo));
  CHECK(std::find(r.omitted.begin(), r.omitted.end(), "test_shift_levels") == r.omitted.end());
  double sum = 0;
  for (const FiniteDimSource& s : r.sources) {
    INFO(s.name);
    CHECK(std::isfinite(s.shift_slope));
    sum += s.shift_slope;
  }
  CHECK(r.test_shift->error == doctest::Approx(r.limit.test_shift->error + sum / 20).epsilon(1e-14));
  CHECK(r.test_shift->error > r.error.odg);  // mostly on the weakest level: above both
  // The endpoints through the same path: C_test = Sigma and C_test = I.
  for (const bool idg : {true, false}) {
    Params e = g;
    e.test_levels = idg ? std::vector<double>{2.0, 1.0, 0.25} : std::vector<double>{1.0, 1.0, 1.0};
    const FiniteDimResult f = solve_finite_dim(e, o);
    REQUIRE(f.converged());
    INFO("C_test = " << (idg ? "Sigma" : "I"));
    CHECK(f.test_shift->error == doctest::Approx(idg ? f.error.idg : f.error.odg).epsilon(1e-9));
    for (const FiniteDimSource& s : f.sources) {
      INFO(s.name);
      CHECK(s.shift_slope == doctest::Approx(idg ? s.slope.idg : s.slope.odg).epsilon(1e-6));
    }
  }
}
