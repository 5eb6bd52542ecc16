// icl simulate at the sizes it simulates (docs/simulation.md §13.1) and within the machine's
// memory (§13.9, docs/cli.md "Memory and size").
#include <algorithm>
#include <cmath>

#include "tests/cli_harness.hpp"

using namespace icl_test;

// An address-space limit for one command. OPENBLAS_NUM_THREADS=1: Debian's OpenBLAS, when it is
// the system's libblas.so.3 (which Ceres links), starts a thread pool as it loads whose threads
// map 128 MB each and retry forever when the limit refuses it (a hang of every program linking
// it, not a property of icl); one thread starts none. The simulator's own products do not use
// OpenBLAS under such a limit (numerics/blas.cpp, docs/simulation.md §13.4).
const char* const kAddressLimit150MB = "ulimit -v 150000; export OPENBLAS_NUM_THREADS=1;";
const char* const kAddressLimit250MB = "ulimit -v 250000; export OPENBLAS_NUM_THREADS=1;";

TEST_CASE("icl simulate compares with the theory at the simulated ratios and warns when they moved") {
  // rho 0.01 at D = 20 is r = round(0.2) -> 1, i.e. rho 0.05: the comparison is there.
  const Run r = run_icl("simulate --dim 20 --rho 0.01 --seeds 2 --prompts 0 --json --quiet");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(contains(r.err, "warning: at D = 20 the integer sizes move rho from 0.01 to 0.05 (+400.0%)"));
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["params"]["rho"] == 0.01);
  CHECK(j["simulated_params"]["rho"] == 0.05);
  CHECK(j["theory"]["params"]["rho"] == 0.05);
  CHECK(j["sizing"][0]["name"] == "rho");
  CHECK(j["sizing"][0]["relative_change"].get<double>() == doctest::Approx(4.0));
  // The sizing warning, and the finite-D prediction's range (r = 1: the task norms' variance
  // 2/r is not small, docs/finite_dim.md §21.9).
  REQUIRE(j["notes"].size() == 2);
  CHECK(contains(j["notes"][1].get<std::string>(), "the finite-D prediction is outside"));
  CHECK(j["finite_dim"]["validity"]["valid"] == false);
  REQUIRE(j["comparison"].size() == 9);
  const auto& idg = j["comparison"][1];
  CHECK(idg["quantity"] == "error.idg");
  CHECK(idg["theory"] == j["theory"]["error"]["idg"]);
  CHECK(idg["finite_dim"] == j["finite_dim"]["error"]["idg"]);
  CHECK(idg["bayes_optimal"] == j["theory"]["bayes_optimal"]["idg"]);
  CHECK(idg["z"].get<double>() == doctest::Approx((idg["mean"].get<double>() - idg["theory"].get<double>()) /
                                                  idg["sem"].get<double>()));
  // The text output says which ratios were simulated.
  const Run t = run_icl("simulate --dim 20 --rho 0.01 --seeds 2 --prompts 0 --quiet");
  CHECK(contains(t.out, "simulated ratios (theory compared there): rho 0.05 (given 0.01)"));
  CHECK(contains(t.out, "finite-D (z)"));
  // Every ratio exact at D: no warning, the theory at the given point.
  const Run exact = run_icl("simulate --dim 20 --rho 0.5 --seeds 1 --prompts 0 --json --quiet");
  REQUIRE(exact.code == 0);
  CHECK(!contains(exact.err, "warning"));
  CHECK(nlohmann::json::parse(exact.out)["theory"]["params"]["rho"] == 0.5);
}

TEST_CASE("a simulation beyond the available memory is refused before any work, with the estimate") {
  // N = round(100 * 2000^2) sequences of D = 2000: tens of terabytes.
  const Run r = expect_bad_input("simulate --dim 2000 --tau 100 --seeds 1", "invalid parameter dim");
  CHECK(contains(r.err, "needs about"));
  CHECK(contains(r.err, "available (MemAvailable in /proc/meminfo)"));
}

TEST_CASE("the memory estimate of a simulation is its measured peak, up to the process's own") {
  // D = 160, N = 57600: the N x D arrays dominate (docs/simulation.md §13.9).
  const auto j = run_json("simulate --dim 160 --seeds 1 --prompts 0 --no-theory --json --quiet");
  const double estimate = j["memory"]["estimate_bytes"], peak = j["memory"]["peak_resident_bytes"];
  CAPTURE(estimate);
  CAPTURE(peak);
  CHECK(estimate > 1.4e8);
  CHECK(estimate <= peak);
  CHECK(peak <= 1.1 * estimate + 3e7);  // the program, its libraries and the theory: < 30 MB
}

TEST_CASE("an allocation that fails is exit 4 with a message, not a crash") {
  // 150 MB of address space cannot hold the simulation's 147 MB of arrays and the program.
  const Run r = run_icl("simulate --dim 160 --seeds 1 --prompts 0 --quiet", default_scratch(),
                        kAddressLimit150MB);
  CHECK(r.code == 4);
  CHECK(contains(r.err, "icl: out of memory: an allocation failed"));
  CHECK(count_lines(r.err) == 1);
}

TEST_CASE("an absurd phase grid is refused before any work with its size, time and output") {
  // 1e12 points: years at any speed a solve has here.
  const Run r = expect_bad_input("phase --x rho=0.1:1:1000000 --y kappa=0.1:2:1000000",
                                 "invalid parameter grid: a 1000000 x 1000000 grid (1e+12 points");
  CHECK(contains(r.err, "exceeds a day"));
  // Within a day but not within the disk: 4e8 points of about 50 numbers (an upper bound of
  // 25 bytes each: 0.5 TB), to --out and to stdout (run_icl redirects it to a file).
  const Scratch scratch;
  const std::string grid = "phase --x rho=0.1:1:20000 --y kappa=0.1:2:20000 --method reduced";
  std::error_code ec;
  const auto space = fs::space(fs::path(scratch), ec);
  if (ec || space.available > 4e11) {
    MESSAGE("skipped the output-size refusal: the scratch file system has more than 0.4 TB free");
    return;
  }
  const Run out = expect_bad_input(grid + " --out " + (fs::path(scratch) / "g.tsv").string(),
                                   "invalid parameter grid: a 20000 x 20000 grid (4e+08 points");
  CHECK(contains(out.err, "writes up to"));
  CHECK(contains(out.err, "has "));
  CHECK(!fs::exists(fs::path(scratch) / "g.tsv"));
  const Run piped = expect_bad_input(grid, "invalid parameter grid");
  CHECK(contains(piped.err, "the file system stdout is redirected to"));
}

TEST_CASE("icl phase streams its rows: the memory does not grow with the grid, --out .csv is CSV") {
  const Scratch scratch;
  const fs::path dir = scratch;
  const fs::path tsv = dir / "grid.tsv", csv = dir / "grid.csv";
  const auto small = expect_tsv_output("phase --x rho=0.1:1:4 --y kappa=0.2:2:3 --quiet",
                                       tsv.string(), "index\trho\tkappa", 12);
  // The same grid as CSV: the same numbers, commas for tabs.
  const Run c = run_icl("phase --x rho=0.1:1:4 --y kappa=0.2:2:3 --quiet --out " + csv.string());
  REQUIRE(c.code == 0);
  std::string as_csv = small.tsv;
  std::replace(as_csv.begin(), as_csv.end(), '\t', ',');
  CHECK(slurp(csv) == as_csv);
  CHECK(fs::exists(csv.string() + ".json"));
  // Rows are written as they complete: 160000 points (about 2 kB each when held at once) in
  // 250 MB of address space, most of it the program's libraries and thread stacks.
  const Run big = run_icl("phase --x rho=0.1:1:400 --y kappa=0.1:2:400 --method reduced --quiet "
                          "--out " + (dir / "big.tsv").string(), dir, kAddressLimit250MB);
  INFO(big.err);
  CHECK(big.code == 0);
  CHECK(count_lines(slurp(dir / "big.tsv")) == 160001);
}

TEST_CASE("under an address-space limit the simulator's products are Eigen's: the same fit to the CG tolerance") {
  // numerics/blas.cpp: OpenBLAS is not used under ulimit -v (it would retry its buffer mapping
  // forever). Eigen's products equal OpenBLAS's to rounding; CG may then stop an iteration
  // earlier or later, so the errors agree to the tolerance's effect (cond x 1e-6 on Gamma,
  // docs/simulation.md §13.4; measured 5e-8 relative here), far from the seeds' spread.
  const std::string cmd = "simulate --dim 16 --seeds 2 --prompts 0 --no-theory --json --quiet";
  const auto blas = run_json(cmd);
  const Run r = run_icl(cmd, default_scratch(), "ulimit -v 4000000; export OPENBLAS_NUM_THREADS=1;");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto eigen = nlohmann::ordered_json::parse(r.out);
  for (const char* e : {"tm", "idg", "odg"}) {
    CAPTURE(e);
    const double a = blas["error"][e]["mean"], b = eigen["error"][e]["mean"];
    CHECK(std::abs(a - b) <= 1e-6 * std::abs(a));
    CHECK(a != b);  // the two runs did use different products
  }
  const double it_blas = blas["cg"]["iterations"]["mean"], it_eigen = eigen["cg"]["iterations"]["mean"];
  CHECK(std::abs(it_blas - it_eigen) <= 1);
}
