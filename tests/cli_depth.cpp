// `icl depth` (docs/multistep_depth.md §8): the JSON layout, the simulation block, bad input.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("icl depth --json: the documented keys; --simulate adds the simulation block") {
  const auto j = run_json("depth --alpha 2 --sigma 0.1 --layers 4 --json");
  CHECK(keys(j) == std::vector<std::string>{
                       "params", "error", "gamma_opt", "step_opt", "per_layer_error",
                       "per_layer_steps", "per_layer_realizable", "per_layer_roots", "error_by_depth",
                       "step_by_depth", "step_one_over_c", "error_at_one_over_c", "local_minima",
                       "g_bound", "converged", "status", "message"});
  CHECK(j["gamma_opt"].get<double>() == doctest::Approx(4 * j["step_opt"].get<double>()));
  CHECK(j["per_layer_error"].get<double>() <= j["error"].get<double>());
  const auto s = run_json("depth --layers 2 --simulate --dim 30 --seeds 4 --json");
  CHECK(s["simulation"]["dim"] == 30);
  CHECK(s["simulation"]["seeds"] == 4);
  CHECK(s["simulation"].contains("mean"));
  CHECK(s["simulation"].contains("sem"));
  const Run t = run_icl("depth --layers 2");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("depth L = 2") == 0);
}

TEST_CASE("icl depth: bad input is exit 2 naming the field") {
  expect_bad_inputs({
      {"depth --layers 0", "invalid parameter layers"},
      {"depth --alpha 0", "invalid parameter alpha"},
      {"depth --sigma -1", "invalid parameter sigma"},
      {"depth --simulate --seeds 1", "invalid parameter seeds"},
  });
}
