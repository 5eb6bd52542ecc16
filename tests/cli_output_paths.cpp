// Every file a command writes is settled while its flags are parsed, before any work, by one
// rule (numerics::prepare_output_file / prepare_output_folder; docs/cli.md "Shared flags"): a
// folder where a file is expected, a folder that cannot be created and a folder where no file
// can be created are exit 2 with one line, and nothing is computed or overwritten.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("icl --out/--save: a folder, or a folder that cannot be created, is exit 2 before any work") {
  const Scratch dir("cli_output_paths");
  fs::create_directories(dir / "existing");
  {
    std::ofstream keep(dir / "existing" / "earlier.json");
    keep << "{}";
  }
  {
    std::ofstream file(dir / "a_file");
    file << "x";
  }
  const std::string folder = dir.file("res") + "/";
  const std::string existing = dir.file("existing");
  const std::string under_file = dir.file("a_file") + "/w.txt";
  // The expensive commands: each would compute for seconds to minutes before writing.
  expect_bad_inputs({
      {("simulate --dim 30 --seeds 40 --out " + folder).c_str(), "names a folder"},
      {("simulate --dim 30 --seeds 40 --out " + existing).c_str(), "is an existing folder"},
      {("verify --quick --out " + existing).c_str(), "is an existing folder"},
      {("sweep --vary alpha=1:2:3 --simulate --dim 20 --seeds 2 --out " + folder).c_str(),
       "names a folder"},
      {("phase --x rho=0.1:1:3 --y alpha=1:2:3 --out " + existing).c_str(), "existing folder"},
      {("patch train --train-steps 3000 --save " + under_file).c_str(),
       "exists and is not a folder"},
      {("patch train --train-steps 3000 --save " + folder).c_str(), "--save"},
      {("patch check --out " + under_file).c_str(), "exists and is not a folder"},
      {("figs spectrum --quick --out " + dir.file("a_file")).c_str(), "not a folder"},
      {("merge x.tsv --out " + existing).c_str(), "existing folder"},
  });
  // Nothing was created or overwritten.
  CHECK(!fs::exists(dir / "res"));
  CHECK(slurp(dir / "existing" / "earlier.json") == "{}");
  CHECK(slurp(dir / "a_file") == "x");
}

TEST_CASE("icl --out: a missing folder is created while the flags are parsed") {
  const Scratch dir("cli_output_paths_create");
  const std::string out = dir.file("new/sub/s.json");
  const Run r = run_icl("solve --out " + out);
  CHECK(r.code == 0);
  CHECK(fs::exists(out));
}

TEST_CASE("icl mistakes get suggestions: unknown commands and flags name the closest, seeds are unsigned") {
  expect_bad_inputs({
      {"solvee", "unknown command 'solvee' (did you mean 'solve'?)"},
      {"patch chek", "unknown command 'chek' (did you mean 'check'?)"},
      {"solve --alpah 2", "unknown flag '--alpah' for 'icl solve' (did you mean '--alpha'?)"},
      {"sweep --vary alpha=1:2:3 --lgo", "(did you mean '--log'?)"},
      {"patch check --contxt 3", "for 'icl patch check' (did you mean '--context'?)"},
      {"simulate --dim 10 --seeds 2 --seed -1", "--seed: the seed is an integer in [0, "},
      {"verify --seed +3", "--seed"},
  });
}

TEST_CASE("--out F.csv writes CSV where a table is written and is refused where JSON is") {
  // docs/cli.md "Tables": a table's --out ending in .csv is CSV (the sweep test in
  // cli_simulate_sizes_memory.cpp compares it with the TSV); a JSON output named .csv or .tsv is
  // exit 2 while the flags are parsed (solve, simulate, optimize), or before the work (boundary
  // --json), and nothing is written.
  const Scratch d("cli_out_csv");
  // (appending: "'" + string trips GCC 12's -Wrestrict false positive, bug 105329)
  expect_bad_input("solve --out " + d.file("x.csv"),
                   std::string(1, '\'').append(d.file("x.csv")).append(
                       "' names a CSV table, but this output is JSON"));
  expect_bad_input("simulate --dim 4 --seeds 1 --out " + d.file("x.tsv"), "names a TSV table");
  expect_bad_input("optimize --minimize idg --over lambda --out " + d.file("x.CSV"),
                   "names a CSV table");
  expect_bad_input("boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest idg --json --out " +
                       d.file("b.tsv"),
                   "names a TSV table");
  CHECK(!fs::exists(d.file("x.csv")));
  const auto b = run_icl("boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest idg --quiet --out " +
                         d.file("b.csv"));
  REQUIRE(b.code == 0);
  CHECK(slurp(d.file("b.csv")).rfind("alpha,rho,value,slope,converged", 0) == 0);
}
