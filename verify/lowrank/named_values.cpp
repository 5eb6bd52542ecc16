#include "verify/lowrank/named_values.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace icl::verify::lowrank {

bool Estimate::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}
Stat Estimate::get(const std::string& name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return stats[i];
  throw std::out_of_range("no simulated quantity named '" + name + "'");
}

Estimate summarize(const std::vector<Values>& per_seed) {
  Estimate e;
  e.per_seed = per_seed;
  std::vector<std::vector<double>> samples;
  for (const auto& vals : per_seed)
    for (const auto& [name, v] : vals) {
      auto it = std::find(e.names.begin(), e.names.end(), name);
      std::size_t i = std::size_t(it - e.names.begin());
      if (it == e.names.end()) {
        e.names.push_back(name);
        samples.emplace_back();
      }
      samples[i].push_back(v);
    }
  for (const auto& s : samples) {
    Stat st;
    st.count = int(s.size());
    double sum = 0;
    for (double v : s) sum += v;
    st.mean = sum / st.count;
    double ss = 0;
    for (double v : s) ss += (v - st.mean) * (v - st.mean);
    st.sem = st.count > 1 ? std::sqrt(ss / (st.count - 1) / st.count) : 0.0;
    e.stats.push_back(st);
  }
  return e;
}

}  // namespace icl::verify::lowrank
