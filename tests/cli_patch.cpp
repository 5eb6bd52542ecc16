// `icl patch` as a user runs it: the identity holds, the negative controls fail, bad options
// are exit 2.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using icl_test::run_icl;

TEST_CASE("icl patch check: exact rank-1 patch with failing negative controls") {
  const auto r = run_icl("patch check --layers 3 --pre-ln --width 8 --heads 2 --head-dim 4 --mlp 16 "
                         "--d 2 --context 12 --seed 3 --json",
                         icl_test::scratch("cli_patch_scratch"));
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("max_rel_diff").get<double>() < 1e-12);
  CHECK(j.at("rank").get<int>() == 1);
  CHECK(j.contains("negative_controls"));
  CHECK(j.at("negative_controls").dump().find("weight") != std::string::npos);
}

TEST_CASE("icl patch: bad options are exit 2 with a message") {
  const char* cases[] = {"patch check --heads 0", "patch check --weights /nonexistent/w.txt",
                         "patch check --layers 0", "patch check --kind lstm", "patch check --chunk 9:3"};
  for (const char* c : cases) {
    CAPTURE(c);
    const auto r = run_icl(c, icl_test::scratch("cli_patch_scratch"));
    CHECK(r.code == 2);
    CHECK(!r.err.empty());
  }
}
