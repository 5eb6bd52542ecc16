// The finite-D theory (docs/theory.md §21): its pieces checked in isolation.
#include <cmath>

#include <doctest/doctest.h>

#include "numerics/error.hpp"
#include "theory/finite_dim.hpp"

using namespace icl::theory;

namespace {
const FiniteDimSource& source(const FiniteDimResult& r, const std::string& name) {
  for (const auto& s : r.sources)
    if (s.name == name) return s;
  FAIL("no source " << name);
  return r.sources.front();
}
}  // namespace

TEST_CASE("finite_dim_switches_zero_exactly_their_sources") {
  Params p;
  FiniteDimOptions o;
  o.dim = 40;
  const FiniteDimResult all = solve_finite_dim(p, o);
  REQUIRE(all.converged());
  REQUIRE(all.sources.size() == finite_dim_source_names().size());
  for (const auto& s : all.sources) {
    CHECK(std::isfinite(s.slope.tm));
    CHECK(s.correction.idg == doctest::Approx(s.slope.idg / 40).epsilon(1e-14));
  }
  o.sphere_queries = true;
  o.fixed_norm_tasks = true;
  o.balanced_assignment = true;
  const FiniteDimResult off = solve_finite_dim(p, o);
  for (const char* name : {"query_norms", "task_norms", "task_counts"}) {
    CHECK(source(off, name).slope.tm == 0.0);
    CHECK(source(off, name).slope.odg == 0.0);
    CHECK(source(all, name).slope.idg != 0.0);  // on by default: the switch matters
  }
  for (const char* name : {"test_context", "context_mean", "context_scalars", "task_sampling"})
    CHECK(source(off, name).slope.idg == source(all, name).slope.idg);
}

TEST_CASE("finite_dim_refuses_ridgeless_branch_and_bad_dim") {
  Params p;
  p.tau = 0.6;
  FiniteDimOptions o;
  CHECK_THROWS_AS(solve_finite_dim(p, o), icl::InvalidParams);
  p.tau = 2.25;
  o.dim = 1;
  CHECK_THROWS_AS(solve_finite_dim(p, o), icl::InvalidParams);
}
