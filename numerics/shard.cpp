#include "numerics/shard.hpp"

#include <stdexcept>

#include "numerics/error.hpp"

namespace icl::numerics {

void Shard::validate() const {
  if (count < 1 || index < 0 || index >= count)
    throw InvalidParams("shard", "expected I/N with 0 <= I < N, e.g. 0/4 (got " +
                                     std::to_string(index) + "/" + std::to_string(count) + ")");
}

Shard shard_from_string(const std::string& text) {
  Shard s;
  if (text.empty()) return s;
  const auto bad = [&] {
    return InvalidParams("shard", "'" + text + "': expected I/N with 0 <= I < N, e.g. 0/4");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  try {
    std::size_t p1 = 0, p2 = 0;
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    s.index = std::stol(a, &p1);
    s.count = std::stol(b, &p2);
    if (p1 != a.size() || p2 != b.size()) throw bad();
  } catch (const InvalidParams&) {
    throw;
  } catch (const std::exception&) {
    throw bad();
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) throw bad();
  return s;
}

std::vector<std::size_t> Shard::indices(std::size_t n) const {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < n; ++k)
    if (owns(k)) out.push_back(k);
  return out;
}

}  // namespace icl::numerics
