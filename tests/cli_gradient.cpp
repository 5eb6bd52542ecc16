// The exact derivatives on the command line (docs/sensitivity.md §22): icl solve --gradient
// (text table and JSON, null with exit 3 when there is none), the sweep and phase columns, and
// icl boundary --trace.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "theory/lowrank.hpp"

using namespace icl_test;

TEST_CASE("icl solve --gradient: the JSON block equals the library's, the text shows the errors") {
  const auto j = run_json("solve --gradient --json --rho 0.7");
  icl::theory::Params p;
  p.rho = 0.7;
  const auto s = icl::theory::solve(p, {.gradient = true});
  REQUIRE(s.gradient->converged());
  CHECK(j["gradient_status"]["status"] == "converged");
  CHECK(j["gradient_status"]["parameters"].size() == s.gradient->parameters.size());
  for (const char* out : {"tm", "idg", "odg", "m0", "bayes_idg", "idg_mem"})
    for (const char* x : {"alpha", "tau", "gamma", "kappa", "rho", "sigma", "lambda"})
      CHECK(j["gradient"][out][x].get<double>() == s.gradient->of(out, x));
  const Run t = run_icl("solve --gradient");
  REQUIRE(t.code == 0);
  CHECK(contains(t.out, "gradient (docs/sensitivity.md §22): converged, condition number"));
  CHECK(contains(t.out, "d/d             alpha  alpha_test         tau"));
}

TEST_CASE("icl solve --gradient without a solution: null values, the reason, exit 3") {
  const Run r = run_icl("solve --gradient --json --kappa 1e-300");
  CHECK(r.code == 3);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["gradient"]["idg"]["alpha"].is_null());
  CHECK(j["gradient_status"]["status"] == "not_converged");
  CHECK(contains(j["gradient_status"]["message"].get<std::string>(), "did not converge"));
}

TEST_CASE("icl sweep and phase --gradient: d_E_d_X and el_E_X columns, equal to the library") {
  const Tsv t = parse_tsv(run_icl("sweep --vary alpha=1:3:3 --gradient --quiet").out);
  REQUIRE(t.rows.size() == 3);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    icl::theory::Params p;
    p.alpha = std::stod(t.rows[i].at(t.column("alpha")));
    const auto s = icl::theory::solve(p, {.gradient = true});
    CHECK(std::stod(t.rows[i].at(t.column("d_idg_d_kappa"))) == s.gradient->of("idg", "kappa"));
    CHECK(std::stod(t.rows[i].at(t.column("el_odg_tau"))) ==
          doctest::Approx(p.tau / s.error.odg * s.gradient->of("odg", "tau")).epsilon(1e-14));
  }
  const Tsv g = parse_tsv(
      run_icl("phase --x rho=0.3:0.9:2 --y kappa=0.5:1.5:2 --gradient --quiet").out);
  REQUIRE(g.rows.size() == 4);
  CHECK(g.column("el_idg_rho") > 0);
  CHECK(g.column("d_tm_d_lambda") > 0);
}

TEST_CASE("icl boundary --trace: the curve as the TSV, the trace block in the JSON") {
  const std::string args =
      "boundary --x rho=0.05:1 --y kappa=0.2:0.8:3 --level idg=0.3 --alpha 10 --sigma 0 "
      "--lambda 0 --trace --quiet";
  const Tsv t = parse_tsv(run_icl(args).out);
  CHECK(t.header == std::vector<std::string>{"rho", "kappa", "value", "residual", "arclength"});
  CHECK(t.rows.size() > 30);
  for (const auto& row : t.rows)
    CHECK(std::abs(std::stod(row.at(t.column("value"))) - 0.3) < 1e-10);
  const auto j = run_json(args + " --json");
  CHECK(j["trace"]["status"] == "converged");
  CHECK(j["trace"]["points"].size() == t.rows.size());
  CHECK(j["trace"]["turning_points"] == 0);
  expect_bad_input("boundary --x lambda=0.001:1 --y alpha=1:2:2 --argmin idg --trace",
                   "invalid parameter trace");
  expect_bad_input(args + " --trace-step 0.9", "invalid parameter trace_step");
}
