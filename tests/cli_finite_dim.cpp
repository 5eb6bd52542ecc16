// `icl solve --finite-dim D` and `icl sweep --finite-dim D` (docs/finite_dim.md §21): the finite-D
// prediction in the JSON, the text and the sweep's TSV, and its bad inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theory/finite_dim.hpp"
#include "theory/serialize.hpp"

#include "cli_harness.hpp"

using namespace icl_test;

namespace {

constexpr const char* kErrors[] = {"tm", "idg", "odg"};

}  // namespace

TEST_CASE("icl solve --finite-dim: a finite_dim block whose sources sum to error - limit") {
  const auto doc = run_json("solve --json --finite-dim 40 --lambda 0.05");  // in key order
  REQUIRE(doc.contains("finite_dim"));
  const auto& fd = doc.at("finite_dim");
  for (const char* k : {"dim", "status", "message", "residual_norm", "sized", "error", "limit",
                        "slope", "order", "sources", "omitted", "finite_d_switches"})
    CHECK(fd.contains(k));
  CHECK(fd.at("dim") == 40);
  CHECK(fd.at("status") == "converged");
  for (const char* k : {"q", "m", "qbar", "mbar", "m0", "q0"}) CHECK(fd.at("order").contains(k));
  for (const char* k : {"sphere_queries", "fixed_norm_tasks", "gaussian_context"})
    CHECK(fd.at("finite_d_switches").at(k) == false);
  CHECK(fd.at("finite_d_switches").at("assignment") == "random");
  CHECK(!fd.at("omitted").empty());
  // The sources in the library's order, each with its slope and correction.
  const auto& names = icl::theory::finite_dim_source_names();
  REQUIRE(fd.at("sources").size() == names.size());
  std::size_t k = 0;
  for (const auto& [name, s] : fd.at("sources").items()) {
    CHECK(name == names[k++]);
    for (const char* e : kErrors)
      CHECK(s.at("correction").at(e).get<double>() ==
            doctest::Approx(s.at("slope").at(e).get<double>() / 40).epsilon(1e-14));
  }
  // error = limit + the sum of the corrections + the channel's second order (docs/finite_dim.md
  // §21.18): the JSON keeps 17 digits, so the sum of nine small terms agrees to rounding (1e-12
  // leaves a factor ~100 over that).
  for (const char* e : kErrors) {
    double sum = fd.at("second_order").at(e).get<double>();
    for (const auto& [name, s] : fd.at("sources").items()) sum += s.at("correction").at(e).get<double>();
    CHECK(std::abs(sum - (fd.at("error").at(e).get<double>() - fd.at("limit").at(e).get<double>())) < 1e-12);
  }
  // The values are the library's at the same point (the CLI only calls it).
  icl::theory::Params p;
  p.lambda = 0.05;
  const auto lib = icl::theory::solve_finite_dim(p, {.dim = 40});
  REQUIRE(lib.converged());
  CHECK(fd.at("error").at("idg").get<double>() == lib.error.idg);
  CHECK(fd.at("limit").at("odg").get<double>() == lib.limit.error.odg);
  CHECK(fd.at("sized").at("tau").get<double>() == lib.sized.tau);

  // Without the flag: no block (the JSON of `icl solve` as before).
  CHECK(!run_json("solve --json --lambda 0.05").contains("finite_dim"));
}

TEST_CASE("icl solve --finite-dim text: a finite D section with one line per source") {
  const Run r = run_icl("solve --finite-dim 40");
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "finite D = 40"));
  for (const auto& name : icl::theory::finite_dim_source_names()) CHECK(contains(r.out, name));
  CHECK(contains(r.out, "omitted"));
  const Run plain = run_icl("solve");
  REQUIRE(plain.code == 0);
  CHECK(!contains(plain.out, "finite D"));
  // The text before the section is `icl solve`'s, unchanged.
  CHECK(r.out.rfind(plain.out, 0) == 0);
}

TEST_CASE("icl solve --finite-dim switches remove their sources and are recorded") {
  const auto fd =
      run_json("solve --json --finite-dim 30 --sphere-queries --fixed-norm-tasks --assignment balanced")
          .at("finite_dim");
  for (const char* k : {"sphere_queries", "fixed_norm_tasks"})
    CHECK(fd.at("finite_d_switches").at(k) == true);
  CHECK(fd.at("finite_d_switches").at("assignment") == "balanced");
  // The sources these switches remove are predicted as exactly 0 (theory/finite_dim.hpp).
  for (const char* name : {"query_norms", "task_norms", "task_counts"})
    for (const char* e : kErrors) CHECK(fd.at("sources").at(name).at("correction").at(e) == 0.0);
  // And they are on by default: the switches change the prediction.
  const auto def = run_json("solve --json --finite-dim 30").at("finite_dim");
  CHECK(def.at("sources").at("query_norms").at("correction").at("idg") != 0.0);
  CHECK(def.at("error").at("idg") != fd.at("error").at("idg"));
}

TEST_CASE("icl solve/sweep --finite-dim bad input: exit 2 with one line naming the flag") {
  expect_bad_input("solve --finite-dim 1", "--finite-dim");
  expect_bad_input("solve --finite-dim x", "--finite-dim");
  // The ridgeless branch (lambda = 0, tau < 1) has a finite-D prediction (docs/finite_dim.md
  // §21.10), but not at its interpolation peak: tau = 1.01 is above the threshold, and N =
  // round(tau D^2) = 4 at D = 2 puts the sized point on it (tau = 1, lambda = 0), while plain
  // `icl solve` runs.
  CHECK(run_icl("solve --method letey --tau 0.6 --finite-dim 40").code == 0);
  CHECK(run_icl("solve --tau 1.01").code == 0);
  expect_bad_input("solve --tau 1.01 --finite-dim 2", "--finite-dim 2: invalid parameter tau");
  // A switch without --finite-dim has nothing to act on: the library's refusal names it
  // (theory::finite_dim_request), as Python's does.
  expect_bad_input("solve --sphere-queries", "invalid parameter sphere_queries: a finite-D switch needs finite_dim");
  expect_bad_input("solve --fixed-norm-tasks", "invalid parameter fixed_norm_tasks: a finite-D switch needs finite_dim");
  expect_bad_input("solve --assignment balanced", "invalid parameter assignment: a finite-D switch needs finite_dim");
  expect_bad_input("solve --finite-dim 40 --assignment magic", "--assignment");
  expect_bad_input("sweep --vary alpha=1:2:3 --finite-dim 1", "--finite-dim");
  expect_bad_input("sweep --vary alpha=1:2:3 --sphere-queries",
                   "invalid parameter sphere_queries: a finite-D switch needs finite_dim (the "
                   "finite-D prediction) or the simulation (--simulate)");
}

TEST_CASE("icl solve --finite-dim that fails: printed with null values, then exit 3") {
  // sigma = 1e5: the label noise swamps the tasks, and the perturbed maps of the linearization
  // (docs/finite_dim.md §21.2) leave the saddle point's domain, so it has no answer there; the
  // limit itself converges (plain `icl solve` exits 0).
  REQUIRE(run_icl("solve --sigma 100000").code == 0);
  const Run j = run_icl("solve --json --sigma 100000 --finite-dim 10");
  CHECK(j.code == 3);
  CHECK(count_lines(j.err) == 1);
  CHECK(contains(j.err, "--finite-dim 10"));
  const auto fd = nlohmann::json::parse(j.out).at("finite_dim");
  CHECK(fd.at("status") != "converged");
  CHECK(fd.at("message").get<std::string>().size() > 0);
  for (const char* block : {"error", "limit", "slope"})
    for (const char* e : kErrors) CHECK(fd.at(block).at(e).is_null());
  for (const auto& [name, s] : fd.at("sources").items())
    CHECK(s.at("correction").at("idg").is_null());
  const Run t = run_icl("solve --sigma 100000 --finite-dim 10");
  CHECK(t.code == 3);
  CHECK(contains(t.out, "no finite-D prediction"));
  // In a sweep the failed point is nan, counted in the sidecar, and the run exits 3.
  const Scratch d;
  const std::string f = d.file("failed.tsv");
  const Run s = run_icl("sweep --vary sigma=0.3:100000:2 --finite-dim 10 --quiet --out " + f);
  CHECK(s.code == 3);
  CHECK(contains(s.err, "1 of 2 finite-D predictions failed"));
  const Tsv tsv = parse_tsv(slurp(f));
  REQUIRE(tsv.rows.size() == 2);
  CHECK(tsv.rows[0].at(tsv.column("fd_idg")) != "nan");
  CHECK(tsv.rows[1].at(tsv.column("fd_idg")) == "nan");
  CHECK(nlohmann::json::parse(slurp(f + ".json")).at("finite_dim").at("failed_points") == 1);
}

TEST_CASE("icl sweep --finite-dim adds the fd_* columns, equal to solve_finite_dim per point") {
  const Scratch d;
  const std::string plain_file = d.file("plain.tsv"), fd_file = d.file("fd.tsv");
  const Run plain = run_icl("sweep --vary alpha=1:3:3 --quiet --out " + plain_file);
  const Run with = run_icl("sweep --vary alpha=1:3:3 --quiet --finite-dim 20 --out " + fd_file);
  REQUIRE(plain.code == 0);
  REQUIRE(with.code == 0);
  const Tsv a = parse_tsv(slurp(plain_file)), b = parse_tsv(slurp(fd_file));
  for (const auto& c : a.header) CHECK(c.rfind("fd_", 0) != 0);  // only with the flag
  // The same columns plus the fd_* of theory::finite_dim_columns, in the same rows; the other
  // cells unchanged.
  REQUIRE(b.header.size() == a.header.size() + icl::theory::finite_dim_columns().size());
  REQUIRE(b.rows.size() == 3);
  for (std::size_t i = 0; i < a.rows.size(); ++i)
    for (std::size_t c = 0; c < a.header.size(); ++c) CHECK(b.rows[i].at(b.column(a.header[c])) == a.rows[i][c]);
  icl::theory::Params p;
  for (std::size_t i = 0; i < b.rows.size(); ++i) {
    p.alpha = std::stod(b.rows[i].at(b.column("alpha")));
    const auto lib = icl::theory::solve_finite_dim(p, {.dim = 20});
    REQUIRE(lib.converged());
    // max_digits10 in the TSV: the value round-trips exactly.
    CHECK(std::stod(b.rows[i].at(b.column("fd_tm"))) == lib.error.tm);
    CHECK(std::stod(b.rows[i].at(b.column("fd_idg"))) == lib.error.idg);
    CHECK(std::stod(b.rows[i].at(b.column("fd_odg"))) == lib.error.odg);
    CHECK(std::stod(b.rows[i].at(b.column("fd_valid"))) == (lib.valid() ? 1.0 : 0.0));
    // The algo part and the Bayes baselines at D (docs/finite_dim.md §21.17, §21.16).
    CHECK(std::stod(b.rows[i].at(b.column("fd_idg_algo"))) == lib.decomposition.idg.algo);
    CHECK(std::stod(b.rows[i].at(b.column("fd_bayes_odg"))) == lib.bayes_optimal.odg);
  }
  const auto side = nlohmann::json::parse(slurp(fd_file + ".json"));
  CHECK(side.at("finite_dim").at("dim") == 20);
  CHECK(side.at("finite_dim").at("failed_points") == 0);
  CHECK(!nlohmann::json::parse(slurp(plain_file + ".json")).contains("finite_dim"));
}

TEST_CASE("icl sweep --finite-dim: points outside the finite-D theory are nan, not an error") {
  // Ridgeless (Letey/Lu): tau = 0.6 has its minimum-norm prediction (docs/finite_dim.md
  // §21.10); tau = 0.999 is the interpolation peak at D = 20 (N = round(399.6) = 400 = D^2).
  const Run r = run_icl("sweep --vary tau=0.6:0.999:2 --method letey --quiet --finite-dim 20");
  REQUIRE(r.code == 0);
  const Tsv t = parse_tsv(r.out);
  REQUIRE(t.rows.size() == 2);
  for (const auto& row : t.rows) CHECK(row.at(t.column("converged")) == "1");
  for (const char* c : {"fd_tm", "fd_idg", "fd_odg", "fd_tm_algo", "fd_valid"}) {
    CHECK(t.rows[0].at(t.column(c)) != "nan");
    CHECK(t.rows[1].at(t.column(c)) == "nan");
  }
}

TEST_CASE("icl sweep --simulate takes the switches too: the simulation runs with them") {
  // Without --finite-dim the switches apply to the simulation alone (same names as `icl
  // simulate`); the sidecar records them (and so does a checkpoint's options), and the
  // simulated errors differ from a run without them at the same seed (the data were rescaled).
  const Scratch d;
  const std::string on = d.file("on.tsv"), off = d.file("off.tsv");
  const std::string base = "sweep --vary alpha=1:2:2 --simulate --dim 6 --seeds 2 --quiet --out ";
  REQUIRE(run_icl(base + on + " --sphere-queries --assignment balanced").code == 0);
  REQUIRE(run_icl(base + off).code == 0);
  const auto side_on = nlohmann::json::parse(slurp(on + ".json"));
  const auto side_off = nlohmann::json::parse(slurp(off + ".json"));
  const auto& sw_on = side_on.at("simulation").at("finite_d_switches");
  const auto& sw_off = side_off.at("simulation").at("finite_d_switches");
  CHECK(sw_on.at("sphere_queries") == true);
  CHECK(sw_on.at("assignment") == "balanced");
  CHECK(sw_on.at("fixed_norm_tasks") == false);
  CHECK(sw_off.at("sphere_queries") == false);
  CHECK(sw_off.at("assignment") == "random");
  CHECK(!side_on.contains("finite_dim"));
  const Tsv a = parse_tsv(slurp(on)), b = parse_tsv(slurp(off));
  CHECK(a.header == b.header);
  CHECK(a.rows.at(0).at(a.column("sim_idg")) != b.rows.at(0).at(b.column("sim_idg")));
  CHECK(a.rows.at(0).at(a.column("idg")) == b.rows.at(0).at(b.column("idg")));
}

TEST_CASE("icl merge joins --finite-dim shards and sums their finite-D counts") {
  // Shard 1 holds the point whose prediction fails (sigma = 1e5, as above): the shards' counts
  // differ, which must not make them look like different runs; merged = unsharded, byte for byte.
  const Scratch d;
  const std::string args = "sweep --vary sigma=0.3:100000:2 --finite-dim 10 --quiet --out ";
  CHECK(run_icl(args + d.file("all.tsv")).code == 3);
  CHECK(run_icl(args + d.file("s0.tsv") + " --shard 0/2").code == 0);
  CHECK(run_icl(args + d.file("s1.tsv") + " --shard 1/2").code == 3);
  const Run m = run_icl("merge " + d.file("s0.tsv") + " " + d.file("s1.tsv") + " --out " + d.file("m.tsv"));
  REQUIRE(m.code == 0);
  CHECK(slurp(d.file("m.tsv")) == slurp(d.file("all.tsv")));
  const auto side = nlohmann::json::parse(slurp(d.file("m.tsv.json")));
  CHECK(side.at("finite_dim").at("failed_points") == 1);
  CHECK(side.at("finite_dim").at("not_covered_points") == 0);
  CHECK(side.at("failed_points") == 0);
  // Shards of another dimension are another run.
  CHECK(run_icl("sweep --vary sigma=0.3:100000:2 --finite-dim 12 --quiet --shard 1/2 --out " +
                d.file("s1.tsv")).code == 3);
  CHECK(run_icl("merge " + d.file("s0.tsv") + " " + d.file("s1.tsv") + " --out " + d.file("m2.tsv")).code == 2);
}
