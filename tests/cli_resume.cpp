// --resume refusals that need no long run: --resume without an output file, and a leftover
// checkpoint of an unfinished run when --resume is not given (the kill-and-resume runs
// themselves are tests/resume_check.sh).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using icl_test::run_icl;
using icl_test::Run;
using icl_test::scratch;

TEST_CASE("--resume without --out is exit 2 naming --out (sweep --simulate, verify)") {
  for (const char* args : {"sweep --vary alpha=1:2:2 --simulate --dim 4 --seeds 2 --resume",
                           "verify --quick --resume"}) {
    CAPTURE(args);
    const Run r = run_icl(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("--resume needs --out") != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("a leftover checkpoint without --resume is exit 2 naming it, before any computation") {
  const fs::path d = scratch("cli_resume_scratch");
  const fs::path out = d / "run.tsv";
  fs::remove_all(d / "run.tsv.partial");
  fs::create_directories(d / "run.tsv.partial");
  std::ofstream(d / "run.tsv.partial" / "unit_point_0.json") << "[\"0.5\"]\n";
  const Run r = run_icl("sweep --vary alpha=1:2:2 --simulate --dim 4 --seeds 2 --quiet --out " +
                        out.string());
  CHECK(r.code == 2);
  CHECK(r.err.find("use --resume") != std::string::npos);
  CHECK(r.err.find("run.tsv.partial") != std::string::npos);
  CHECK(r.err.find("1 finished units") != std::string::npos);
  CHECK(!fs::exists(out));
  // Figures: the checkpoint of a folder is DIR.partial next to it.
  fs::create_directories(d / "figs.partial");
  const Run f = run_icl("figs spectrum --quick --no-plot --quiet --out " + (d / "figs").string());
  CHECK(f.code == 2);
  CHECK(f.err.find((d / "figs.partial").string()) != std::string::npos);
  CHECK(!fs::exists(d / "figs" / "spectrum.tsv"));
  fs::remove_all(d);
}
