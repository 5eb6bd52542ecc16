// String-keyed per-seed records ("error.tm", "train.epochs", ...) and their summary. The
// low-rank simulator itself has typed results (simulator.hpp); these remain for the records of
// verify/softmax and its front ends until they are typed too (then delete this file).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace icl::verify::lowrank {

// A flat list of named measurements of one seed.
using Values = std::vector<std::pair<std::string, double>>;

struct Stat {
  double mean = 0, sem = 0;  // sem 0 for a single sample
  int count = 0;
};
struct Estimate {
  std::vector<std::string> names;  // in order of first appearance
  std::vector<Stat> stats;
  std::vector<Values> per_seed;
  std::vector<double> histogram_edges;           // for "hist.<protocol>.<bin>" entries
  bool has(const std::string& name) const;
  Stat get(const std::string& name) const;  // throws std::out_of_range
};
Estimate summarize(const std::vector<Values>& per_seed);

}  // namespace icl::verify::lowrank
