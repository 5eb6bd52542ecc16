// Shared by the finite-D theory's tests (tests/theory_finite_dim*.cpp): a source of a result by
// name.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "theory/finite_dim.hpp"

namespace icl_test {

inline const icl::theory::FiniteDimSource& source(const icl::theory::FiniteDimResult& r,
                                                  const std::string& name) {
  for (const auto& s : r.sources)
    if (s.name == name) return s;
  FAIL("no source " << name);
  return r.sources.front();
}

}  // namespace icl_test
