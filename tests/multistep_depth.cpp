// Depth as preconditioned gradient descent (theory/depth.hpp, verify/multistep/depth_simulator.hpp,
// docs/multistep_depth.md): the exact polynomial against quadrature over the Marchenko-Pastur
// density with its atom, the global minimum against a dense scan, the per-layer envelope, the
// noiseless identity with the tau -> infinity test-time iteration, and the simulator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/error.hpp"
#include "numerics/spectral_integral.hpp"
#include "numerics/spectral_measure.hpp"
#include "theory/depth.hpp"
#include "verify/multistep/depth_simulator.hpp"

using namespace icl;
using theory::DepthParams;

namespace {

// The two integrals of e(g) by adaptive quadrature over MP(ratio 1/alpha) (density + atom).
theory::DepthTerms quadrature_terms(double alpha, int L, double g) {
  const numerics::MarchenkoPastur mp(1.0 / alpha);
  const auto bias = numerics::integrate(mp, [&](double s) { return std::pow(1 - g * s, 2 * L); });
  // [1 - (1 - g s)^L]^2 / s = s Q(s)^2, Q = g sum_{k<L} (1 - g s)^k: finite at the atom s = 0.
  const auto noise = numerics::integrate(mp, [&](double s) {
    double q = 0, u = 1;
    for (int k = 0; k < L; ++k, u *= 1 - g * s) q += u;
    return s * g * g * q * q;
  });
  return {bias.value, noise.value};
}

double horner(const std::vector<double>& c, double g) {
  double v = 0;
  for (auto it = c.rbegin(); it != c.rend(); ++it) v = v * g + *it;
  return v;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

}  // namespace

TEST_CASE("depth: Narayana moments of Marchenko-Pastur") {
  for (double lambda : {0.3, 1.0, 2.5}) {
    const numerics::MarchenkoPastur mp(lambda);
    for (int k = 0; k <= 3; ++k) CHECK(rel(theory::mp_moment(lambda, k), mp.raw_moment(k)) < 1e-14);
    for (int k = 4; k <= 8; ++k) {
      const double q = numerics::integrate(mp, [k](double s) { return std::pow(s, k); }).value;
      CHECK(rel(theory::mp_moment(lambda, k), q) < 1e-11);
    }
  }
  CHECK(theory::mp_moment(2.0, 4) == doctest::Approx(1 + 6 * 2 + 6 * 4 + 8).epsilon(1e-15));
}

TEST_CASE("depth: exact e(g) (Jacobi recursion and Narayana polynomial) vs quadrature, 1e-10") {
  // alpha < 1 (atom at 0), = 1 (hard edge), > 1; g inside and beyond the stable range 2/s_+.
  for (double alpha : {0.4, 1.0, 3.0})
    for (int L : {1, 2, 3, 5, 8})
      for (double gs : {0.1, 0.5, 0.9, 1.2}) {
        const double s_plus = std::pow(1 + std::sqrt(1 / alpha), 2), g = 2 * gs / s_plus;
        const theory::DepthTerms exact = theory::depth_terms(alpha, L, g);
        const theory::DepthTerms quad = quadrature_terms(alpha, L, g);
        CAPTURE(alpha);
        CAPTURE(L);
        CAPTURE(g);
        CHECK(rel(exact.bias, quad.bias) < 1e-10);
        CHECK(rel(exact.noise_integral, quad.noise_integral) < 1e-10);
        const DepthParams p{alpha, 0.7, L};
        const double e = theory::depth_error(p, g).error;
        CHECK(rel(e, 0.49 + quad.bias + 0.49 / alpha * quad.noise_integral) < 1e-10);
        // The monomial form in g (L <= 8: few digits lost), and per-layer steps all equal to g.
        CHECK(rel(horner(theory::depth_error_polynomial(p), g), e) < 1e-10);
        CHECK(rel(theory::depth_error_steps(p, std::vector<double>(L, g)), e) < 1e-12);
        // The slope against a central difference.
        const double h = 1e-5 * g;
        const double fd = (theory::depth_error(p, g + h).error - theory::depth_error(p, g - h).error) / (2 * h);
        CHECK(std::abs(theory::depth_error(p, g).slope - fd) < 1e-6 * (1 + std::abs(fd)));
      }
}

TEST_CASE("depth: the global minimum over g against a dense scan") {
  for (const DepthParams& p : {DepthParams{2, 0.1, 4}, DepthParams{0.5, 0.5, 8}, DepthParams{5, 0.1, 32},
                               DepthParams{1, 1, 3}, DepthParams{5, 0.5, 32}}) {
    const theory::DepthMinimum m = theory::minimize_shared_step(p);
    CAPTURE(p.alpha);
    CAPTURE(p.sigma);
    CAPTURE(p.layers);
    const int n = 40000;
    double best = 1e300, arg = 0;
    for (int i = 0; i <= n; ++i) {
      const double g = m.g_bound * i / n, e = theory::depth_error(p, g).error;
      if (e < best) best = e, arg = g;
    }
    CHECK(m.error <= best + 1e-13);
    CHECK(best - m.error < 1e-6 * best);
    CHECK(std::abs(arg - m.step) <= 2 * m.g_bound / n + 1e-9);
    CHECK(std::abs(theory::depth_error(p, m.step).slope) < 1e-8);
    // Beyond the bound, e >= e(0) = 1 + sigma^2 (spot checks).
    for (double f : {1.0, 1.5, 3.0})
      CHECK(theory::depth_error(p, f * m.g_bound).error >= 1 + p.sigma * p.sigma);
  }
}

TEST_CASE("depth: L = 1 closed form; per-layer envelope <= shared optimum, equal at L = 1") {
  for (double alpha : {0.5, 2.0})
    for (double sigma : {0.0, 0.3, 1.0}) {
      const theory::DepthResult r1 = theory::run({alpha, sigma, 1});
      // e(g) = sigma^2 + 1 - 2 g + g^2 (1 + (1 + sigma^2) / alpha): g* = 1 / (1 + (1 + sigma^2)/alpha)
      const double gstar = 1 / (1 + (1 + sigma * sigma) / alpha);
      CHECK(rel(r1.step_opt, gstar) < 1e-10);
      CHECK(rel(r1.error, sigma * sigma + 1 - gstar) < 1e-12);
      CHECK(rel(r1.per_layer_error, r1.error) < 1e-12);
      CHECK(r1.per_layer_realizable);
      CHECK(rel(r1.per_layer_steps.at(0), gstar) < 1e-10);
      for (int L : {2, 4, 8, 16}) {
        const theory::DepthResult r = theory::run({alpha, sigma, L});
        CHECK(r.per_layer_error <= r.error * (1 + 1e-12));
        CHECK(r.error_by_depth.size() == std::size_t(L));
        CHECK(r.error_by_depth.back() == r.error);
        // More layers never hurt: the optimal error is non-increasing in depth.
        for (int l = 1; l < L; ++l) CHECK(r.error_by_depth[l] <= r.error_by_depth[l - 1] * (1 + 1e-12));
      }
    }
}

TEST_CASE("depth: per-layer steps, when real, reproduce the envelope; complex with noise") {
  int realizable = 0, complex_cases = 0;
  for (const DepthParams& p : {DepthParams{2, 0.0, 6}, DepthParams{0.5, 0.0, 6}, DepthParams{2, 0.1, 4},
                               DepthParams{2, 1.0, 4}, DepthParams{1, 0.5, 8}}) {
    const theory::DepthResult r = theory::run(p);
    CAPTURE(p.alpha);
    CAPTURE(p.sigma);
    CAPTURE(p.layers);
    // The envelope by the moment matrices against the product form of its roots, realizable or
    // not (a complex pair (1 - s/z)(1 - s/conj z) is a real quadratic: checked by quadrature).
    const numerics::MarchenkoPastur mp(1 / p.alpha);
    const auto P = [&](double s) {
      double v = 1;
      for (std::size_t i = 0; i < r.per_layer_roots_real.size(); ++i) {
        const double a = r.per_layer_roots_real[i], b = r.per_layer_roots_imag[i];
        if (b < 0) continue;  // the pair once
        v *= b > 0 ? 1 - 2 * a * s / (a * a + b * b) + s * s / (a * a + b * b) : 1 - s / a;
      }
      return v;
    };
    const double k = p.sigma * p.sigma / p.alpha;
    const double q = numerics::integrate(mp, [&](double s) {
                       const double v = P(s);
                       return v * v + (s > 0 ? k * (1 - v) * (1 - v) / s : 0.0);
                     }).value;
    CHECK(rel(p.sigma * p.sigma + q, r.per_layer_error) < 1e-8);
    if (r.per_layer_realizable) {
      ++realizable;
      CHECK(rel(theory::depth_error_steps(p, r.per_layer_steps), r.per_layer_error) < 1e-9);
    } else {
      ++complex_cases;
      CHECK(std::any_of(r.per_layer_steps.begin(), r.per_layer_steps.end(),
                        [](double g) { return std::isnan(g); }));
    }
    if (p.sigma == 0) CHECK(r.per_layer_realizable);  // sigma = 0: orthogonal-polynomial roots, real
  }
  CHECK(realizable >= 3);
  CHECK(complex_cases >= 1);
}

TEST_CASE("depth: noiseless identity with the tau -> infinity test-time iteration; optimal step 1/c") {
  // At sigma = 0 and g = 1/c, c = 1 + 1/alpha, the depth-L error is int (1 - s/c)^{2L} dMP, the
  // test-time iteration's error at tau -> infinity after L steps (theory/cot.hpp). And the optimal
  // shared step is 1/c at every depth: s dMP(s) is a semicircle centred at c, so
  // e'(1/c) = -2L int s (1 - s/c)^{2L-1} dMP = 0 (docs/multistep_depth.md §6).
  for (double alpha : {0.3, 1.0, 2.0, 6.0})
    for (int L : {1, 2, 3, 7, 20}) {
      const double c = 1 + 1 / alpha;
      const numerics::MarchenkoPastur mp(1 / alpha);
      const double tti =
          numerics::integrate(mp, [&](double s) { return std::pow(1 - s / c, 2 * L); }).value;
      const theory::DepthResult r = theory::run({alpha, 0.0, L});
      CAPTURE(alpha);
      CAPTURE(L);
      CHECK(rel(r.error_at_one_over_c, tti) < 1e-10);
      CHECK(rel(r.step_opt, 1 / c) < 1e-9);
      CHECK(rel(r.error, tti) < 1e-12);
      CHECK(r.local_minima == 1);
    }
  // Deep and alpha < 1: the error is the atom's floor 1 - alpha plus ~1e-30; the minimization
  // compares the excess over the floor, so it still finds 1/c (it did not when comparing e).
  const theory::DepthResult deep = theory::run({0.2, 0.0, 100}, {8, false, 1e-7});
  CHECK(rel(deep.step_opt, 1 / 6.0) < 1e-9);
  CHECK(deep.error == doctest::Approx(0.8).epsilon(1e-15));
}

TEST_CASE("depth: validation names the field") {
  const auto field = [](auto f) {
    try {
      f();
    } catch (const InvalidParams& e) {
      return e.field();
    }
    return std::string("none");
  };
  CHECK(field([] { theory::run({0.0, 0.1, 4}); }) == "alpha");
  CHECK(field([] { theory::run({2.0, -1, 4}); }) == "sigma");
  CHECK(field([] { theory::run({2.0, NAN, 4}); }) == "sigma");
  CHECK(field([] { theory::run({2.0, 0.1, 0}); }) == "layers");
  CHECK(field([] { theory::run({2.0, 0.1, theory::kMaxDepthLayers + 1}); }) == "layers");
  verify::multistep::DepthSimOptions o;
  o.dim = 1;
  CHECK(field([&] { verify::multistep::simulate({}, 0.5, o); }) == "dim");
  o = {};
  o.seeds = 1;
  CHECK(field([&] { verify::multistep::simulate({}, 0.5, o); }) == "seeds");
  o = {};
  o.threads = 0;
  CHECK(field([&] { verify::multistep::simulate({}, 0.5, o); }) == "threads");
  CHECK(field([&] { verify::multistep::simulate({}, NAN, {}); }) == "step");
}

TEST_CASE("depth simulator: conditional estimator vs theory at D = 100 and 200 (1/D bias removed)") {
  // The conditional estimator's mean at finite D is the theory + b/D + O(1/D^2) (real Wishart:
  // E (1/D) tr f(S) has a 1/D correction), and its s.e. is itself O(1/D) per sample, so the raw
  // comparison fails at any D once the samples are many (measured: z ~ 7-12 at 150 samples). The
  // check: the Richardson extrapolation 2 m(200) - m(100) within 4 of its s.e. (the O(1/D^2)
  // remainder, ~ 0.2 b/D^2 by the two sizes' biases, is below it), and the bias D (m(D) - theory)
  // of order 1 (measured 0.15-0.21).
  for (const DepthParams& p : {DepthParams{2, 0.5, 4}, DepthParams{0.5, 0.3, 3}}) {
    const theory::DepthResult th = theory::run(p);
    verify::multistep::DepthSimOptions o;
    o.seeds = 150;
    o.threads = 2;
    o.dim = 100;
    const auto s1 = verify::multistep::simulate(p, th.step_opt, o);
    o.dim = 200;
    const auto s2 = verify::multistep::simulate(p, th.step_opt, o);
    REQUIRE(s1.converged());
    REQUIRE(s2.converged());
    const double extrap = 2 * s2.error.mean - s1.error.mean;
    const double se = std::hypot(2 * s2.error.sem, s1.error.sem);
    const double z = (extrap - th.error) / se;
    const double b1 = 100 * (s1.error.mean - th.error), b2 = 200 * (s2.error.mean - th.error);
    const double z1 = (s1.error.mean - th.error) / s1.error.sem;
    const double z2 = (s2.error.mean - th.error) / s2.error.sem;
    MESSAGE("alpha " << p.alpha << " sigma " << p.sigma << " L " << p.layers << ": theory "
                     << th.error << ", D=100 " << s1.error.mean << " +- " << s1.error.sem
                     << ", D=200 " << s2.error.mean << " +- " << s2.error.sem << ", extrapolated z = "
                     << z << " (raw z " << z1 << " / " << z2 << "), D x bias " << b1 << " / " << b2);
    CHECK(std::abs(z) < 4);
    CHECK(std::abs(b1) < 1);
    CHECK(std::abs(b2) < 1);
  }
}

TEST_CASE("depth simulator: the literal recursion agrees with the conditional estimator (D = 40)") {
  // Same X per sample (same seed); the literal estimator also averages over one w and one noise
  // draw per X. sigma = 1 so that the noise term is large: a wrong sigma^2/alpha normalization
  // (by a factor 2) would be many s.e. away.
  const DepthParams p{1.5, 1.0, 3};
  const theory::DepthResult th = theory::run(p);
  verify::multistep::DepthSimOptions o;
  o.dim = 40;
  o.seeds = 2000;
  o.threads = 2;
  const auto cond = verify::multistep::simulate(p, th.step_opt, o);
  o.estimator = verify::multistep::DepthEstimator::Literal;
  const auto lit = verify::multistep::simulate(p, th.step_opt, o);
  std::vector<double> diff(cond.per_sample.size());
  for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = lit.per_sample[k] - cond.per_sample[k];
  const numerics::Estimate d = numerics::estimate(diff);
  const double noise = p.sigma * p.sigma / p.alpha *
                       theory::depth_terms(p.alpha, p.layers, th.step_opt).noise_integral;
  MESSAGE("literal - conditional = " << d.mean << " +- " << d.sem << " (z " << d.mean / d.sem
                                     << "); the noise term " << noise);
  CHECK(std::abs(d.mean) < 4 * d.sem);
  CHECK(4 * d.sem < 0.25 * noise);  // the check resolves the noise term's normalization
}

TEST_CASE("depth simulator: the same result for any thread count") {
  const DepthParams p{2, 0.3, 5};
  for (auto est : {verify::multistep::DepthEstimator::Conditional, verify::multistep::DepthEstimator::Literal}) {
    verify::multistep::DepthSimOptions o;
    o.dim = 30;
    o.seeds = 9;
    o.estimator = est;
    o.threads = 1;
    const auto a = verify::multistep::simulate(p, 0.5, o);
    o.threads = 3;
    const auto b = verify::multistep::simulate(p, 0.5, o);
    CHECK(a.per_sample == b.per_sample);
    CHECK(a.error.mean == b.error.mean);
    o.seed += 1;
    const auto c = verify::multistep::simulate(p, 0.5, o);
    CHECK(c.per_sample != a.per_sample);
  }
}
