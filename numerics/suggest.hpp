// "Did you mean": the closest of a list of names to a mistyped one, for error messages of the
// front ends (unknown flags, subcommands, keyword arguments). Knows nothing of the names.
#pragma once
#include <string>
#include <vector>

namespace icl::numerics {

// The edit distance between a and b: insertions, deletions, substitutions and adjacent
// transpositions (optimal string alignment).
std::size_t edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `name` when it is close enough to be a typo (distance <= 2, or
// <= a third of the name's length for long names), else "". Ties: the first candidate.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" for closest_name, or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace icl::numerics
