// Beyond the paper: a general population task spectrum (generalized Marchenko-Pastur S,
// deterministic equivalent for the Sigma-weighted traces).
#include <doctest/doctest.h>

#include <cmath>

#include "numerics/error.hpp"
#include "theory/lowrank.hpp"
#include "theory/param_path.hpp"
#include "theory/sweep.hpp"

using namespace icl::theory;

namespace {

void close(double a, double b, double tol, const char* what) {
  INFO(what << ": " << a << " vs " << b);
  CHECK(std::abs(a - b) <= tol * std::max(1.0, std::abs(b)));
}

}  // namespace

TEST_CASE("general-spectrum engine reproduces the low-rank theory exactly") {
  const Params points[] = {
      Params{},
      {.alpha = 4, .alpha_test = -1, .tau = 1.2, .kappa = 3, .rho = 0.5, .sigma = 0.9,
       .sigma_test = 0, .lambda = 0.1},
      {.alpha = 8, .alpha_test = 2, .tau = 2.25, .kappa = 0.5, .rho = 0.9, .sigma = 0.3,
       .sigma_test = 0.5, .lambda = 0},  // task-poor
  };
  for (const Params& low : points) {
    Params general = low;
    general.task_spectrum = low_rank_plus_complement_spectrum(low.rho, 0.0);
    for (Method m : {Method::Reduced, Method::Saddle}) {
      const Solution a = solve(low, {.method = m});
      const Solution b = solve(general, {.method = m});
      REQUIRE(a.converged());
      REQUIRE(b.converged());
      CAPTURE(low.rho); CAPTURE(low.kappa);
      close(b.error.tm, a.error.tm, 1e-9, "tm");
      close(b.error.idg, a.error.idg, 1e-9, "idg");
      close(b.error.odg, a.error.odg, 1e-9, "odg");
      close(b.order.m0, a.order.m0, 1e-9, "m0");
      close(b.order.q0, a.order.q0, 1e-9, "q0");
      close(b.decomposition.idg.structural, a.decomposition.idg.structural, 1e-9, "idg struct");
    }
  }
}

TEST_CASE("general spectra: replica = Letey/Lu (arbitrary covariance) at lambda = 0, tau > 1") {
  const std::vector<std::vector<icl::numerics::Atom>> spectra = {
      low_rank_plus_complement_spectrum(0.3, 0.1),
      low_rank_plus_complement_spectrum(0.7, 0.5),
      power_law_spectrum(1.0, 8),
      {{1.6, 0.5}, {0.4, 0.5}},
  };
  for (const auto& spec : spectra) {
    for (double kappa : {0.4, 1.5}) {
      Params p{.alpha = 2, .alpha_test = 3, .tau = 2.25, .kappa = kappa, .rho = 1, .sigma = 0.3,
               .sigma_test = 0.1, .lambda = 0};
      p.task_spectrum = spec;
      const Solution r = solve(p, {.method = Method::Reduced});
      const Solution s = solve(p, {.method = Method::Saddle});
      const Solution l = solve(p, {.method = Method::Letey});
      REQUIRE(r.converged());
      REQUIRE(s.converged());
      CAPTURE(kappa); CAPTURE(spec.size());
      close(r.error.idg, l.error.idg, 1e-10, "idg reduced vs letey");
      close(r.error.odg, l.error.odg, 1e-10, "odg reduced vs letey");
      close(s.error.idg, r.error.idg, 1e-8, "idg saddle vs reduced");
      close(s.error.tm, r.error.tm, 1e-8, "tm saddle vs reduced");
      close(s.decomposition.idg.total(), s.error.idg, 1e-10, "idg decomposition sum");
    }
  }
}

TEST_CASE("task spectra are validated") {
  Params p;
  p.task_spectrum = {{2.0, 0.5}, {0.5, 0.5}};  // mean 1.25
  CHECK_THROWS_AS(p.validate(), icl::InvalidParams);
  p.task_spectrum = {{1.0, 0.6}, {1.0, 0.6}};  // weights sum 1.2
  CHECK_THROWS_AS(p.validate(), icl::InvalidParams);
  p.task_spectrum = {{-1.0, 0.5}, {3.0, 0.5}};
  CHECK_THROWS_AS(p.validate(), icl::InvalidParams);
  p.task_spectrum = power_law_spectrum(1.5, 10);
  CHECK_NOTHROW(p.validate());
  // Regime by the fraction of non-null task directions.
  p.task_spectrum = low_rank_plus_complement_spectrum(0.6, 0.0);
  p.kappa = 0.5;
  CHECK(regime(p) == Regime::TaskPoor);
  CHECK(atom_mass(p) == doctest::Approx(1 - 0.5 / 0.6));
  p.task_spectrum = low_rank_plus_complement_spectrum(0.6, 0.01);  // full rank
  CHECK(regime(p) == Regime::TaskPoor);  // 1 > kappa = 0.5
}

TEST_CASE("rho cannot vary under a task spectrum (with_param), other parameters can") {
  Params p;
  p.task_spectrum = power_law_spectrum(1.0, 4);
  CHECK_THROWS_AS(with_param(p, "rho", 0.5), icl::InvalidParams);
  CHECK(with_param(p, "kappa", 0.7).kappa == 0.7);
  // Without a spectrum rho is the paper's task rank and varies as any parameter.
  CHECK(with_param(Params{}, "rho", 0.5).rho == 0.5);
  CHECK_THROWS_AS(sweep(p, "rho", {0.3, 0.6}), icl::InvalidParams);
}
