// `icl figs` as a user runs it: the figure list, bad names, one quick figure end to end (TSV +
// sidecar + PDF/PNG), and a failing plot step giving a non-zero exit. The whole quick pipeline
// (`icl figs all --quick`) is the ctest test figs_quick_pipeline (paper_figs/CMakeLists.txt).
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

namespace {

Run run_figs(const std::string& args, const fs::path& dir, const std::string& env = "") {
  return run_icl("figs " + args, dir, env);
}

}  // namespace

TEST_CASE("icl figs --list: twenty-two figures, numbered 1-22 in order") {
  const Scratch d("cli_figs_list");
  const Run r = run_figs("--list", d);
  REQUIRE(r.code == 0);
  const char* names[] = {"decomposition", "order_params", "test_context", "implicit_reg",
                         "phase",         "spectrum",     "softmax",      "patch_loss",
                         "patch_layers",  "patch_steps",  "patch_align",  "thought_patch",
                         "transition_alpha", "bayes_gap", "optimal_ridge", "test_overlap",
                         "patch_blocks", "finite_dim", "sensitivity", "cot", "depth", "finite_dim_grid"};
  std::istringstream in(r.out);
  std::string line;
  REQUIRE(std::getline(in, line));  // the header
  CHECK(line.rfind("#", 0) == 0);
  int n = 0;
  for (; std::getline(in, line); ++n) {
    REQUIRE(n < 22);
    std::istringstream fields(line);
    int number = 0;
    std::string name, paper, description;
    fields >> number >> name >> paper;
    std::getline(fields, description);
    CHECK(number == n + 1);
    CHECK(name == names[n]);
    CHECK(!paper.empty());
    CHECK(description.find_first_not_of(' ') != std::string::npos);
    CHECK(!contains(line, "not yet available"));
  }
  CHECK(n == 22);
}

TEST_CASE("icl figs: bad names are exit 2 with a message") {
  const Scratch d("cli_figs_bad");
  Run r = run_figs("", d);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--list"));
  r = run_figs("nosuchfigure --out " + d.file("o"), d);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "unknown figure 'nosuchfigure'"));
  r = run_figs("23 --out " + d.file("o"), d);   // one past the last figure
  CHECK(r.code == 2);
  CHECK(!r.err.empty());
  CHECK(!fs::exists(d / "o" / "figs_run.json"));
}

TEST_CASE("icl figs spectrum --quick: TSVs with sidecars, PDF and PNG") {
  const Scratch d("cli_figs_spectrum");
  const fs::path out = d / "figs";
  const Run r = run_figs("6 --quick --out " + out.string(), d);
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* stem : {"spectrum", "spectrum_eigs", "spectrum_atoms"}) {
    const fs::path tsv = out / (std::string(stem) + ".tsv");
    REQUIRE(fs::is_regular_file(tsv));
    const std::string text = slurp(tsv);
    CHECK(text.rfind("case\t", 0) == 0);  // one header line, no '#' lines
    CHECK(!contains(text, "#"));
    const auto side = nlohmann::json::parse(slurp(out / (std::string(stem) + ".tsv.json")));
    CHECK(side.contains("version"));
    CHECK(contains(side.at("command").get<std::string>(), "figs"));
    CHECK(side.at("figure_command").get<std::string>() == "icl figs spectrum --quick");
    CHECK(side.at("D").get<int>() == 20);
    CHECK(side.at("seeds").get<int>() == 4);
  }
  CHECK(fs::file_size(out / "spectrum.pdf") > 1000);
  CHECK(fs::file_size(out / "spectrum.png") > 1000);
  const auto run = nlohmann::json::parse(slurp(out / "figs_run.json"));
  CHECK(run.at("figures").at(0).at("ok").get<bool>());
  CHECK(contains(r.out, "spectrum.png"));
}

TEST_CASE("icl figs: a failing plot step is a non-zero exit") {
  const Scratch d("cli_figs_plotfail");
  const fs::path out = d / "figs";
  const Run r = run_figs("spectrum --quick --out " + out.string(), d, "ICL_FIGS_PYTHON=/bin/false");
  CHECK(r.code == 1);
  CHECK(contains(r.err, "FAILED"));
  CHECK(fs::is_regular_file(out / "spectrum.tsv"));  // the data step still wrote its tables
  // --plot-only with the real interpreter then completes the figure from those tables.
  const Run again = run_figs("spectrum --plot-only --out " + out.string(), d);
  INFO(again.err);
  CHECK(again.code == 0);
  CHECK(fs::is_regular_file(out / "spectrum.png"));
}
