// The names of an enumeration's values, one table per enumeration: to_string and from_string are
// both read from it, and a name outside it is refused with InvalidParams(field, "must be a, b or
// c (got 'x')") naming every valid one (the library's option fields: method, objective, ...).
#pragma once
#include <cstddef>
#include <string>
#include <utility>

#include "numerics/error.hpp"

namespace icl::numerics {

template <class E, std::size_t N>
using EnumNames = std::pair<E, const char*>[N];

// The name of v in `names`; "?" for a value the table does not hold.
template <class E, std::size_t N>
const char* name_of(E v, const EnumNames<E, N>& names) {
  for (const auto& [value, name] : names)
    if (value == v) return name;
  return "?";
}

// The value named s; throws InvalidParams(field) listing the names otherwise.
template <class E, std::size_t N>
E value_of(const std::string& s, const EnumNames<E, N>& names, const std::string& field) {
  std::string valid;
  for (std::size_t k = 0; k < N; ++k) {
    if (s == names[k].second) return names[k].first;
    valid += std::string(k == 0 ? "" : k + 1 == N ? " or " : ", ") + names[k].second;
  }
  throw InvalidParams(field, "must be " + valid + " (got '" + s + "')");
}

}  // namespace icl::numerics
