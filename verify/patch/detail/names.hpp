// The names of the enums of verify/patch (internal): one table per enum gives its to_string, its
// parse (InvalidParams naming the field for another name) and its list of choices (help texts).
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "numerics/error.hpp"

namespace icl::verify::patch::detail {

template <class E, std::size_t N>
struct Names {
  const char* field;                               // the field a bad name is reported under
  std::array<std::pair<E, const char*>, N> names;  // every value with its name, in order

  std::string name(E e) const {
    for (const auto& [v, n] : names)
      if (v == e) return n;
    return "?";
  }
  // "a<sep>b<last>c"
  std::string join(const char* sep, const char* last) const {
    std::string s;
    for (std::size_t i = 0; i < N; ++i)
      s.append(i == 0 ? "" : i + 1 == N ? last : sep).append(names[i].second);
    return s;
  }
  E parse(const std::string& s) const {
    for (const auto& [v, n] : names)
      if (s == n) return v;
    throw InvalidParams(field, "must be " + join(", ", " or ") + ", got '" + s + "'");
  }
};

}  // namespace icl::verify::patch::detail
