// The test-time iteration's theory (theory/cot.hpp, docs/multistep.md): the series against the
// authors' stored theory values, the closed forms against the series, the precision ladder.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "theory/cot.hpp"

using namespace icl::theory;

namespace {

// The rows of a TSV file of tests/data/cot_authors (one header row) as {column: text}.
std::vector<std::map<std::string, std::string>> read_tsv(const std::string& name) {
  std::ifstream in(std::string(ICL_SOURCE_DIR) + "/tests/data/cot_authors/" + name);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<std::string> columns;
  for (std::stringstream ss(line); std::getline(ss, line, '\t');) columns.push_back(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream ss(line);
    for (const auto& c : columns) std::getline(ss, row[c], '\t');
    rows.push_back(row);
  }
  return rows;
}

double num(const std::map<std::string, std::string>& row, const char* key) {
  return std::stod(row.at(key));
}

CotResult theory_at(double alpha, double tau, double sigma, int steps) {
  CotOptions o;
  o.steps = steps;
  return run(CotParams{alpha, tau, sigma, 0}, o);
}

}  // namespace

TEST_CASE("cot: the series reproduces the authors' stored theory at every point (1e-9)") {
  // tests/data/cot_authors/theory.tsv: 10 (alpha, tau) curves, sigma = 0.01, t = 0..30-60,
  // computed by the authors' BigFloat code at 1512-2048 bits.
  std::map<std::string, std::vector<std::pair<int, double>>> curves;
  for (const auto& row : read_tsv("theory.tsv"))
    curves[row.at("alpha") + " " + row.at("tau") + " " + row.at("sigma")].push_back(
        {static_cast<int>(num(row, "t")), num(row, "error")});
  REQUIRE(curves.size() == 10);  // (alpha, tau) = (1, 4), (3, 1.5), (3, 2) twice
  int points = 0;
  for (const auto& [key, values] : curves) {
    std::stringstream ss(key);
    double alpha = 0, tau = 0, sigma = 0;
    ss >> alpha >> tau >> sigma;
    int steps = 0;
    for (const auto& v : values) steps = std::max(steps, v.first);
    const CotResult r = theory_at(alpha, tau, sigma, steps);
    REQUIRE(r.converged());
    for (const auto& [t, e] : values) {
      INFO("alpha " << alpha << " tau " << tau << " t " << t);
      CHECK(std::abs(r.error[static_cast<std::size_t>(t)] - e) <= 1e-9 * std::abs(e));
      ++points;
    }
  }
  CHECK(points == 563);
}

TEST_CASE("cot: the first step's closed form equals the series") {
  for (double alpha : {0.3, 1.0, 2.5})
    for (double tau : {1.2, 3.0, 40.0})
      for (double sigma : {0.0, 0.5}) {
        const CotParams p{alpha, tau, sigma, 0};
        const CotResult r = theory_at(alpha, tau, sigma, 1);
        REQUIRE(r.converged());
        CHECK(r.error[0] == doctest::Approx(1.0).epsilon(1e-15));
        CHECK(r.error[1] == doctest::Approx(cot_first_step_error(p)).epsilon(1e-13));
      }
}

TEST_CASE("cot: tau -> infinity: the series tends to the Marchenko-Pastur closed form") {
  // E_t(tau) - E_t(inf) = O(1/tau): at tau = 1e8 within a few 1e-7 (relative) for t <= 20.
  for (double alpha : {0.5, 2.0}) {
    const CotResult r = theory_at(alpha, 1e8, 0.3, 20);
    REQUIRE(r.converged());
    for (std::size_t t = 0; t <= 20; ++t)
      CHECK(r.error[t] == doctest::Approx(r.error_tau_infinity[t]).epsilon(1e-6));
  }
  // t = 1 of the closed form: 1 - 2/c + (1 + 1/alpha)/c^2.
  const CotResult r = theory_at(0.7, 5, 0.2, 1);
  const double c = cot_c(r.params);
  CHECK(r.error_tau_infinity[1] == doctest::Approx(1 - 2 / c + (1 + 1 / 0.7) / (c * c)).epsilon(1e-14));
}

TEST_CASE("cot: the oscillatory boundary reproduces the authors' tau_c") {
  for (const auto& row : read_tsv("tau_c.tsv"))
    CHECK(cot_tau_c(num(row, "alpha"), num(row, "sigma")) ==
          doctest::Approx(num(row, "tau_c")).epsilon(1e-12));
}

TEST_CASE("cot: regime from the denominator's roots agrees with the two boundary formulas") {
  for (double alpha : {0.2, 0.6, 1.5, 3.0, 6.0})
    for (double sigma : {0.0, 0.3, 1.0}) {
      const double tc = cot_tau_c(alpha, sigma), tm = cot_tau_monotone(alpha, sigma);
      const double crit = std::max(tc, tm);
      INFO("alpha " << alpha << " sigma " << sigma << " tau_c " << tc << " tau_m " << tm);
      CHECK(cot_regime({alpha, crit * 1.01, sigma, 0}) == CotRegime::Convergent);
      const CotRegime below = cot_regime({alpha, 1 + (crit - 1) * 0.98, sigma, 0});
      CHECK(below == (tc > tm ? CotRegime::Oscillatory : CotRegime::Monotone));
    }
}

TEST_CASE("cot: the large-t limit and the growth rate agree with the series") {
  // Convergent, alpha < 1: E_t -> (1 - alpha)(tau - 1)/(tau - 2 - sigma^2).
  {
    const CotResult r = theory_at(0.4, 6, 0.1, 100);
    REQUIRE(r.converged());
    REQUIRE(r.regime == CotRegime::Convergent);
    CHECK(r.error.back() == doctest::Approx(r.limit).epsilon(1e-3));
  }
  // Divergent: ln E_{t+1}/E_t -> growth_rate (up to the O(1/t) of the diagonal's prefactor).
  for (const CotParams& p : {CotParams{3.0, 1.5, 0.01, 0}, CotParams{0.5, 1.6, 0.2, 0}}) {
    CotOptions o;
    o.steps = 100;
    const CotResult r = run(p, o);
    REQUIRE(r.converged());
    REQUIRE(r.regime != CotRegime::Convergent);
    const double measured = std::log(r.error[100] / r.error[99]);
    INFO("alpha " << p.alpha << " tau " << p.tau << " regime " << to_string(r.regime));
    CHECK(std::abs(measured - r.growth_rate) < 2.0 / 100);
  }
}

TEST_CASE("cot: the precision is certified, or the result says it is not") {
  CotOptions o;
  o.steps = 80;
  o.max_bits = 256;
  // The authors' phase corner (alpha = 0.01, tau = 1.01, sigma = 0): E_80 ~ 4.5e159 out of a
  // cancellation that 256 bits cannot resolve.
  const CotResult r = run(CotParams{0.01, 1.01, 0, 0}, o);
  CHECK(r.status == icl::numerics::Status::NotConverged);
  CHECK(std::isnan(r.error[80]));
  CHECK(r.t_opt == -1);  // no optimum without values (JSON null)
  CHECK(std::isnan(r.error_t_opt));
  CHECK(r.precision_agreement > o.relative_tolerance);
  o.max_bits = 4096;
  const CotResult ok = run(CotParams{0.01, 1.01, 0, 0}, o);
  REQUIRE(ok.converged());
  CHECK(ok.error[80] == doctest::Approx(4.549609329371559e+159).epsilon(1e-9));
}

TEST_CASE("cot: bad input names the field") {
  const auto field = [](const CotParams& p, const CotOptions& o) {
    try {
      run(p, o);
    } catch (const icl::InvalidParams& e) {
      return e.field();
    }
    return std::string("none");
  };
  CHECK(field({-1, 4, 0.1, 0}, {}) == "alpha");
  CHECK(field({2, 0.9, 0.1, 0}, {}) == "tau");
  CHECK(field({2, 4, -0.1, 0}, {}) == "sigma");
  CHECK(field({2, 4, 0.1, 1e-3}, {}) == "lambda");
  CotOptions o;
  o.steps = -1;
  CHECK(field({}, o) == "steps");
  o = {};
  o.max_bits = 100;
  CHECK(field({}, o) == "max_bits");
}

#include "theory/depth.hpp"

TEST_CASE("depth at sigma = 0 and the best shared step equals the test-time iteration at tau = inf") {
  // Noiseless, depth L with the shared step 1/c (c = 1 + 1/alpha) is L steps of the map A = I/c:
  // e(1/c) = int (1 - s/c)^{2L} dMP = E_L(tau -> infinity) of the series' closed form (§4.1),
  // two independent computations (Jacobi recursion vs alternating Narayana sum in MPFR). And 1/c
  // is the optimal shared step at every depth (docs/multistep_depth.md), so the optimum agrees.
  for (double alpha : {0.4, 1.5, 4.0}) {
    CotOptions o;
    o.steps = 12;
    const CotResult r = run(CotParams{alpha, 3.0, 0.0, 0}, o);
    REQUIRE(r.converged());
    for (int layers : {1, 2, 5, 12}) {
      DepthParams d;
      d.alpha = alpha;
      d.sigma = 0;
      d.layers = layers;
      DepthOptions dopt;
      dopt.by_depth = false;
      const DepthResult dr = run(d, dopt);
      REQUIRE(dr.converged());
      INFO("alpha " << alpha << " L " << layers);
      const double tti = r.error_tau_infinity[static_cast<std::size_t>(layers)];
      CHECK(dr.error_at_one_over_c == doctest::Approx(tti).epsilon(1e-11));
      CHECK(dr.error == doctest::Approx(tti).epsilon(1e-9));
      CHECK(dr.step_opt == doctest::Approx(1 / (1 + 1 / alpha)).epsilon(1e-7));
    }
  }
}
