// Resumable verification (numerics::UnitStore): kept simulations reproduce the uninterrupted
// result, and only the missing ones are computed.
#include <doctest/doctest.h>

#include <map>

#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/serialize.hpp"

using namespace icl::verify::lowrank;

namespace {

// Two grid points at two small dims: four units, a fraction of a second in all.
VerifyOptions tiny() {
  VerifyOptions o = VerifyOptions::quick();
  o.dims = {6, 8};
  o.seeds = {4, 4};
  o.threads = 1;
  return o;
}

using Kept = std::map<std::string, std::vector<double>>;

// A store over `kept` that counts the units it is asked to save.
icl::numerics::UnitStore store_over(Kept& kept, int& saves) {
  return {[&kept](const std::string& key) -> std::optional<std::vector<double>> {
            const auto it = kept.find(key);
            if (it == kept.end()) return std::nullopt;
            return it->second;
          },
          [&kept, &saves](const std::string& key, const std::vector<double>& v) {
            kept[key] = v;
            ++saves;
          }};
}

}  // namespace

TEST_CASE("verify with every simulation kept equals the uninterrupted run and simulates nothing") {
  const VerifyOptions o = tiny();
  Kept kept;
  int saves = 0;
  const VerifyResult first = run(o, {}, store_over(kept, saves));
  CHECK(saves == 4);  // one unit per (grid point, D)
  CHECK(kept.count("p0_D6") == 1);
  CHECK(kept.count("p1_D8") == 1);
  int resaves = 0;
  const VerifyResult resumed = run(o, {}, store_over(kept, resaves));
  CHECK(resaves == 0);
  // The whole JSON, timings included (a kept unit keeps its measured seconds).
  CHECK(to_json(resumed).dump() == to_json(first).dump());
}

TEST_CASE("verify resumed after a partial run equals an uninterrupted run (timings aside)") {
  const VerifyOptions o = tiny();
  Kept all;
  int saves = 0;
  const VerifyResult uninterrupted = run(o, {}, store_over(all, saves));
  Kept partial{{"p0_D6", all.at("p0_D6")}, {"p0_D8", all.at("p0_D8")}};
  int resaves = 0;
  const VerifyResult resumed = run(o, {}, store_over(partial, resaves));
  CHECK(resaves == 2);  // only grid point 1 was simulated
  auto without_timing = [](const VerifyResult& r) {
    auto j = to_json(r);
    for (auto& p : j["points"]) p.erase("seconds_per_dim");
    return j.dump();
  };
  CHECK(without_timing(resumed) == without_timing(uninterrupted));
  // A unit of another layout (a different build) is recomputed, not misread.
  Kept wrong{{"p0_D6", {1.0, 2.0}}};
  int wrong_saves = 0;
  CHECK(without_timing(run(o, {}, store_over(wrong, wrong_saves))) ==
        without_timing(uninterrupted));
  CHECK(wrong_saves == 4);
}
