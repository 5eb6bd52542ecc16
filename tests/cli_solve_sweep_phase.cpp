// The `icl` program as a user runs it: exit codes, messages, JSON, TSV files, atomic writes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "theory/lowrank.hpp"

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("icl --help and --version") {
  const Run h = run_icl("--help");
  CHECK(h.code == 0);
  CHECK(contains(h.out, "solve"));
  const Run v = run_icl("--version");
  CHECK(v.code == 0);
  CHECK(contains(v.out, "icl "));
}

TEST_CASE("icl solve prints the three errors and its JSON matches the library") {
  const Run t = run_icl("solve");
  REQUIRE(t.code == 0);
  for (const char* k : {"TM", "IDG", "ODG"}) CHECK(contains(t.out, k));
  const auto doc = run_json("solve --json --alpha 3 --gamma 2 --rho 0.4 --lambda 0.1 --sigma-test 0.2");
  CHECK(doc.at("converged").get<bool>());
  CHECK(doc.at("status") == "converged");
  CHECK(doc.at("message").is_string());
  CHECK(doc.at("method") == "saddle");
  CHECK(doc.at("params").at("tau").get<double>() == doctest::Approx(2 * 1.5));
  CHECK(doc.at("params").at("gamma").get<double>() == doctest::Approx(2));
  icl::theory::Params p{.alpha = 3, .alpha_test = -1, .tau = 3, .kappa = 1.5, .rho = 0.4,
                         .sigma = 0.3, .sigma_test = 0.2, .lambda = 0.1};
  const auto s = icl::theory::solve(p);
  CHECK(doc.at("error").at("idg").get<double>() == doctest::Approx(s.error.idg).epsilon(1e-14));
  CHECK(doc.at("decomposition").at("odg").at("struct").get<double>() ==
        doctest::Approx(s.decomposition.odg.structural).epsilon(1e-14));
  for (const char* k : {"q", "m", "chi", "qbar", "chibar", "mbar", "m0", "q0", "qhat", "mhat",
                        "chihat", "qbarhat", "chibarhat"})
    CHECK(doc.at("order").contains(k));
  CHECK(doc.at("regime") == "task-rich");
  CHECK(run_json("solve --json --method letey --tau 0.6").at("method") == "letey");
}

TEST_CASE("bad input: exit 2 with a one-line message naming the flag") {
  expect_bad_inputs({
      {"solve --rho 1.5", "--rho"},         {"solve --rho 0", "(0, 1]"},
      {"solve --sigma -1", "--sigma"},      {"solve --alpha nan", "--alpha"},
      {"solve --kappa abc", "--kappa"},     {"solve --lambda -0.1", "--lambda"},
      {"solve --tau 0.5", "tau"},           {"solve --bogus 1", "bogus"},
      {"solve --method magic", "method"},   {"solve --tau 2 --gamma 1", "gamma"},
      {"sweep --vary alpha=1:2", "START:STOP:COUNT"},
      {"sweep --vary zeta=1:2:3", "unknown parameter"},
      {"sweep --vary rho=0.5:1.5:3", "rho"},
      {"phase --x rho=0.1:1:3 --y rho=0.1:1:3", "different"},
      {"solve --out /proc/version/sub/x.json", "cannot create the folder"},  // a file, not a folder
  });
}

TEST_CASE("bad physics flags, --dim and --threads: exit 2 with one line naming the flag") {
  // Out-of-range values are refused by the flag parser (the shared flag groups of
  // cli/common.hpp), before any work starts.
  expect_bad_inputs({
      {"solve --sigma-test -1", "--sigma-test"},
      {"solve --alpha-test 0", "--alpha-test"},
      {"solve --gamma -2", "--gamma"},
      {"solve --tau inf", "--tau"},
      {"sweep --vary alpha=1:2:3 --kappa 0", "--kappa"},
      {"phase --x rho=0.1:1:3 --y kappa=0.5:2:3 --alpha -1", "--alpha"},
      {"simulate --dim 8 --seeds 2 --rho 2", "--rho"},
      {"simulate --dim 1 --seeds 2", "--dim"},
      {"simulate --dim 2001 --seeds 2", "--dim"},
      {"sweep --vary alpha=1:2:3 --simulate --dim 1", "--dim"},
      {"sweep --vary alpha=1:2:3 --simulate --dim 2001", "--dim"},
      {"softmax --dim 1", "--dim"},
      {"simulate --dim 8 --seeds 2 --threads 1000", "--threads"},
      {"simulate --dim 8 --seeds 2 --threads -1", "--threads"},
      {"sweep --vary alpha=1:2:3 --simulate --threads 1000", "--threads"},
      {"phase --x rho=0.1:1:3 --y kappa=0.5:2:3 --threads 1000", "--threads"},
      {"figs --list --threads 0", "--threads"},
      {"figs --list --threads 1000", "--threads"},
  });
}

TEST_CASE("parameters valid one by one but not together: exit 2, 'invalid parameter <field>'") {
  // icl::InvalidParams from the library reaches main() unchanged (one error path).
  const BadInput cases[] = {
      {"solve --tau 0.5", "invalid parameter lambda: "},
      {"solve --method reduced --gamma 0.5", "invalid parameter lambda: "},
      {"solve --method letey --tau 1 --kappa 1", "invalid parameter tau: "},
      {"solve --method letey --lambda 0.1", "invalid parameter lambda: "},
      {"solve --task-spectrum 1:0.5,2:0.6", "invalid parameter task_spectrum: "},
  };
  for (const auto& c : cases) {
    const Run r = expect_bad_input(c.args, c.needle);
    CHECK(r.err.rfind(std::string("icl: ") + c.needle, 0) == 0);
  }
  // A malformed --task-spectrum names the field (theory::task_spectrum_from_string).
  expect_bad_input("solve --task-spectrum powerlaw:-1:3", "invalid parameter task_spectrum: ");
}

TEST_CASE("icl sweep and phase write TSV with one header line and a JSON sidecar") {
  const Scratch d;
  const std::string f = d.file("sweep.tsv");
  const auto [tsv, side] =
      expect_tsv_output("sweep --vary alpha=0.5:4:5 --quiet", f, "index\talpha\tconverged\tresidual", 5);
  CHECK(side.at("vary").at("name") == "alpha");
  CHECK(side.at("params").contains("rho"));
  // A failed run never destroys earlier output.
  const Run bad = run_icl("sweep --vary rho=0.5:2:3 --quiet --out " + f);
  CHECK(bad.code == 2);
  CHECK(slurp(f) == tsv);

  expect_tsv_output("phase --x rho=0.1:1:4 --y kappa=0.25:2:3 --quiet", d.file("phase.tsv"),
                    "index\trho\tkappa\ttask_rich\tatom_mass", 12);
}

TEST_CASE("--out into a missing folder creates it before computing; progress in a log stays short") {
  const Scratch scratch;
  const fs::path root = scratch / "missing_out";
  // 400 points: on a terminal one line updated in place; into a file (here) a line at most
  // every 5 s per stage plus the last one, not 400 carriage returns.
  const Run r = run_icl("sweep --vary alpha=0.5:8:400 --out " + (root / "a" / "b" / "alpha.tsv").string());
  REQUIRE(r.code == 0);
  CHECK(fs::exists(root / "a" / "b" / "alpha.tsv"));
  CHECK(fs::exists(root / "a" / "b" / "alpha.tsv.json"));
  CHECK(r.err.find('\r') == std::string::npos);
  CHECK(count_lines(r.err) <= 3);
  CHECK(contains(r.err, "400/400"));
  // A folder that cannot be created is exit 2 at parse time, naming --out.
  fs::create_directories(root);
  { std::ofstream(root / "file") << "x"; }
  const Run bad = run_icl("solve --json --out " + (root / "file" / "sub" / "x.json").string());
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "--out"));
  CHECK(count_lines(bad.err) == 1);
}

TEST_CASE("icl simulate --sphere-queries --fixed-norm-tasks reach the simulator and its JSON") {
  // docs/simulation.md §13.7: the JSON records the switches ("finite_d_switches", all off by
  // default), and with the flags the errors differ from the default run at the same seed (the
  // data were rescaled).
  const Run off = run_icl("simulate --dim 8 --seeds 2 --no-theory --json --quiet");
  const Run on = run_icl(
      "simulate --dim 8 --seeds 2 --no-theory --json --quiet --sphere-queries --fixed-norm-tasks");
  REQUIRE(off.code == 0);
  REQUIRE(on.code == 0);
  const auto a = nlohmann::json::parse(off.out), b = nlohmann::json::parse(on.out);
  CHECK(a.at("finite_d_switches").at("sphere_queries") == false);
  CHECK(a.at("finite_d_switches").at("assignment") == "random");
  CHECK(b.at("finite_d_switches").at("sphere_queries") == true);
  CHECK(b.at("finite_d_switches").at("fixed_norm_tasks") == true);
  CHECK(a.at("error").at("idg").at("mean") != b.at("error").at("idg").at("mean"));
  // The same flags on icl verify are accepted (its run is covered by test_verify).
  const Run help = run_icl("verify --help");
  CHECK(contains(help.out, "--sphere-queries"));
  CHECK(contains(help.out, "--fixed-norm-tasks"));
}

TEST_CASE("icl solve that fails: the JSON with status, message, residual and nulls, then exit 3") {
  // kappa = 1e-300: the Marchenko-Pastur ratio rho/kappa overflows the quadrature; the result is
  // still printed (and written to --out), and its message names the quantity that failed.
  const Scratch dir("cli_solve_failure");
  for (const std::string& out : {std::string(), dir.file("s.json")}) {
    const Run r = run_icl("solve --kappa 1e-300 --json" + (out.empty() ? "" : " --out " + out), dir);
    CHECK(r.code == 3);
    CHECK(count_lines(r.err) == 1);
    CHECK(contains(r.err, "resolvent moments"));
    const auto j = nlohmann::json::parse(out.empty() ? r.out : slurp(out));
    CHECK(j["converged"] == false);
    CHECK(j["status"] == "numerical_failure");
    CHECK(j["error"]["idg"].is_null());
    CHECK(j["order"]["q"].is_null());
    CHECK(contains(j["message"].get<std::string>(), "resolvent moments R_{k,j}(z) of S"));
  }
  const Run text = run_icl("solve --kappa 1e-300", dir);
  CHECK(text.code == 3);
  CHECK(contains(text.out, "numerical_failure"));
}
