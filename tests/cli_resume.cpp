// --resume refusals that need no long run: --resume without an output file, and a leftover
// checkpoint of an unfinished run when --resume is not given (the kill-and-resume runs
// themselves are tests/resume_check.sh).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_harness.hpp"

using namespace icl_test;

TEST_CASE("--resume without --out is exit 2 naming --out (sweep --simulate, verify)") {
  for (const char* args : {"sweep --vary alpha=1:2:2 --simulate --dim 4 --seeds 2 --resume",
                           "verify --quick --resume"}) {
    CAPTURE(args);
    const Run r = run_icl(args);
    CHECK(r.code == 2);
    CHECK(contains(r.err, "--resume needs --out"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("a leftover checkpoint without --resume is exit 2 naming it, before any computation") {
  const Scratch d("cli_resume_scratch");
  const fs::path out = d / "run.tsv";
  fs::create_directories(d / "run.tsv.partial");
  std::ofstream(d / "run.tsv.partial" / "unit_point_0.json") << "[\"0.5\"]\n";
  const Run r = run_icl("sweep --vary alpha=1:2:2 --simulate --dim 4 --seeds 2 --quiet --out " +
                        out.string());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "use --resume"));
  CHECK(contains(r.err, "run.tsv.partial"));
  CHECK(contains(r.err, "1 finished units"));
  CHECK(!fs::exists(out));
  // Figures: the checkpoint of a folder is DIR.partial next to it.
  fs::create_directories(d / "figs.partial");
  const Run f = run_icl("figs spectrum --quick --no-plot --quiet --out " + (d / "figs").string());
  CHECK(f.code == 2);
  CHECK(contains(f.err, d.file("figs.partial")));
  CHECK(!fs::exists(d / "figs" / "spectrum.tsv"));
}
