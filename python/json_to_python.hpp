// Internal to the icl_theory Python module: a library serializer's JSON (nlohmann::json or
// nlohmann::ordered_json) as plain Python objects, so that every to_dict() is the C++ to_json()
// (one serializer per result type) and not a second, hand-written renderer.
//   null -> None, bool -> bool, integers -> int, floats -> float (NaN and inf kept),
//   string -> str, array -> list, object -> dict (key order kept), binary -> bytes.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace icl::python {

template <class Json>
pybind11::object to_python(const Json& j) {
  namespace py = pybind11;
  using Type = nlohmann::json::value_t;
  switch (j.type()) {
    case Type::null:
    case Type::discarded: return py::none();
    case Type::boolean: return py::bool_(j.template get<bool>());
    case Type::number_integer: return py::int_(j.template get<std::int64_t>());
    case Type::number_unsigned: return py::int_(j.template get<std::uint64_t>());
    case Type::number_float: return py::float_(j.template get<double>());
    case Type::string: return py::str(j.template get_ref<const std::string&>());
    case Type::array: {
      py::list out;
      for (const auto& item : j) out.append(to_python(item));
      return out;
    }
    case Type::object: {
      py::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[py::str(it.key())] = to_python(it.value());
      return out;
    }
    case Type::binary: {
      const auto& b = j.get_binary();
      return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
    }
  }
  return py::none();
}

}  // namespace icl::python
