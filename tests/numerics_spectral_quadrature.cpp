// Quadrature engine vs closed forms: R_{k,j}(z) = int x^k (x - z)^{-j} dmu for MP over a grid.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "numerics/error.hpp"
#include "numerics/spectral_integral.hpp"
#include "numerics/spectral_measure.hpp"

using namespace icl::numerics;

namespace {
double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }
}  // namespace

TEST_CASE("MP: density integrates to the continuous mass, mean = scale") {
  for (double c : {0.05, 0.5, 0.99, 1.0, 1.01, 2.0, 20.0}) {
    MarchenkoPastur mp(c, 0.7);
    const Integral one = integrate(mp, [](double) { return 1.0; });
    CHECK(rel(one.value, 1.0) < 1e-12);
    CHECK(rel(integrate(mp, [](double x) { return x; }).value, 0.7) < 1e-12);
    CHECK(rel(integrate(mp, [](double x) { return x * x * x; }).value, mp.raw_moment(3)) < 1e-12);
  }
}

TEST_CASE("MP: R_{k,j} by quadrature vs closed form, 1e-10 relative over a grid of c and z") {
  double worst = 0.0;
  for (double c : {0.05, 0.2, 0.5, 0.99, 1.0, 1.01, 2.0, 5.0, 20.0}) {
    MarchenkoPastur mp(c, 1.0);
    std::vector<double> zs = {-50.0, -10.0, -1.0, -0.3, -0.05, -1e-2, -1e-3, -1e-4};
    const double a = mp.support()[0].lo;
    if (c < 1.0) {  // between 0 and the lower edge, and just below the edge
      zs.push_back(0.5 * a);
      zs.push_back(a * (1.0 - 1e-3));
    }
    for (double z : zs) {
      const ResolventMoments q = resolvent_moments(mp, z, MomentMethod::Quadrature);
      const ResolventMoments e = resolvent_moments(mp, z, MomentMethod::Exact);
      for (int k = 0; k <= 3; ++k)
        for (int j = 0; j <= 4; ++j) {
          const double r = rel(q(k, j), e(k, j));
          worst = std::max(worst, r);
          CHECK_MESSAGE(r < 1e-10, "c=" << c << " z=" << z << " k=" << k << " j=" << j << " quad="
                                        << q(k, j) << " exact=" << e(k, j));
          if (j == 2 && k == 1) {
            CHECK(rel(resolvent_moment_quadrature(mp, z, k, j), q(k, j)) < 1e-12);  // GSL QAWS vs shared Chebyshev rule
            CHECK(rel(resolvent_moment_exact(mp, z, k, j), e(k, j)) < 1e-15);
          }
        }
    }
  }
  MESSAGE("worst relative difference quadrature vs exact: " << worst);
}

TEST_CASE("PointMassMixture: low-rank spectrum (1-rho) delta_0 + rho MP(rho/kappa, 1/rho)") {
  const double rho = 0.9, kappa = 1.5;
  auto base = std::make_shared<MarchenkoPastur>(rho / kappa, 1.0 / rho);
  PointMassMixture mix(base, rho, {Atom{0.0, 1.0 - rho}});
  CHECK(mix.lower_edge() == 0.0);
  CHECK(rel(mix.raw_moment(1), 1.0) < 1e-15);  // tr S / D = 1
  for (double z : {-5.0, -0.3}) {
    // closed form of g(z) = -(1 - rho)/z + rho^2 m_1(rho z) (docs/spectral.md §6.2)
    const double g = (kappa + rho - kappa * rho * z - 2 -
                      std::sqrt(std::pow(kappa * rho * z + rho - kappa, 2) - 4 * kappa * rho * rho * z)) /
                     (2 * z);
    CHECK(rel(mix.stieltjes(z), g) < 1e-13);
    const ResolventMoments q = resolvent_moments(mix, z, MomentMethod::Quadrature);
    const ResolventMoments e = resolvent_moments(mix, z, MomentMethod::Exact);
    for (int k = 0; k <= 3; ++k)
      for (int j = 0; j <= 4; ++j) CHECK(rel(q(k, j), e(k, j)) < 1e-10);
  }
  CHECK_THROWS_AS(PointMassMixture(base, 0.5, {Atom{0.0, 0.4}}), icl::InvalidParams);
  CHECK_THROWS_AS(resolvent_moments(mix, 0.0), icl::InvalidParams);
}

TEST_CASE("integrate reports GSL failures as NumericalError") {
  MarchenkoPastur mp(0.5);
  QuadratureOptions o;
  o.max_subintervals = 3;
  o.rel_tolerance = 1e-14;
  // an integrand with a near-singularity inside the support cannot be resolved in 3 subintervals
  CHECK_THROWS_AS(integrate(mp, [](double x) { return 1.0 / (std::abs(x - 1.0) + 1e-12); }, o),
                  icl::NumericalError);
}

namespace {
// Ratios c = 1 -+ d for the near-hard-edge grid. 1 + 1e-16 rounds to 1.0 exactly (half an ulp
// above 1 is 1.1e-16), so the grid adds the neighbours of 1 on both sides explicitly.
std::vector<double> ratios_near_one() {
  std::vector<double> cs;
  for (double d : {1e-16, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6}) {
    cs.push_back(1.0 - d);
    cs.push_back(1.0 + d);
  }
  cs.push_back(std::nextafter(1.0, 0.0));
  cs.push_back(std::nextafter(1.0, 2.0));
  return cs;
}
}  // namespace

TEST_CASE("MP near the hard edge: c = 1 -+ 1e-16..1e-6, all R_{k,j} by both quadratures, 1e-10 relative") {
  // Lower edge a = s (1 - sqrt c)^2 ~ s (1-c)^2/4 down to ~3e-33: the density sqrt(x-a)/x has a
  // boundary layer of width a. Before the fix GSL reported "roundoff error" (z < 0) or returned a
  // wrong value (z in (0, a)).
  double worst_shared = 0.0, worst_single = 0.0;
  for (double c : ratios_near_one())
    for (double s : {1.0, 0.7}) {
      MarchenkoPastur mp(c, s);
      const double a = mp.support()[0].lo;
      std::vector<double> zs = {-50.0, -10.0, -1.0, -0.3, -0.05, -1e-2, -1e-3, -1e-4};
      if (c < 1.0 && a > 0.0) {  // between 0 and the lower edge: poles of 1/x and of (x-z)^{-j} a apart
        zs.push_back(0.5 * a);
        zs.push_back(a * (1.0 - 1e-3));
      }
      for (double z : zs) {
        const ResolventMoments e = resolvent_moments(mp, z, MomentMethod::Exact);
        ResolventMoments q;
        REQUIRE_NOTHROW(q = resolvent_moments(mp, z, MomentMethod::Quadrature));
        for (int k = 0; k <= 3; ++k)
          for (int j = 0; j <= 4; ++j) {
            const double r = rel(q(k, j), e(k, j));
            worst_shared = std::max(worst_shared, r);
            CHECK_MESSAGE(r < 1e-10, "c=1" << std::showpos << c - 1.0 << std::noshowpos << " s=" << s << " z=" << z
                                           << " k=" << k << " j=" << j);
            double single = 0.0;
            REQUIRE_NOTHROW(single = resolvent_moment_quadrature(mp, z, k, j));
            const double r1 = rel(single, e(k, j));
            worst_single = std::max(worst_single, r1);
            CHECK_MESSAGE(r1 < 1e-10, "single: c=1" << std::showpos << c - 1.0 << std::noshowpos << " s=" << s
                                                    << " z=" << z << " k=" << k << " j=" << j);
          }
      }
      // the density still integrates to the continuous mass, and to the mean
      CHECK(rel(integrate(mp, [](double) { return 1.0; }).value, 1.0) < 1e-12);
      CHECK(rel(integrate(mp, [](double x) { return x; }).value, s) < 1e-12);
    }
  MESSAGE("near-hard-edge grid, worst relative error: resolvent_moments " << worst_shared
                                                                           << ", resolvent_moment_quadrature "
                                                                           << worst_single);
}

TEST_CASE("MP near the hard edge: quadrature is continuous through c = 1") {
  // R_{k,j} depends on c smoothly except for the O(sqrt a) = O(|1 - c|) edge term, so at
  // |1 - c| <= 1e-12 the values must agree with the hard-edge (c = 1) quadrature to ~1e-11.
  MarchenkoPastur hard(1.0, 1.3);
  for (double c : {1.0 - 1e-12, std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0), 1.0 + 1e-12})
    for (double z : {-3.0, -0.02}) {
      MarchenkoPastur mp(c, 1.3);
      const ResolventMoments q = resolvent_moments(mp, z, MomentMethod::Quadrature);
      const ResolventMoments q1 = resolvent_moments(hard, z, MomentMethod::Quadrature);
      for (int k = 0; k <= 3; ++k)
        for (int j = 0; j <= 4; ++j) CHECK_MESSAGE(rel(q(k, j), q1(k, j)) < 1e-10, "c=" << c << " z=" << z);
    }
}

TEST_CASE("low-rank spectrum with rho/kappa within 1e-12 of 1 (theory-layer reproduction)") {
  // icl::theory::solve(tau = 1.5, kappa = 0.5, rho = 0.49999999999999994) failed with
  // "gsl_integration_qaws (graded fallback): GSL error: roundoff error" on this measure.
  const double kappa = 0.5;
  for (double rho : {0.49999999999999994, 0.5000000000000001, 0.5 - 1e-12, 0.5 - 1e-9, 0.5}) {
    auto base = std::make_shared<MarchenkoPastur>(rho / kappa, 1.0 / rho);
    PointMassMixture mix(base, rho, {Atom{0.0, 1.0 - rho}});
    for (double z : {-20.0, -1.0, -0.01, -1e-4}) {
      ResolventMoments q;
      REQUIRE_NOTHROW(q = resolvent_moments(mix, z, MomentMethod::Quadrature));
      const ResolventMoments e = resolvent_moments(mix, z, MomentMethod::Exact);
      for (int k = 0; k <= 3; ++k)
        for (int j = 0; j <= 4; ++j) CHECK_MESSAGE(rel(q(k, j), e(k, j)) < 1e-10, "rho=" << rho << " z=" << z);
      double g = 0.0;
      REQUIRE_NOTHROW(g = resolvent_moment_quadrature(mix, z, 0, 1));
      CHECK(rel(g, mix.stieltjes(z)) < 1e-10);
    }
  }
}
