// `icl cot` (docs/multistep.md §6): the JSON layout, the text, the simulation block, the phase
// TSV, and bad input (exit 2).
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("icl cot --json: the documented keys and the authors' first steps") {
  const auto j = run_json("cot --alpha 3 --tau 2 --sigma 0.01 --steps 4 --json");
  CHECK(keys(j) == std::vector<std::string>{"params", "converged", "status", "message",
                                            "precision_bits", "precision_agreement", "steps",
                                            "error", "error_tau_infinity", "tau_c",
                                            "tau_monotone", "tau_crit", "regime", "limit",
                                            "growth_rate", "t_opt", "error_t_opt"});
  CHECK(j["steps"].size() == 5);
  CHECK(j["error"][1].get<double>() == doctest::Approx(0.5000124996875).epsilon(1e-12));
  CHECK(j["regime"] == "convergent");
  CHECK(j["growth_rate"].is_null());  // NaN
  const Run t = run_icl("cot --alpha 3 --tau 2 --sigma 0.01 --steps 4");
  REQUIRE(t.code == 0);
  CHECK(contains(t.out, "regime convergent"));
}

TEST_CASE("icl cot --simulate: a simulation block; --phase: one TSV row per point") {
  const auto j = run_json(
      "cot --alpha 2 --tau 4 --steps 3 --simulate --dim 16 --seeds 2 --test-tasks 30 --threads 1 "
      "--quiet --json");
  REQUIRE(j.contains("simulation"));
  CHECK(j["simulation"]["mean"].size() == 4);
  CHECK(j["simulation"]["dim"] == 16);
  const Run p = run_icl("cot --phase --x alpha=0.5:2:2 --y tau=1.5:3:3 --steps 5");
  REQUIRE(p.code == 0);
  CHECK(count_lines(p.out) == 1 + 2 * 3);
  CHECK(p.out.rfind("alpha\ttau\tconverged\tregime", 0) == 0);
}

TEST_CASE("icl cot: bad input is exit 2 with one line naming the field") {
  expect_bad_inputs({
      {"cot --tau 1", "invalid parameter tau"},
      {"cot --lambda 0.1", "invalid parameter lambda"},
      {"cot --steps 5000", "invalid parameter steps"},
      {"cot --phase --x beta=1:2:2 --y tau=2:3:2", "invalid parameter x"},
      {"cot --phase --x alpha=1:2:2", "--phase needs"},
      {"cot --phase --simulate --x alpha=1:2:2 --y tau=2:3:2", "excludes"},
  });
}
