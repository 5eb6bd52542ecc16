// `icl optimize` (docs/errors_phases.md §18): the JSON layout, the one-line text, and bad input
// (exit 2).
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("icl optimize --json: the documented keys, params at the argmin") {
  const auto j = run_json("optimize --minimize idg --over lambda --range 0.001:10 --json");
  CHECK(keys(j) == std::vector<std::string>{"objective", "over", "argmin", "minimum", "slope", "converged",
                                            "status", "message", "evaluations", "interior_minima",
                                            "range", "scale", "params"});
  CHECK(j["objective"] == "idg");
  CHECK(j["over"] == "lambda");
  CHECK(j["converged"] == true);
  CHECK(j["status"] == "converged");
  CHECK(j["scale"] == "log");
  CHECK(j["params"]["lambda"].get<double>() == j["argmin"].get<double>());
  CHECK(j["argmin"].get<double>() > 0.3);
  CHECK(j["argmin"].get<double>() < 1.5);
  // The same point through the text output and with dashes in --over.
  const Run t = run_icl("optimize --minimize idg --over lambda --range 0.001:10");
  REQUIRE(t.code == 0);
  CHECK(count_lines(t.out) == 1);
  CHECK(t.out.find("minimum idg = ") == 0);
  CHECK(run_icl("optimize --minimize odg --over alpha-test --range 0.5:20").code == 0);
}

TEST_CASE("icl optimize: bad --over, --range, --minimize are exit 2 with one line") {
  // The checks of OptimizeOptions::validate() name the library's field ("invalid parameter F").
  expect_bad_inputs({
      {"optimize --over beta", "invalid parameter over"},
      {"optimize --over lambda --range 1:0.5", "invalid parameter hi"},
      {"optimize --over lambda --range 1:", "--range"},
      {"optimize --over lambda --range 0.1:1:5", "--range"},
      {"optimize --over lambda --range a:b", "--range"},
      {"optimize --over lambda --range -1:1", "invalid parameter lo"},
      {"optimize --over rho --range 0.1:2", "invalid parameter hi"},
      {"optimize --over lambda --minimize shift", "invalid parameter objective"},
      {"optimize --over lambda --minimize foo", "invalid parameter objective"},
      {"optimize --over lambda --scan-points 2", "invalid parameter scan_points"},
      {"optimize --over lambda --method foo", "invalid parameter method"},
      {"optimize --minimize idg", "--over"},
  });
}
