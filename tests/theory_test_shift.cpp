// The shifted test protocol (docs/general_covariance.md §20): test tasks whose covariance shares
// the eigenbasis of the training one with other eigenvalues. Checked by its limits (C = 1 is IDG,
// C = rho is ODG), by two independent routes (the in-subspace Marchenko-Pastur algebra against
// the generalized MP engine with the deterministic equivalent; the replica solution against the
// Letey/Lu formula), and by the rules every result follows (decomposition sums, NaN when not
// converged, validation). The comparison with simulation is a grid point of `icl verify`.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "numerics/error.hpp"
#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"

using namespace icl::theory;

namespace {

Params with_overlap(Params p, double c) {
  p.test_overlap = c;
  return p;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(1e-12, std::abs(b)); }

void check_components(const Components& a, const Components& b, double tol) {
  CHECK(rel(a.algo, b.algo) < tol);
  CHECK(rel(a.mem, b.mem) < tol);
  CHECK(rel(a.structural, b.structural) < tol);
}

std::vector<Params> points() {
  std::vector<Params> ps;
  ps.push_back(Params{});  // the paper's decomposition point, task-rich, lambda = 0
  ps.push_back(Params{.kappa = 0.5});  // task-poor: S singular inside span(A)
  ps.push_back(Params{.alpha_test = 4, .tau = 0.6, .rho = 0.5, .sigma_test = 0.2, .lambda = 0.1});
  return ps;
}

}  // namespace

TEST_CASE("test overlap: C = 1 is IDG and C = rho is ODG, error and decomposition") {
  // Exact identities of the model: C = 1 is the IDG covariance (1/rho) P_A; C = rho gives
  // (1/rho) rho P_A + (1 - rho)/(1 - rho) P_perp = I, the ODG covariance. Only rounding differs.
  for (const Method method : {Method::Saddle, Method::Reduced}) {
    for (const Params& p : points()) {
      CAPTURE(to_string(method));
      CAPTURE(p.kappa);
      const Solution plain = solve(p, {.method = method});
      REQUIRE(plain.converged());
      const Solution one = solve(with_overlap(p, 1.0), {.method = method});
      const Solution at_rho = solve(with_overlap(p, p.rho), {.method = method});
      REQUIRE(one.converged());
      REQUIRE(one.test_shift);
      REQUIRE(at_rho.test_shift);
      CHECK(rel(one.test_shift->error, plain.error.idg) < 1e-12);
      CHECK(rel(at_rho.test_shift->error, plain.error.odg) < 1e-12);
      check_components(one.test_shift->decomposition, plain.decomposition.idg, 1e-11);
      check_components(at_rho.test_shift->decomposition, plain.decomposition.odg, 1e-11);
      // The other outputs do not move when a shifted protocol is added.
      CHECK(one.error.idg == plain.error.idg);
      CHECK(one.error.tm == plain.error.tm);
    }
  }
}

TEST_CASE("test overlap: the error is the linear interpolation through IDG and ODG (docs/general_covariance.md §20.1)") {
  // error(C) = IDG + (1 - C)/(1 - rho) (ODG - IDG): the formula of the docs, checked against
  // the implementation (which goes through the traces U_{k,j}) at C = 0, 0.3, 0.75.
  for (const Params& p : points()) {
    const Solution plain = solve(p);
    for (double c : {0.0, 0.3, 0.75}) {
      const Solution s = solve(with_overlap(p, c));
      REQUIRE(s.converged());
      const double expect =
          plain.error.idg + (1 - c) / (1 - p.rho) * (plain.error.odg - plain.error.idg);
      CHECK(rel(s.test_shift->error, expect) < 1e-11);
      const auto& d = s.test_shift->decomposition;
      CHECK(rel(d.algo + d.mem + d.structural, s.test_shift->error) < 1e-12);
    }
  }
}

TEST_CASE("test overlap: the general-spectrum engine with test_levels reproduces the low-rank route") {
  // Second route: the paper's tasks given as the explicit spectrum {(1/rho, rho), (0, 1-rho)}
  // go through the generalized Marchenko-Pastur law and the deterministic equivalent
  // (docs/general_covariance.md §12.3) with the test eigenvalues {C/rho, (1-C)/(1-rho)} in the
  // numerator, instead of the in-subspace MP moments combined exactly (docs/general_covariance.md
  // §20.2). Both solvers converge to 1e-10; the spectral functions agree to ~1e-12
  // (docs/general_covariance.md §12.4), so 1e-8 leaves room for the solve.
  for (const Method method : {Method::Saddle, Method::Reduced}) {
    for (const Params& base : points()) {
      for (double c : {0.0, 0.4, 1.0}) {
        const Solution low = solve(with_overlap(base, c), {.method = method});
        Params g = base;
        g.task_spectrum = {{1.0 / base.rho, base.rho}, {0.0, 1.0 - base.rho}};
        g.test_levels = {c / base.rho, (1.0 - c) / (1.0 - base.rho)};
        const Solution gen = solve(g, {.method = method});
        CAPTURE(c);
        REQUIRE(low.converged());
        REQUIRE(gen.converged());
        CHECK(rel(gen.test_shift->error, low.test_shift->error) < 1e-8);
        check_components(gen.test_shift->decomposition, low.test_shift->decomposition, 1e-7);
      }
    }
  }
}

TEST_CASE("test levels: the replica solution agrees with the Letey/Lu formula for arbitrary spectra") {
  // The Letey/Lu deterministic equivalent takes any test covariance in the training
  // eigenbasis (docs/errors_phases.md §11.1, docs/general_covariance.md §20.3) and is written
  // independently of the replica code; at lambda = 0, tau > 1 the two theories coincide
  // (docs/general_covariance.md §12.4: 1e-10 for IDG/ODG).
  struct Case {
    std::vector<icl::numerics::Atom> spectrum;
    std::vector<double> levels;
    double kappa;
  };
  const std::vector<Case> cases = {
      {power_law_spectrum(1.0, 4), {0.2, 0.6, 1.4, 1.8}, 1.5},
      {power_law_spectrum(1.0, 4), {0.0, 0.0, 2.0, 2.0}, 0.6},
      {low_rank_plus_complement_spectrum(0.4, 0.2), {0.5, 4.0 / 3.0}, 0.8},
  };
  for (const auto& c : cases) {
    Params p;
    p.task_spectrum = c.spectrum;
    p.kappa = c.kappa;
    // levels with weighted mean exactly 1: rescale by sum w t'
    double mean = 0;
    for (std::size_t k = 0; k < c.levels.size(); ++k) mean += c.spectrum[k].mass * c.levels[k];
    for (double t : c.levels) p.test_levels.push_back(t / mean);
    const Solution replica = solve(p, {.method = Method::Saddle});
    const Solution letey = solve(p, {.method = Method::Letey});
    REQUIRE(replica.converged());
    REQUIRE(letey.converged());
    CAPTURE(c.kappa);
    CHECK(rel(replica.test_shift->error, letey.test_shift->error) < 1e-9);
    // The test error of a covariance equal to the training one is IDG, the identity is ODG.
    Params idg = p, odg = p;
    idg.test_levels.clear();
    for (const auto& a : p.task_spectrum) idg.test_levels.push_back(a.position);
    odg.test_levels.assign(p.task_spectrum.size(), 1.0);
    CHECK(rel(solve(idg).test_shift->error, replica.error.idg) < 1e-12);
    CHECK(rel(solve(odg).test_shift->error, replica.error.odg) < 1e-12);
  }
}

TEST_CASE("test overlap: a solution that does not converge has a NaN shifted protocol") {
  Params p = with_overlap(Params{}, 0.2);
  // A tolerance no residual meets: the solver stops at the true root, unconverged.
  SolveOptions o;
  o.solver.residual_tolerance = 1e-300;
  o.solver.max_iterations = 3;
  const Solution s = solve(p, o);
  REQUIRE_FALSE(s.converged());
  REQUIRE(s.test_shift);
  CHECK(std::isnan(s.test_shift->error));
  CHECK(std::isnan(s.test_shift->decomposition.algo));
  CHECK(s.test_shift->overlap == 0.2);  // a parameter, not a value
  REQUIRE(s.last_iterate);
  CHECK(s.last_iterate->test_shift);
  const auto j = to_json(s);
  CHECK(j["test_shift"]["error"].is_number());  // NaN in the value, null in dump()
  CHECK(j.dump().find("\"test_shift\":{\"overlap\":0.2") != std::string::npos);
}

TEST_CASE("test overlap and levels: invalid values name the field") {
  auto field_of = [](const Params& p) {
    try {
      p.validate();
    } catch (const icl::InvalidParams& e) {
      return std::string(e.field());
    }
    return std::string("(valid)");
  };
  CHECK(field_of(with_overlap(Params{}, -0.1)) == "test_overlap");
  CHECK(field_of(with_overlap(Params{}, 1.5)) == "test_overlap");
  CHECK(field_of(with_overlap(Params{}, std::nan(""))) == "test_overlap");
  Params full;
  full.rho = 1;
  CHECK(field_of(with_overlap(full, 0.5)) == "test_overlap");  // no complement at rho = 1
  CHECK(field_of(with_overlap(full, 1.0)) == "(valid)");
  Params general;
  general.task_spectrum = power_law_spectrum(1.0, 3);
  CHECK(field_of(with_overlap(general, 0.5)) == "test_overlap");  // low-rank tasks only
  Params levels = general;
  levels.test_levels = {1.0, 1.0};  // wrong length
  CHECK(field_of(levels) == "test_levels");
  levels.test_levels = {3.0, 0.0, 0.0};  // weighted mean 1
  CHECK(field_of(levels) == "(valid)");
  levels.test_levels = {2.0, 0.0, 0.0};  // weighted mean 2/3
  CHECK(field_of(levels) == "test_levels");
  levels.test_levels = {-1.0, 2.0, 2.0};
  CHECK(field_of(levels) == "test_levels");
  Params no_spectrum;
  no_spectrum.test_levels = {1.0};
  CHECK(field_of(no_spectrum) == "test_levels");
  Params both = levels;
  both.test_levels = {3.0, 0.0, 0.0};
  both.test_overlap = 0.5;
  CHECK(field_of(both) == "test_overlap");
}

TEST_CASE("test overlap: a sweep over test_overlap gets the shift columns") {
  Params p;
  CHECK(std::isnan(p.get("test_overlap")));
  p.set("test_overlap", 0.25);
  REQUIRE(p.test_overlap);
  CHECK(*p.test_overlap == 0.25);
  const Solution s = solve(p);
  const auto cols = solution_columns(true);
  const auto row = solution_row(s, true);
  REQUIRE(cols.size() == row.size());
  // shift, shift_algo, shift_mem, shift_struct, bayes_shift
  CHECK(cols[cols.size() - 5] == "shift");
  CHECK(row[row.size() - 5] == s.test_shift->error);
  CHECK(cols.back() == "bayes_shift");
  CHECK(row.back() == s.bayes_optimal.shift);
  CHECK(solution_columns().size() == cols.size() - 5);
}
