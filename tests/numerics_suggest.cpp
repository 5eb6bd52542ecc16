// numerics::edit_distance and closest_name: the "did you mean" of every front end.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "numerics/suggest.hpp"

using icl::numerics::closest_name;
using icl::numerics::edit_distance;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and adjacent transpositions") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("alpha", "alpha") == 0);
  CHECK(edit_distance("alpah", "alpha") == 1);  // one transposition
  CHECK(edit_distance("lgo", "log") == 1);
  CHECK(edit_distance("solvee", "solve") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment, not full Damerau (2)
}

TEST_CASE("closest_name: the nearest candidate within the typo limit, else empty") {
  const std::vector<std::string> flags = {"--rho", "--log", "--alpha"};
  CHECK(closest_name("--lgo", flags) == "--log");
  CHECK(closest_name("--alpah", flags) == "--alpha");
  CHECK(closest_name("--something-else", flags).empty());
}
