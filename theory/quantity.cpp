// The scalar quantities of a Solution by name (docs/errors_phases.md §18.1, §19).
#include "theory/quantity.hpp"

#include <limits>
#include <utility>

#include "numerics/error.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::kNaN;

template <std::size_t K>
double order_of(const Solution& s) {
  constexpr OrderField f = kOrderFields[K];
  return f.undefined_for_letey && s.method == Method::Letey ? kNaN : s.order.*f.member;
}

template <std::size_t... K>
void add_order_fields(std::vector<Quantity>& q, std::index_sequence<K...>) {
  (q.push_back({kOrderFields[K].name, &order_of<K>, Column::Always}), ...);
}

std::vector<Quantity> make_quantities() {
  using S = Solution;
  constexpr Column all = Column::Always;
  std::vector<Quantity> q = {
      {"tm", [](const S& s) { return s.error.tm; }, all},
      {"idg", [](const S& s) { return s.error.idg; }, all},
      {"odg", [](const S& s) { return s.error.odg; }, all},
      {"tm_algo", [](const S& s) { return s.decomposition.tm.algo; }, all},
      {"tm_mem", [](const S& s) { return s.decomposition.tm.mem; }, all},
      {"tm_struct", [](const S& s) { return s.decomposition.tm.structural; }, all},
      {"idg_algo", [](const S& s) { return s.decomposition.idg.algo; }, all},
      {"idg_mem", [](const S& s) { return s.decomposition.idg.mem; }, all},
      {"idg_struct", [](const S& s) { return s.decomposition.idg.structural; }, all},
      {"odg_algo", [](const S& s) { return s.decomposition.odg.algo; }, all},
      {"odg_mem", [](const S& s) { return s.decomposition.odg.mem; }, all},
      {"odg_struct", [](const S& s) { return s.decomposition.odg.structural; }, all},
  };
  add_order_fields(q, std::make_index_sequence<kOrderFieldCount>{});
  // The shifted protocol's error and decomposition (docs/general_covariance.md §20), NaN without
  // one.
  constexpr Column shift = Column::TestShift;
  const Quantity rest[] = {
      {"z", [](const S& s) { return s.z; }, all},
      {"e", [](const S& s) { return s.e; }, all},
      // The Bayes-optimal baselines (docs/errors_phases.md §17), next to the errors they bound.
      {"bayes_idg", [](const S& s) { return s.bayes_optimal.idg; }, all},
      {"bayes_odg", [](const S& s) { return s.bayes_optimal.odg; }, all},
      {"shift", [](const S& s) { return s.test_shift ? s.test_shift->error : kNaN; }, shift},
      {"shift_algo",
       [](const S& s) { return s.test_shift ? s.test_shift->decomposition.algo : kNaN; }, shift},
      {"shift_mem",
       [](const S& s) { return s.test_shift ? s.test_shift->decomposition.mem : kNaN; }, shift},
      {"shift_struct",
       [](const S& s) { return s.test_shift ? s.test_shift->decomposition.structural : kNaN; },
       shift},
      {"bayes_shift", [](const S& s) { return s.bayes_optimal.shift; }, shift},
  };
  q.insert(q.end(), std::begin(rest), std::end(rest));
  return q;
}

}  // namespace

bool Quantity::defined(const Solution& s) const {
  if (column == Column::TestShift && !s.params.has_test_shift()) return false;
  if (s.method == Method::Letey)
    for (const OrderField& f : kOrderFields)
      if (f.undefined_for_letey && std::string(name) == f.name) return false;
  return true;
}

const std::vector<Quantity>& solution_quantities() {
  static const std::vector<Quantity> q = make_quantities();
  return q;
}

const Quantity& find_quantity(const std::string& name, const std::string& field) {
  std::string names;
  for (const Quantity& q : solution_quantities()) {
    if (name == q.name) return q;
    if (!names.empty()) names += ' ';
    names += q.name;
  }
  throw InvalidParams(field, "unknown quantity '" + name + "' (one of " + names + ")");
}

}  // namespace icl::theory
