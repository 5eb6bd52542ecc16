// `icl boundary` (docs/errors_phases.md §19): the JSON layout with null for a y without a point,
// the TSV with one header row and its sidecar, and bad input (exit 2 naming the flag).
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("icl boundary --json: the documented keys, null where no crossing is in range") {
  // IDG = 0.3 is crossed along rho for kappa = 0.5 at alpha = 10, never for level 5.
  const std::string common =
      "boundary --x rho=0.05:1 --y kappa=0.3:0.5:2 --alpha 10 --sigma 0 --lambda 0 --json --quiet";
  const auto j = run_json(common + " --level idg=0.3");
  CHECK(keys(j) == std::vector<std::string>{"criterion", "x", "y", "range", "scale", "converged",
                                            "status", "message", "points", "params"});
  CHECK(j["criterion"]["type"] == "level");
  CHECK(j["criterion"]["quantity"] == "idg");
  CHECK(j["criterion"]["level"] == 0.3);
  CHECK(j["x"] == "rho");
  CHECK(j["y"] == "kappa");
  REQUIRE(j["points"].size() == 2);
  CHECK(keys(j["points"][0]) == std::vector<std::string>{"kappa", "rho", "value", "converged",
                                                         "status", "message", "candidates",
                                                         "evaluations"});
  CHECK(j["points"][1]["kappa"] == 0.5);
  CHECK(j["points"][1]["converged"] == true);
  CHECK(j["points"][1]["rho"].get<double>() > 0.05);

  const Run none = run_icl(common + " --level idg=5");
  CHECK(none.code == 0);  // an answer (no crossing), not a failure
  const auto n = nlohmann::ordered_json::parse(none.out);
  CHECK(n["status"] == "check_failed");
  CHECK(n["points"][0]["rho"].is_null());
  CHECK(n["points"][0]["value"].is_null());
  CHECK(n["points"][0]["converged"] == false);
  CHECK(contains(n["points"][0]["message"].get<std::string>(), "no crossing"));

  const auto s = run_json(common + " --steepest idg");
  CHECK(s["criterion"]["type"] == "steepest");
  CHECK(!s.contains("derivative_step"));  // the slope is exact (docs/sensitivity.md §22)
  CHECK(s["points"][0].contains("slope"));
  // The x axis is linear unless --log-x: the JSON names the derivative maximized.
  CHECK(s["scale"] == "linear");
  CHECK(s["derivative"] == "d idg / d rho");
  const auto l = run_json(common + " --steepest idg --log-x");
  CHECK(l["scale"] == "log");
  CHECK(l["derivative"] == "d idg / d ln rho");
  CHECK(l["points"][1]["rho"] != s["points"][1]["rho"]);
  // Level and argmin: the same answer on either axis.
  CHECK(run_json(common + " --level idg=0.3 --log-x")["points"][1]["rho"].get<double>() ==
        doctest::Approx(j["points"][1]["rho"].get<double>()).epsilon(1e-8));
}

TEST_CASE("icl boundary --out F.tsv: one header row, one row per y, and the JSON sidecar") {
  const Scratch dir("cli_boundary_out");
  const auto out = expect_tsv_output("boundary --x lambda=0.001:10 --y alpha=1:4:3 --argmin idg --quiet",
                                     dir.file("b.tsv"),
                                     "alpha\tlambda\tvalue\tconverged\tcandidates\tevaluations\n", 3);
  CHECK(contains(out.sidecar.dump(), "\"argmin\""));
}

TEST_CASE("icl boundary: bad criterion, --x, --y, --level are exit 2 with one line") {
  // The checks of BoundaryOptions::validate() name the library's field ("invalid parameter F").
  expect_bad_inputs({
      {"boundary --x rho=0.1:1 --y alpha=1:2:2", "criterion"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest idg --argmin idg", "excludes"},
      {"boundary --x rho=0.1:1:5 --y alpha=1:2:2 --steepest idg", "--x"},
      {"boundary --x beta=0.1:1 --y alpha=1:2:2 --steepest idg", "invalid parameter x"},
      {"boundary --x rho=0.1:1 --y alpha=1:2 --steepest idg", "--y"},
      {"boundary --x rho=0.1:1 --y rho=0.1:0.2:2 --steepest idg", "invalid parameter y"},
      {"boundary --x rho=0.1:2 --y alpha=1:2:2 --steepest idg", "invalid parameter hi"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --level idg", "--level"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --level idg=x", "--level"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --level idg=inf", "invalid parameter level"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest foo", "invalid parameter quantity"},
      {"boundary --x rho=0.1:1 --y alpha=-1:2:2 --steepest idg", "invalid parameter alpha"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest idg --scan-points 4",
       "invalid parameter scan_points"},
      {"boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest idg --method foo",
       "invalid parameter method"},
  });
}
