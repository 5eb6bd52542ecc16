// --task-spectrum on the command line: which spectra take --rho (only complement:EPS), the
// conflict of --rho with the others, rho not varied under a spectrum, and the text header.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("--rho next to a task spectrum that does not use it is exit 2 naming the conflict") {
  for (const char* spectrum : {"powerlaw:1:10", "0.5:0.5,1.5:0.5"}) {
    const Run r = expect_bad_input(std::string("solve --rho 0.5 --task-spectrum ") + spectrum,
                                   "invalid parameter rho: conflicts with the task spectrum");
    CHECK(contains(r.err, "complement:EPS"));
  }
  // The same spectrum without --rho is fine.
  CHECK(run_icl("solve --task-spectrum powerlaw:1:10").code == 0);
}

TEST_CASE("complement:EPS takes --rho as its fraction of strong directions") {
  const auto ja = run_json("solve --json --task-spectrum complement:0.2 --rho 0.4");
  const auto jb = run_json("solve --json --task-spectrum complement:0.2 --rho 0.8");
  // Strong eigenvalue a = 1/(rho + EPS (1 - rho)) on a fraction rho (docs/general_covariance.md
  // §12.1).
  const auto& spec = ja.at("params").at("task_spectrum");
  CHECK(spec.at(0).at(1).get<double>() == doctest::Approx(0.4).epsilon(1e-15));
  CHECK(spec.at(0).at(0).get<double>() ==
        doctest::Approx(1.0 / (0.4 + 0.2 * 0.6)).epsilon(1e-14));
  // A different rho is a different covariance, hence a different IDG error.
  CHECK(ja.at("error").at("idg").get<double>() != jb.at("error").at("idg").get<double>());
}

TEST_CASE("icl solve's text header names the task spectrum in use instead of rho") {
  const Run spectrum = run_icl("solve --task-spectrum 0.5:0.5,1.5:0.5");
  REQUIRE(spectrum.code == 0);
  const std::string header = spectrum.out.substr(0, spectrum.out.find('\n'));
  CHECK(contains(header, "task spectrum 0.5:0.5,1.5:0.5"));
  CHECK(!contains(header, "rho"));
  const Run paper = run_icl("solve --rho 0.7");
  REQUIRE(paper.code == 0);
  CHECK(contains(paper.out.substr(0, paper.out.find('\n')), "rho 0.7"));
}

TEST_CASE("varying rho under a task spectrum is exit 2 naming rho (sweep, phase, optimize)") {
  for (const char* args :
       {"sweep --quiet --vary rho=0.2:0.8:3 --task-spectrum complement:0.2",
        "phase --quiet --x rho=0.2:0.8:3 --y kappa=0.5:1:2 --task-spectrum powerlaw:1:4",
        "optimize --over rho --task-spectrum powerlaw:1:4"}) {
    CAPTURE(args);
    const Run r = run_icl(args);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "invalid parameter rho"));
    CHECK(contains(r.err, "task spectrum"));
    CHECK(r.out.empty());
  }
}
