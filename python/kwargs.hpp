// Internal to the icl_theory Python module: keyword arguments of a Python call read into a
// library Options struct, field by field, so that every default is the struct's own (a field
// the call does not name keeps it) and every check is the struct's validate(). A name the call
// does not know is one TypeError naming it, with the closest known name.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <set>
#include <string>
#include <type_traits>
#include <cstdint>
#include <vector>

#include "numerics/error.hpp"
#include "numerics/seed.hpp"
#include "numerics/suggest.hpp"
#include "theory/finite_d_switches.hpp"

namespace icl::python {

class Kwargs {
 public:
  Kwargs(const pybind11::kwargs& kwargs, std::string function)
      : kwargs_(kwargs), function_(std::move(function)) {}

  // Reads `name` into `field` when given (None keeps the default); false when absent. A value
  // of the wrong type is a TypeError naming the argument.
  template <class T>
  bool take(const std::string& name, T& field) {
    known_.push_back(name);
    if (!kwargs_.contains(name.c_str())) return false;
    used_.insert(name);
    const pybind11::handle v = kwargs_[name.c_str()];
    if (v.is_none()) return false;
    if constexpr (std::is_same_v<T, std::uint64_t>) {  // seeds: the CLI's rule and wording
      if (pybind11::isinstance<pybind11::int_>(v) && v < pybind11::int_(0))
        throw InvalidParams(name, std::string(numerics::kSeedRange) + ", got " +
                                      std::string(pybind11::repr(v)));
    }
    if constexpr (std::is_same_v<T, bool>) {
      if (!pybind11::isinstance<pybind11::bool_>(v))
        throw pybind11::type_error(function_ + "(): " + name + " must be True or False, got " +
                                   std::string(pybind11::repr(v)));
    }
    try {
      field = v.cast<T>();
    } catch (const pybind11::cast_error&) {
      throw pybind11::type_error(function_ + "(): " + name + " has the wrong type (" +
                                 std::string(pybind11::repr(v)) + ")");
    }
    return true;
  }

  // The finite-D switches (theory::visit_switches): the bool ones as True/False, assignment as
  // 'random' | 'balanced'.
  void take_switches(theory::FiniteDSwitches& switches) {
    theory::visit_switches(switches, [&](const theory::SwitchInfo& info, auto& field) {
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
        take(info.name, field);
      } else {
        std::string value;
        if (take(info.name, value)) field = theory::assignment_from_string(value);
      }
    });
  }

  // Every given name was read; otherwise a TypeError naming the first unknown one.
  void finish() const {
    for (const auto& item : kwargs_) {
      const std::string key = pybind11::str(item.first);
      if (used_.count(key) == 0)
        throw pybind11::type_error(function_ + "() got an unexpected keyword argument '" + key +
                                   "'" + numerics::did_you_mean(key, known_));
    }
  }

 private:
  const pybind11::kwargs& kwargs_;
  std::string function_;
  std::vector<std::string> known_;
  std::set<std::string> used_;
};

}  // namespace icl::python
