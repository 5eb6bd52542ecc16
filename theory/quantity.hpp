// The scalar quantities of a Solution, typed and by name (docs/errors_phases.md §18.1, §19): the
// one table that the searches of theory/optimize.hpp and theory/boundary.hpp use and that the sweep
// TSV columns of theory/serialize.hpp (solution_columns / solution_row) are built from.
#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "theory/lowrank.hpp"

namespace icl::theory {

// The order parameters (docs/model.md §3) and the conjugates (§4.1) in the documented order: the
// "order" block of to_json(Solution) and the order columns of the TSV. The ridgeless Letey/Lu
// method (docs/errors_phases.md §11) leaves chi, chibar and the conjugates undefined (they vanish
// or diverge as lambda -> 0+): its JSON omits them and its TSV columns are NaN.
struct OrderField {
  const char* name;
  double OrderParams::*member;
  bool undefined_for_letey;
};
inline constexpr OrderField kOrderFields[] = {
    {"q", &OrderParams::q, false},           {"m", &OrderParams::m, false},
    {"chi", &OrderParams::chi, true},        {"qbar", &OrderParams::qbar, false},
    {"chibar", &OrderParams::chibar, true},  {"mbar", &OrderParams::mbar, false},
    {"m0", &OrderParams::m0, false},         {"q0", &OrderParams::q0, false},
    {"qhat", &OrderParams::qhat, true},      {"mhat", &OrderParams::mhat, true},
    {"chihat", &OrderParams::chihat, true},  {"qbarhat", &OrderParams::qbarhat, true},
    {"chibarhat", &OrderParams::chibarhat, true}};
inline constexpr std::size_t kOrderFieldCount = sizeof kOrderFields / sizeof kOrderFields[0];

// Where a quantity stands in the sweep TSV (solution_columns(test_shift)).
enum class Column {
  Always,     // tm ... e, bayes_idg, bayes_odg: every table
  TestShift   // shift ... shift_struct, bayes_shift: tables with a shifted test protocol
              // (docs/general_covariance.md §20)
};

struct Quantity {
  const char* name;
  // The number s holds, whatever its status: NaN where the method does not define it (see
  // OrderField) or without a shifted test protocol (the shift pieces, bayes_shift).
  double (*of)(const Solution& s);
  Column column;
  // The quantity as searches and tables use it: of(s) when s converged, NaN otherwise (the Bayes
  // baselines depend on the parameters only, but a point whose solve failed is not used either:
  // one rule for every quantity). Inline: every cell of a table calls it.
  double value(const Solution& s) const {
    return s.converged() ? of(s) : std::numeric_limits<double>::quiet_NaN();
  }
  // Whether s has this quantity at all: the shifted protocol's only with one, and not the order
  // fields that the Letey/Lu method leaves undefined (OrderField::undefined_for_letey). The rows
  // of a gradient (theory/gradient.hpp).
  bool defined(const Solution& s) const;
};

// In the TSV's order: tm idg odg; the nine decomposition pieces tm_algo tm_mem tm_struct ...
// odg_struct (docs/errors_phases.md §8); the order parameters of kOrderFields; z, e; the shifted
// protocol's shift shift_algo shift_mem shift_struct (docs/general_covariance.md §20); bayes_idg
// bayes_odg bayes_shift (Solution::bayes_optimal, docs/errors_phases.md §17).
const std::vector<Quantity>& solution_quantities();
// The quantity called `name`; throws InvalidParams(field) listing every name for an unknown one.
const Quantity& find_quantity(const std::string& name, const std::string& field = "quantity");

}  // namespace icl::theory
