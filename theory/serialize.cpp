#include "theory/serialize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "numerics/format.hpp"
#include "numerics/status.hpp"
#include "theory/quantity.hpp"

namespace icl::theory {
namespace {

nlohmann::ordered_json components(const Components& c) {
  return {{"algo", c.algo}, {"mem", c.mem}, {"struct", c.structural}};
}

// The order parameters in the documented order; the ridgeless Letey/Lu method leaves some
// undefined (kOrderFields, theory/quantity.hpp).
nlohmann::ordered_json order_json(const OrderParams& o, Method method) {
  nlohmann::ordered_json order = nlohmann::ordered_json::object();
  for (const OrderField& f : kOrderFields) {
    if (method == Method::Letey && f.undefined_for_letey) continue;
    order[f.name] = o.*f.member;
  }
  return order;
}

nlohmann::ordered_json error_json(const Errors& e) {
  return {{"tm", e.tm}, {"idg", e.idg}, {"odg", e.odg}};
}

nlohmann::ordered_json decomposition_json(const Decomposition& d) {
  return {{"tm", components(d.tm)}, {"idg", components(d.idg)}, {"odg", components(d.odg)}};
}

nlohmann::ordered_json test_shift_json(const TestShift& t) {
  // overlap: null (NaN) when the shift was given by test_levels.
  return {{"overlap", t.overlap},
          {"levels", t.levels},
          {"error", t.error},
          {"decomposition", components(t.decomposition)}};
}

// "shift" only with a shifted test protocol (docs/general_covariance.md §20).
// {idg, odg [, shift]}: the baselines, with the shifted protocol's when the point has one.
nlohmann::ordered_json bayes_json(const BayesOptimal& b, bool shift) {
  nlohmann::ordered_json j = {{"idg", b.idg}, {"odg", b.odg}};
  if (shift) j["shift"] = b.shift;
  return j;
}

nlohmann::ordered_json last_iterate_json(const LastIterate& l, Method method) {
  nlohmann::ordered_json j = {{"order", order_json(l.order, method)},
                              {"error", error_json(l.error)},
                              {"decomposition", decomposition_json(l.decomposition)},
                              {"z", l.z},
                              {"e", l.e}};
  if (l.test_shift) j["test_shift"] = test_shift_json(*l.test_shift);
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Params& p) {
  nlohmann::ordered_json j = {{"alpha", p.alpha},   {"alpha_test", p.effective_alpha_test()},
                              {"tau", p.tau},       {"gamma", p.gamma()},
                              {"kappa", p.kappa},   {"rho", p.rho},
                              {"sigma", p.sigma},   {"sigma_test", p.sigma_test},
                              {"lambda", p.lambda}};
  if (!p.task_spectrum.empty()) {
    nlohmann::ordered_json spec = nlohmann::ordered_json::array();
    for (const auto& a : p.task_spectrum) spec.push_back({a.position, a.mass});
    j["task_spectrum"] = spec;  // [[eigenvalue, weight], ...]
  }
  if (p.test_overlap) j["test_overlap"] = *p.test_overlap;
  if (!p.test_levels.empty()) j["test_levels"] = p.test_levels;
  return j;
}

std::string task_description(const Params& p) {
  std::ostringstream os;
  if (p.task_spectrum.empty()) {
    os << "rho " << p.rho;
  } else {
    os << "task spectrum ";
    for (std::size_t k = 0; k < p.task_spectrum.size(); ++k)
      os << (k ? "," : "") << p.task_spectrum[k].position << ":" << p.task_spectrum[k].mass;
  }
  return os.str();
}

// NaN values stay NaN in the JSON value (Python's to_dict() gets float('nan')); dump() writes
// them as null.
nlohmann::ordered_json to_json(const Solution& s) {
  nlohmann::ordered_json j = {
      {"params", to_json(s.params)},
      {"method", to_string(s.method)},
      {"converged", s.converged()},
      {"status", numerics::to_string(s.status)},
      {"residual_norm", s.residual_norm},
      {"iterations", s.iterations},
      {"message", s.message},
      {"order", order_json(s.order, s.method)},
      {"error", error_json(s.error)},
      {"bayes_optimal", bayes_json(s.bayes_optimal, s.test_shift.has_value())},
      {"decomposition", decomposition_json(s.decomposition)},
      {"regime", to_string(s.regime)},
      {"effective_ridge", -s.z},
      {"z", s.z},
      {"e", s.e},
      {"nu", s.nu}};
  if (s.test_shift) j["test_shift"] = test_shift_json(*s.test_shift);
  if (s.last_iterate) j["last_iterate"] = last_iterate_json(*s.last_iterate, s.method);
  if (s.gradient) {
    j["gradient"] = to_json(*s.gradient);
    j["gradient_status"] = gradient_status_json(*s.gradient);
  }
  return j;
}

nlohmann::ordered_json to_json(const Gradient& g) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t r = 0; r < g.outputs.size(); ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < g.parameters.size(); ++c)
      row[g.parameters[c]] = g.values(Eigen::Index(r), Eigen::Index(c));
    j[g.outputs[r]] = row;
  }
  return j;
}

nlohmann::ordered_json gradient_status_json(const Gradient& g) {
  return {{"status", numerics::to_string(g.status)},
          {"message", g.message},
          {"condition_number", g.condition_number},
          {"parameters", g.parameters}};
}

std::string to_text(const Gradient& g) {
  std::ostringstream os;
  char buf[64];
  os << "\ngradient (docs/sensitivity.md §22): " << numerics::to_string(g.status)
     << ", condition number " << numerics::format_significant(g.condition_number, 3) << "\n";
  if (!g.converged()) {
    os << "no gradient: " << g.message << "\n";
    return os.str();
  }
  os << "d/d      ";
  for (const std::string& p : g.parameters) {
    std::snprintf(buf, sizeof buf, " %11s", p.c_str());
    os << buf;
  }
  os << '\n';
  for (const char* out : {"tm", "idg", "odg", "shift"}) {
    const auto it = std::find(g.outputs.begin(), g.outputs.end(), out);
    if (it == g.outputs.end()) continue;
    std::snprintf(buf, sizeof buf, "%-9s", out);
    os << buf;
    for (const std::string& p : g.parameters) {
      std::snprintf(buf, sizeof buf, " %11.4g", g.of(out, p));
      os << buf;
    }
    os << '\n';
  }
  os << "(every output, order parameters and decomposition included: --json)\n";
  return os.str();
}

namespace {
// The errors a gradient table shows: tm idg odg, shift with a shifted protocol.
std::vector<std::string> gradient_errors(const Params& p) {
  std::vector<std::string> e = {"tm", "idg", "odg"};
  if (p.has_test_shift()) e.push_back("shift");
  return e;
}
}  // namespace

std::vector<std::string> gradient_columns(const Params& p, Method method) {
  std::vector<std::string> c;
  const std::vector<std::string> params = gradient_parameters(p, method);
  for (const char* kind : {"d", "el"})
    for (const std::string& e : gradient_errors(p))
      for (const std::string& x : params)
        c.push_back(std::string(kind) == "d" ? "d_" + e + "_d_" + x : "el_" + e + "_" + x);
  return c;
}

std::vector<double> gradient_row(const Solution& s, const std::vector<std::string>& columns) {
  std::vector<double> r;
  const bool ok = s.gradient && s.gradient->converged();
  for (const std::string& c : columns) {
    // d_<E>_d_<x> or el_<E>_<x>, E and x from the column's own name (E has no '_').
    const bool elasticity = c.rfind("el_", 0) == 0;
    const std::size_t from = elasticity ? 3 : 2, sep = c.find('_', from);
    const std::string e = c.substr(from, sep - from);
    const std::string x = c.substr(elasticity ? sep + 1 : sep + 3);
    if (!ok) {
      r.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    const double d = s.gradient->of(e, x);
    r.push_back(elasticity ? d * s.params.get(x) / find_quantity(e).value(s) : d);
  }
  return r;
}

nlohmann::ordered_json to_json_block(const Solution& s, const std::string& key) {
  if (key == "params") return to_json(s.params);
  if (key == "order") return order_json(s.order, s.method);
  if (key == "error") return error_json(s.error);
  if (key == "bayes_optimal") return bayes_json(s.bayes_optimal, s.test_shift.has_value());
  if (key == "test_shift")
    return s.test_shift ? test_shift_json(*s.test_shift) : nlohmann::ordered_json();
  if (key == "decomposition") return decomposition_json(s.decomposition);
  if (key == "last_iterate")
    return s.last_iterate ? last_iterate_json(*s.last_iterate, s.method) : nlohmann::ordered_json();
  return to_json(s).at(key);  // the scalars: no faster route needed
}

std::string to_text(const Solution& s) {
  std::ostringstream os;
  const auto& p = s.params;
  char buf[512];
  // The tasks in use: rho, or the task spectrum that replaces it (docs/general_covariance.md
  // §12.1). (Written in pieces: a spectrum of many levels is longer than buf.)
  std::snprintf(buf, sizeof buf, "icl solve (%s): alpha %g  alpha_test %g  tau %g (gamma %g)  kappa %g  ",
                to_string(s.method), p.alpha, p.effective_alpha_test(), p.tau, p.gamma(), p.kappa);
  os << buf << task_description(p);
  std::snprintf(buf, sizeof buf, "  sigma %g  sigma_test %g  lambda %g\n", p.sigma, p.sigma_test,
                p.lambda);
  os << buf;
  if (p.has_test_shift()) {
    os << "shifted test tasks: ";
    if (p.test_overlap) os << "overlap C = " << *p.test_overlap << ", ";
    os << "test eigenvalue per level";
    for (double t : p.test_eigenvalues()) os << ' ' << t;
    os << '\n';
  }
  std::snprintf(buf, sizeof buf, "%s (residual norm %.2e, %d iterations), regime %s\n",
                numerics::to_string(s.status), s.residual_norm, s.iterations,
                to_string(s.regime));
  os << buf;
  if (!s.converged()) {
    // No solution values to print (they are NaN; the last iterate is in to_json's last_iterate).
    os << "no solution: " << s.message << "\n";
    return os.str();
  }
  os << "\n          error       algo        mem     struct\n";
  auto line = [&](const char* name, double err, const Components& c) {
    std::snprintf(buf, sizeof buf, "%-5s %10.6f %10.6f %10.6f %10.6f\n", name, err, c.algo, c.mem,
                  c.structural);
    os << buf;
  };
  line("TM", s.error.tm, s.decomposition.tm);
  line("IDG", s.error.idg, s.decomposition.idg);
  line("ODG", s.error.odg, s.decomposition.odg);
  if (s.test_shift) line("shift", s.test_shift->error, s.test_shift->decomposition);
  std::snprintf(buf, sizeof buf,
                "Bayes-optimal from the test prompt alone: IDG %.6f  ODG %.6f\n",
                s.bayes_optimal.idg, s.bayes_optimal.odg);
  os << buf;
  if (s.test_shift) {
    std::snprintf(buf, sizeof buf, "Bayes-optimal for the shifted test tasks: %.6f\n",
                  s.bayes_optimal.shift);
    os << buf;
  }
  std::snprintf(buf, sizeof buf,
                "\norder: m %.6g  q %.6g  mbar %.6g  qbar %.6g  m0 %.6g  q0 %.6g\n"
                "effective ridge -z = %.6g  (nu = %.6g)\n",
                s.order.m, s.order.q, s.order.mbar, s.order.qbar, s.order.m0, s.order.q0, -s.z,
                s.nu);
  os << buf;
  return os.str();
}

bool any_test_shift(const std::vector<Solution>& solutions) {
  for (const auto& s : solutions)
    if (s.params.has_test_shift()) return true;
  return false;
}

namespace {

// The quantities that are columns of a table with or without the shift columns.
bool is_column(const Quantity& q, bool test_shift) {
  return q.column == Column::Always || (test_shift && q.column == Column::TestShift);
}

}  // namespace

std::vector<std::string> solution_columns(bool test_shift) {
  std::vector<std::string> c = {"converged", "residual", "iterations"};
  for (const Quantity& q : solution_quantities())
    if (is_column(q, test_shift)) c.push_back(q.name);
  return c;
}

void solution_row(const Solution& s, bool test_shift, std::vector<double>& row) {
  row.assign({s.converged() ? 1.0 : 0.0, s.residual_norm, static_cast<double>(s.iterations)});
  for (const Quantity& q : solution_quantities())
    if (is_column(q, test_shift)) row.push_back(q.value(s));
}

std::vector<double> solution_row(const Solution& s, bool test_shift) {
  std::vector<double> r;
  solution_row(s, test_shift, r);
  return r;
}

namespace {

// A failed finite-D result shows no values (docs/finite_dim.md §21; its limit included).
Errors shown(const FiniteDimResult& r, const Errors& e) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  return r.converged() ? e : Errors{nan, nan, nan};
}

}  // namespace

nlohmann::ordered_json to_json(const FiniteDimResult& r) {
  const OrderParams& o = r.order;
  nlohmann::ordered_json sources = nlohmann::ordered_json::object();
  for (const auto& s : r.sources) {
    sources[s.name] = {{"slope", error_json(shown(r, s.slope))},
                       {"correction", error_json(shown(r, s.correction))}};
    // The shifted protocol's slope and correction (docs/finite_dim.md §21.11), with one.
    if (r.test_shift) {
      const double shift = r.converged() ? s.shift_slope : std::numeric_limits<double>::quiet_NaN();
      sources[s.name]["slope"]["shift"] = shift;
      sources[s.name]["correction"]["shift"] = shift / r.options.dim;
    }
  }
  const bool ok = r.converged();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto val = [&](double v) { return ok ? v : nan; };
  const Decomposition unknown{{nan, nan, nan}, {nan, nan, nan}, {nan, nan, nan}};
  nlohmann::ordered_json j = {{"dim", r.options.dim},
          {"status", numerics::to_string(r.status)},
          {"message", r.message},
          {"residual_norm", r.residual_norm},
          {"sized", to_json(r.sized)},
          {"error", error_json(shown(r, r.error))},
          {"limit", error_json(shown(r, r.limit.error))},
          {"slope", error_json(shown(r, r.slope))},
          // The channel's rest beyond O(1/D), in `error` (docs/finite_dim.md §21.18).
          {"second_order", error_json(shown(r, r.second_order))},
          {"order",
           {{"q", val(o.q)}, {"m", val(o.m)}, {"qbar", val(o.qbar)}, {"mbar", val(o.mbar)},
            {"m0", val(o.m0)}, {"q0", val(o.q0)}}},
          // algo at D; mem and struct null, the excess is error - algo (docs/finite_dim.md §21.17).
          {"decomposition", decomposition_json(ok ? r.decomposition : unknown)},
          {"sources", sources},
          {"omitted", r.omitted},
          // The error bar on `error` (docs/finite_dim.md §21.12): the estimated O(1/D^2) rest.
          {"uncertainty", error_json(shown(r, r.validity.remainder))},
          {"validity",
           {{"valid", r.valid()},
            {"reason", r.validity.reason},
            {"relative_correction", error_json(r.validity.relative_correction)},
            {"remainder", error_json(r.validity.remainder)},
            {"max_relative_correction", kMaxRelativeCorrection}}},
          {"finite_d_switches", to_json(r.options.switches)}};
  // The Bayes-optimal baselines at D and their limit (docs/finite_dim.md §21.16).
  const bool shift = r.test_shift.has_value();
  j["bayes_optimal"] = bayes_json(r.bayes_optimal, shift);
  j["bayes_optimal"]["limit"] = bayes_json(r.limit.bayes_optimal, shift);
  // The shifted protocol at D (docs/finite_dim.md §21.11), when the point has one.
  if (r.test_shift)
    j["test_shift"] = {{"error", val(r.test_shift->error)},
                       {"limit", val(r.limit.test_shift->error)},
                       // its estimated O(1/D^2) rest (docs/finite_dim.md §21.12)
                       {"uncertainty", val(r.validity.shift_remainder)},
                       {"decomposition", components(ok ? r.test_shift->decomposition : unknown.idg)}};
  return j;
}

std::string to_text(const FiniteDimResult& r) {
  std::ostringstream os;
  char buf[512];
  const Params& p = r.sized;
  std::snprintf(buf, sizeof buf,
                "\nfinite D = %d (docs/finite_dim.md §21): sizes alpha %g  alpha_test %g  tau %g  "
                "kappa %g  ",
                r.options.dim, p.alpha, p.effective_alpha_test(), p.tau, p.kappa);
  os << buf << task_description(p) << '\n' << to_text(r.options.switches);
  if (!r.converged()) {
    std::snprintf(buf, sizeof buf, "%s (residual norm %.2e): no finite-D prediction: ",
                  numerics::to_string(r.status), r.residual_norm);
    os << buf << r.message << '\n';
    return os.str();
  }
  os << "          error      limit correction  uncertainty (O(1/D^2), §21.12)\n";
  auto line = [&](const char* name, double e, double l, double u = std::nan("")) {
    std::snprintf(buf, sizeof buf, "%-5s %10.6f %10.6f %+10.6f", name, e, l, e - l);
    os << buf;
    if (!std::isnan(u)) {
      std::snprintf(buf, sizeof buf, "  +-%.2g", u);
      os << buf;
    }
    os << '\n';
  };
  line("TM", r.error.tm, r.limit.error.tm, r.validity.remainder.tm);
  line("IDG", r.error.idg, r.limit.error.idg, r.validity.remainder.idg);
  line("ODG", r.error.odg, r.limit.error.odg, r.validity.remainder.odg);
  if (r.test_shift)
    line("shift", r.test_shift->error, r.limit.test_shift->error, r.validity.shift_remainder);
  std::snprintf(buf, sizeof buf,
                "algo at D (§21.17; excess = error - algo): TM %.6f  IDG %.6f  ODG %.6f\n"
                "  (limit %.6f  %.6f  %.6f)\n",
                r.decomposition.tm.algo, r.decomposition.idg.algo, r.decomposition.odg.algo,
                r.limit.decomposition.tm.algo, r.limit.decomposition.idg.algo,
                r.limit.decomposition.odg.algo);
  os << buf;
  if (r.test_shift) {
    std::snprintf(buf, sizeof buf, "algo at D, shift: %.6f  (limit %.6f)\n",
                  r.test_shift->decomposition.algo, r.limit.test_shift->decomposition.algo);
    os << buf;
  }
  // With a shifted protocol, its correction per source too (docs/finite_dim.md §21.11).
  os << "correction per source             TM         IDG         ODG"
     << (r.test_shift ? "       shift\n" : "\n");
  for (const auto& s : r.sources) {
    std::snprintf(buf, sizeof buf, "  %-24s %+10.6f %+10.6f %+10.6f", s.name.c_str(),
                  s.correction.tm, s.correction.idg, s.correction.odg);
    os << buf;
    if (r.test_shift) {
      std::snprintf(buf, sizeof buf, " %+11.6f", s.shift_slope / r.options.dim);
      os << buf;
    }
    os << "\n";
  }
  // The channel's second order (§21.18), part of `error`: the rows then add up to the correction.
  std::snprintf(buf, sizeof buf, "  %-24s %+10.6f %+10.6f %+10.6f", "second_order",
                r.second_order.tm, r.second_order.idg, r.second_order.odg);
  os << buf;
  if (r.test_shift) {
    const double shift = r.test_shift->error - r.limit.test_shift->error;
    double first = 0;
    for (const auto& src : r.sources) first += src.shift_slope / r.options.dim;
    std::snprintf(buf, sizeof buf, " %+11.6f", shift - first);
    os << buf;
  }
  os << "\n";
  std::snprintf(buf, sizeof buf,
                "Bayes-optimal at D (§21.16): IDG %.6f  ODG %.6f  (limit %.6f  %.6f)\n",
                r.bayes_optimal.idg, r.bayes_optimal.odg, r.limit.bayes_optimal.idg,
                r.limit.bayes_optimal.odg);
  os << buf;
  if (r.test_shift) {
    std::snprintf(buf, sizeof buf, "Bayes-optimal shift at D: %.6f  (limit %.6f)\n",
                  r.bayes_optimal.shift, r.limit.bayes_optimal.shift);
    os << buf;
  }
  os << "omitted (not derived, listed only):";
  for (const auto& name : r.omitted) os << ' ' << name;
  os << '\n';
  const FiniteDimValidity& v = r.validity;
  if (v.valid) {
    std::snprintf(buf, sizeof buf,
                  "valid (docs/finite_dim.md §21.9): corrections %.0f%% / %.0f%% / %.0f%% of the "
                  "limit, estimated O(1/D^2) rest %.2g / %.2g / %.2g\n",
                  100 * v.relative_correction.tm, 100 * v.relative_correction.idg,
                  100 * v.relative_correction.odg, v.remainder.tm, v.remainder.idg,
                  v.remainder.odg);
    os << buf;
  } else {
    os << "NOT VALID (docs/finite_dim.md §21.9): " << v.reason << '\n';
  }
  return os.str();
}

std::vector<std::string> finite_dim_columns(bool test_shift) {
  std::vector<std::string> c = {"fd_tm", "fd_idg", "fd_odg"};
  if (test_shift) c.push_back("fd_shift");
  for (const char* name : {"fd_tm_algo", "fd_idg_algo", "fd_odg_algo", "fd_bayes_idg", "fd_bayes_odg"})
    c.push_back(name);
  if (test_shift) c.push_back("fd_bayes_shift");
  c.push_back("fd_valid");
  return c;
}

std::vector<double> finite_dim_row(const FiniteDimResult* r, bool test_shift) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (r == nullptr) return std::vector<double>(finite_dim_columns(test_shift).size(), nan);
  const bool ok = r->converged();
  auto val = [&](double v) { return ok ? v : nan; };
  std::vector<double> row = {val(r->error.tm), val(r->error.idg), val(r->error.odg)};
  if (test_shift) row.push_back(r->test_shift ? val(r->test_shift->error) : nan);
  const Decomposition& d = r->decomposition;
  for (double v : {d.tm.algo, d.idg.algo, d.odg.algo, r->bayes_optimal.idg, r->bayes_optimal.odg})
    row.push_back(val(v));
  if (test_shift) row.push_back(val(r->bayes_optimal.shift));
  row.push_back(!ok ? nan : r->valid() ? 1.0 : 0.0);
  return row;
}

nlohmann::ordered_json to_json(const OptimizeResult& r) {
  nlohmann::ordered_json j;
  j["objective"] = to_string(r.options.objective);
  j["over"] = r.options.over;
  j["argmin"] = r.argmin;
  j["minimum"] = r.minimum;
  j["slope"] = r.slope;
  j["converged"] = r.converged();
  j["status"] = numerics::to_string(r.status);
  j["message"] = r.message;
  j["evaluations"] = r.evaluations;
  j["interior_minima"] = r.interior_minima;
  j["range"] = {r.lo, r.hi};
  j["scale"] = r.log_scale ? "log" : "linear";
  j["params"] = to_json(r.solution.params);
  return j;
}

std::string to_text(const OptimizeResult& r) {
  using numerics::format_number;
  const std::string solves = std::to_string(r.evaluations) + " solves";
  if (!r.converged())
    return std::string("no minimum (") + numerics::to_string(r.status) + "): " + r.message +
           " (" + solves + ")\n";
  return std::string("minimum ") + to_string(r.options.objective) + " = " +
         format_number(r.minimum) + " at " + r.options.over + " = " + format_number(r.argmin) +
         " (" + r.message + "; " + solves + ")\n";
}

nlohmann::ordered_json to_json(const BoundaryResult& r) {
  const BoundaryOptions& o = r.options;
  nlohmann::ordered_json j;
  nlohmann::ordered_json c = {{"type", to_string(o.criterion)}, {"quantity", o.quantity}};
  if (o.criterion == Criterion::Level) c["level"] = o.level;
  j["criterion"] = c;
  j["x"] = o.x;
  j["y"] = o.y;
  j["range"] = {r.lo, r.hi};
  j["scale"] = r.log_scale ? "log" : "linear";
  if (o.criterion == Criterion::Steepest) j["derivative"] = r.derivative;
  j["converged"] = r.converged();
  j["status"] = numerics::to_string(r.status);
  j["message"] = r.message;
  nlohmann::ordered_json pts = nlohmann::ordered_json::array();
  for (const auto& p : r.points) {
    nlohmann::ordered_json q;
    q[o.y] = p.y;
    // NaN -> null in dump(); kept NaN in the value (Python gets float('nan')), as in
    // to_json(Solution).
    q[o.x] = p.converged() ? nlohmann::ordered_json(p.x) : nlohmann::ordered_json(nullptr);
    q["value"] = p.value;
    if (o.criterion == Criterion::Steepest) q["slope"] = p.slope;
    q["converged"] = p.converged();
    q["status"] = numerics::to_string(p.status);
    q["message"] = p.message;
    q["candidates"] = p.candidates;
    q["evaluations"] = p.evaluations;
    pts.push_back(std::move(q));
  }
  j["points"] = std::move(pts);
  if (r.trace) {
    const BoundaryTrace& t = *r.trace;
    nlohmann::ordered_json tp = nlohmann::ordered_json::array();
    for (const TracePoint& q : t.points)
      tp.push_back({{o.x, q.x}, {o.y, q.y}, {"value", q.value}, {"residual", q.residual},
                    {"arclength", q.arclength}});
    j["trace"] = {{"status", numerics::to_string(t.status)},
                  {"message", t.message},
                  {"turning_points", t.turning_points},
                  {"largest_residual", t.largest_residual},
                  {"evaluations", t.evaluations},
                  {"points", tp}};
  }
  j["params"] = to_json(r.params);
  return j;
}

numerics::Table trace_table(const BoundaryResult& r) {
  numerics::Table t;
  t.columns = {r.options.x, r.options.y, "value", "residual", "arclength"};
  if (r.trace)
    for (const TracePoint& q : r.trace->points)
      t.rows.push_back({q.x, q.y, q.value, q.residual, q.arclength});
  return t;
}

numerics::Table to_table(const BoundaryResult& r) {
  const bool steepest = r.options.criterion == Criterion::Steepest;
  numerics::Table t;
  t.columns = {r.options.y, r.options.x, "value"};
  if (steepest) t.columns.push_back("slope");
  for (const char* s : {"converged", "candidates", "evaluations"}) t.columns.push_back(s);
  for (const auto& p : r.points) {
    std::vector<double> row = {p.y, p.x, p.value};
    if (steepest) row.push_back(p.slope);
    row.push_back(p.converged() ? 1.0 : 0.0);
    row.push_back(p.candidates);
    row.push_back(p.evaluations);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace icl::theory
