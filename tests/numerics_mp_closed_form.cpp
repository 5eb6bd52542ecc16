// Marchenko-Pastur closed forms: edges, atom, moments, Stieltjes transform and its derivatives.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <memory>

#include <boost/multiprecision/cpp_bin_float.hpp>

#include "numerics/error.hpp"
#include "numerics/spectral_measure.hpp"

using namespace icl::numerics;

namespace {
double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }
}  // namespace

TEST_CASE("MP edges, atom and moments") {
  MarchenkoPastur mp(0.25, 2.0);
  REQUIRE(mp.support().size() == 1);
  CHECK(mp.support()[0].lo == doctest::Approx(2.0 * 0.25).epsilon(1e-15));
  CHECK(mp.support()[0].hi == doctest::Approx(2.0 * 2.25).epsilon(1e-15));
  CHECK(mp.atoms().empty());
  CHECK(mp.raw_moment(1) == doctest::Approx(2.0).epsilon(1e-15));
  CHECK(mp.raw_moment(2) == doctest::Approx(4.0 * 1.25).epsilon(1e-15));
  CHECK(mp.raw_moment(3) == doctest::Approx(8.0 * (1 + 0.75 + 0.0625)).epsilon(1e-15));
  MarchenkoPastur mp4(4.0);
  REQUIRE(mp4.atoms().size() == 1);
  CHECK(mp4.atoms()[0].mass == doctest::Approx(0.75).epsilon(1e-15));
  CHECK(mp4.continuous_mass() == doctest::Approx(0.25).epsilon(1e-15));
  CHECK(mp4.lower_edge() == 0.0);
  CHECK(mp4.support()[0].lo == doctest::Approx(1.0).epsilon(1e-15));
  // c near 1: the lower edge (1 - sqrt c)^2 keeps its relative accuracy.
  MarchenkoPastur near1(1.0 - 1e-8);
  CHECK(rel(near1.support()[0].lo, 0.25e-16 * (1 + 1e-8 / 2)) < 1e-7);
  CHECK_THROWS_AS(MarchenkoPastur(-1.0), icl::InvalidParams);
  CHECK_THROWS_AS(MarchenkoPastur(1.0, 0.0), icl::InvalidParams);
  CHECK_THROWS_AS(mp.stieltjes_derivative(0.6, 0), icl::InvalidParams);  // inside support
  CHECK_THROWS_AS(mp4.stieltjes_derivative(0.0, 0), icl::InvalidParams);  // at the atom
  CHECK_THROWS_AS(mp.stieltjes_derivative(-1.0, 5), icl::InvalidParams);
}

namespace {
// 100-digit reference: m is the positive root of c s z m^2 + (z - s(1-c)) m + 1 = 0 (the smaller
// one when both are positive, i.e. for 0 < z < lower edge), and its derivatives are O(h^2)
// central-difference stencils with h = 1e-12 (distance to the edge): truncation ~1e-24 and
// rounding ~1e-52 relative, far below the 1e-14 being tested.
using HP = boost::multiprecision::cpp_bin_float_100;
HP hp_m(HP c, HP s, HP z) {
  const HP A = c * s * z, B = z - s * (1 - c);
  const HP d = sqrt(B * B - 4 * A);
  const HP r1 = (-B - d) / (2 * A), r2 = (-B + d) / (2 * A);
  return r1 > 0 ? (r2 > 0 ? (r1 < r2 ? r1 : r2) : r1) : r2;
}
double hp_derivative(double c, double s, double z, double dist, int n) {
  const HP h = HP(1e-12) * dist;
  auto f = [&](int i) { return hp_m(c, s, HP(z) + i * h); };
  switch (n) {
    case 0: return static_cast<double>(f(0));
    case 1: return static_cast<double>((f(1) - f(-1)) / (2 * h));
    case 2: return static_cast<double>((f(1) - 2 * f(0) + f(-1)) / (h * h));
    case 3: return static_cast<double>((f(2) - 2 * f(1) + 2 * f(-1) - f(-2)) / (2 * h * h * h));
    default: return static_cast<double>((f(2) - 4 * f(1) + 6 * f(0) - 4 * f(-1) + f(-2)) / (h * h * h * h));
  }
}
}  // namespace

TEST_CASE("MP Stieltjes and derivatives n=0..4 vs a 100-digit reference, 1e-14 relative") {
  double worst = 0.0;
  for (double c : {0.05, 0.5, 0.99, 1.0, 1.01, 2.0, 20.0})
    for (double s : {1.0, 0.3})
      for (double z : {-1e4, -50.0, -1.0, -1e-2, -1e-4, -1e-6}) {
        MarchenkoPastur mp(c, s);
        const double dist = mp.lower_edge() - z;
        for (int n = 0; n <= 4; ++n) {
          const double ref = hp_derivative(c, s, z, dist, n);
          const double r = rel(mp.stieltjes_derivative(z, n), ref);
          worst = std::max(worst, r);
          CHECK_MESSAGE(r < 1e-14, "c=" << c << " s=" << s << " z=" << z << " n=" << n);
        }
      }
  // below a positive lower edge (c < 1), including very close to it
  for (double c : {0.05, 0.5, 0.99}) {
    MarchenkoPastur mp(c, 1.0);
    const double a = mp.support()[0].lo;
    for (double z : {0.5 * a, a * (1 - 1e-6)})
      for (int n = 0; n <= 4; ++n) {
        const double r = rel(mp.stieltjes_derivative(z, n), hp_derivative(c, 1.0, z, a - z, n));
        // The edge a is a rounded double: a - z carries a relative error eps a / (a - z), which
        // m^{(n)} ~ (a - z)^{1/2 - n} inherits (times n + 1/2); that is the conditioning limit.
        const double cond = 2.2e-16 * a / (a - z) * (n + 1);
        CHECK_MESSAGE(r < 1e-14 + 2.0 * cond, "c=" << c << " z=" << z << " n=" << n);
      }
  }
  MESSAGE("worst relative error of MP Stieltjes derivatives: " << worst);
}

TEST_CASE("MP Stieltjes derivatives vs central differences of the closed form") {
  // Independent check of the implicit-differentiation recursion (difference quotient of order
  // n-1 derivative; accuracy ~ 1e-8 limited by the difference itself).
  for (double c : {0.05, 0.5, 1.0, 2.0})
    for (double z : {-3.0, -0.2}) {
      MarchenkoPastur mp(c, 1.0);
      for (int n = 1; n <= 4; ++n) {
        const double h = 1e-4 * std::abs(z);
        const double fd = (mp.stieltjes_derivative(z + h, n - 1) - mp.stieltjes_derivative(z - h, n - 1)) / (2 * h);
        CHECK(rel(mp.stieltjes_derivative(z, n), fd) < 1e-6);
      }
    }
}

TEST_CASE("MP complex Stieltjes: branch, real-axis limit and density") {
  for (double c : {0.3, 1.0, 3.0}) {
    MarchenkoPastur mp(c, 1.2);
    // approaches the real value below the support
    const std::complex<double> m = mp.stieltjes(std::complex<double>(-0.7, 1e-12));
    CHECK(rel(m.real(), mp.stieltjes(-0.7)) < 1e-12);
    // Im m(x + i0)/pi is the density inside the support
    const auto I = mp.support()[0];
    for (double f : {0.1, 0.5, 0.9}) {
      const double x = I.lo + f * (I.hi - I.lo);
      const std::complex<double> mx = mp.stieltjes(std::complex<double>(x, 1e-13));
      CHECK(mx.imag() > 0.0);
      CHECK(rel(mx.imag() / M_PI, mp.density(x)) < 1e-9);
    }
    // Im m > 0 everywhere in the upper half plane, m ~ -1/z at infinity
    const std::complex<double> big(1e6, 1e6);
    CHECK(std::abs(mp.stieltjes(big) * big + 1.0) < 1e-5);
    CHECK(mp.stieltjes(std::complex<double>(2.0, 0.5)).imag() > 0.0);
  }
}

TEST_CASE("stieltjes_derivatives(z, nmax) gives stieltjes_derivative(z, n) bit for bit") {
  const auto mp = std::make_shared<MarchenkoPastur>(0.6, 1.25);
  const auto mp_atom = std::make_shared<MarchenkoPastur>(2.5, 0.8);  // atom at 0 of mass 0.6
  const PointMassMixture mix(mp, 0.9, {Atom{0.0, 0.1}});
  const PointMassMixture mix_atom(mp_atom, 0.7, {Atom{0.3, 0.2}, Atom{0.5, 0.1}});
  const GeneralizedMarchenkoPastur gmp(0.5, {Atom{0.5, 0.5}, Atom{1.5, 0.5}});  // the default
  for (const SpectralMeasure* m : {static_cast<const SpectralMeasure*>(mp.get()),
                                   static_cast<const SpectralMeasure*>(mp_atom.get()),
                                   static_cast<const SpectralMeasure*>(&mix),
                                   static_cast<const SpectralMeasure*>(&mix_atom),
                                   static_cast<const SpectralMeasure*>(&gmp)}) {
    for (double z : {-1e-3, -0.1, -1.0, -37.5}) {
      for (int nmax = 0; nmax <= 4; ++nmax) {
        double out[5];
        m->stieltjes_derivatives(z, nmax, out);
        for (int n = 0; n <= nmax; ++n) CHECK(out[n] == m->stieltjes_derivative(z, n));
      }
    }
    double out[5];
    CHECK_THROWS_AS(m->stieltjes_derivatives(m->lower_edge() + 1e-3, 1, out), icl::InvalidParams);
  }
}
