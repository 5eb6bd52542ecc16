#include "theory/serialize.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "numerics/status.hpp"

namespace icl::theory {
namespace {

nlohmann::ordered_json components(const Components& c) {
  return {{"algo", c.algo}, {"mem", c.mem}, {"struct", c.structural}};
}

// The order parameters with their names, in the documented order.
std::vector<std::pair<const char*, double>> order_fields(const OrderParams& o) {
  return {{"q", o.q},         {"m", o.m},           {"chi", o.chi},         {"qbar", o.qbar},
          {"chibar", o.chibar}, {"mbar", o.mbar},   {"m0", o.m0},           {"q0", o.q0},
          {"qhat", o.qhat},   {"mhat", o.mhat},     {"chihat", o.chihat},   {"qbarhat", o.qbarhat},
          {"chibarhat", o.chibarhat}};
}

bool ridgeless_only(const char* name) {
  // Letey/Lu is ridgeless: the conjugates vanish and chi, chibar diverge as lambda -> 0+ below
  // the interpolation threshold; they are not reported for that method.
  const std::string n = name;
  return n == "chi" || n == "chibar" || n == "qhat" || n == "mhat" || n == "chihat" ||
         n == "qbarhat" || n == "chibarhat";
}

nlohmann::ordered_json order_json(const OrderParams& o, Method method) {
  nlohmann::ordered_json order = nlohmann::ordered_json::object();
  for (const auto& [name, v] : order_fields(o)) {
    if (method == Method::Letey && ridgeless_only(name)) continue;
    order[name] = v;
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

// "shift" only with a shifted test protocol (docs/theory.md §20).
nlohmann::ordered_json bayes_json(const Solution& s) {
  nlohmann::ordered_json j = {{"idg", s.bayes_optimal.idg}, {"odg", s.bayes_optimal.odg}};
  if (s.test_shift) j["shift"] = s.bayes_optimal.shift;
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
      {"bayes_optimal", bayes_json(s)},
      {"decomposition", decomposition_json(s.decomposition)},
      {"regime", to_string(s.regime)},
      {"effective_ridge", -s.z},
      {"z", s.z},
      {"e", s.e},
      {"nu", s.nu}};
  if (s.test_shift) j["test_shift"] = test_shift_json(*s.test_shift);
  if (s.last_iterate) j["last_iterate"] = last_iterate_json(*s.last_iterate, s.method);
  return j;
}

nlohmann::ordered_json to_json_block(const Solution& s, const std::string& key) {
  if (key == "params") return to_json(s.params);
  if (key == "order") return order_json(s.order, s.method);
  if (key == "error") return error_json(s.error);
  if (key == "bayes_optimal") return bayes_json(s);
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
  // The tasks in use: rho, or the task spectrum that replaces it (docs/theory.md §12.1).
  // (Written in pieces: a spectrum of many levels is longer than buf.)
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

std::vector<std::string> solution_columns(bool test_shift) {
  std::vector<std::string> c = {"converged", "residual", "iterations", "tm", "idg", "odg",
                                "tm_algo", "tm_mem", "tm_struct", "idg_algo", "idg_mem",
                                "idg_struct", "odg_algo", "odg_mem", "odg_struct"};
  for (const auto& [name, v] : order_fields({})) c.push_back(name);
  c.push_back("z");
  c.push_back("e");
  if (test_shift)
    for (const char* n : {"shift", "shift_algo", "shift_mem", "shift_struct"}) c.push_back(n);
  return c;
}

std::vector<double> solution_row(const Solution& s, bool test_shift) {
  const bool ok = s.converged();
  const double nan = std::nan("");
  auto val = [&](double v) { return ok ? v : nan; };
  const auto& d = s.decomposition;
  std::vector<double> r = {ok ? 1.0 : 0.0, s.residual_norm, static_cast<double>(s.iterations),
                           val(s.error.tm), val(s.error.idg), val(s.error.odg),
                           val(d.tm.algo), val(d.tm.mem), val(d.tm.structural),
                           val(d.idg.algo), val(d.idg.mem), val(d.idg.structural),
                           val(d.odg.algo), val(d.odg.mem), val(d.odg.structural)};
  for (const auto& [name, v] : order_fields(s.order))
    r.push_back(s.method == Method::Letey && ridgeless_only(name) ? nan : val(v));
  r.push_back(val(s.z));
  r.push_back(val(s.e));
  if (test_shift) {
    const bool has = ok && s.test_shift;
    const TestShift t = has ? *s.test_shift : TestShift{};
    for (double v : {t.error, t.decomposition.algo, t.decomposition.mem, t.decomposition.structural})
      r.push_back(has ? v : nan);
  }
  return r;
}

namespace {

// A failed finite-D result shows no values (docs/theory.md §21; its limit included).
Errors shown(const FiniteDimResult& r, const Errors& e) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  return r.converged() ? e : Errors{nan, nan, nan};
}

}  // namespace

nlohmann::ordered_json to_json(const FiniteDimResult& r) {
  const OrderParams& o = r.order;
  nlohmann::ordered_json sources = nlohmann::ordered_json::object();
  for (const auto& s : r.sources)
    sources[s.name] = {{"slope", error_json(shown(r, s.slope))},
                       {"correction", error_json(shown(r, s.correction))}};
  const bool ok = r.converged();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto val = [&](double v) { return ok ? v : nan; };
  return {{"dim", r.options.dim},
          {"status", numerics::to_string(r.status)},
          {"message", r.message},
          {"residual_norm", r.residual_norm},
          {"sized", to_json(r.sized)},
          {"error", error_json(shown(r, r.error))},
          {"limit", error_json(shown(r, r.limit.error))},
          {"slope", error_json(shown(r, r.slope))},
          {"order",
           {{"q", val(o.q)}, {"m", val(o.m)}, {"qbar", val(o.qbar)}, {"mbar", val(o.mbar)},
            {"m0", val(o.m0)}, {"q0", val(o.q0)}}},
          {"sources", sources},
          {"omitted", r.omitted},
          {"finite_d_switches", to_json(r.options.switches)}};
}

std::string to_text(const FiniteDimResult& r) {
  std::ostringstream os;
  char buf[512];
  const Params& p = r.sized;
  std::snprintf(buf, sizeof buf,
                "\nfinite D = %d (docs/theory.md §21): sizes alpha %g  alpha_test %g  tau %g  "
                "kappa %g  ",
                r.options.dim, p.alpha, p.effective_alpha_test(), p.tau, p.kappa);
  os << buf << task_description(p) << '\n' << to_text(r.options.switches);
  if (!r.converged()) {
    std::snprintf(buf, sizeof buf, "%s (residual norm %.2e): no finite-D prediction: ",
                  numerics::to_string(r.status), r.residual_norm);
    os << buf << r.message << '\n';
    return os.str();
  }
  os << "          error      limit correction\n";
  auto line = [&](const char* name, double e, double l) {
    std::snprintf(buf, sizeof buf, "%-5s %10.6f %10.6f %+10.6f\n", name, e, l, e - l);
    os << buf;
  };
  line("TM", r.error.tm, r.limit.error.tm);
  line("IDG", r.error.idg, r.limit.error.idg);
  line("ODG", r.error.odg, r.limit.error.odg);
  os << "correction per source             TM         IDG         ODG\n";
  for (const auto& s : r.sources) {
    std::snprintf(buf, sizeof buf, "  %-24s %+10.6f %+10.6f %+10.6f\n", s.name.c_str(),
                  s.correction.tm, s.correction.idg, s.correction.odg);
    os << buf;
  }
  os << "omitted (not derived, listed only):";
  for (const auto& name : r.omitted) os << ' ' << name;
  os << '\n';
  return os.str();
}

std::vector<std::string> finite_dim_columns() { return {"fd_tm", "fd_idg", "fd_odg"}; }

std::vector<double> finite_dim_row(const FiniteDimResult* r) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (r == nullptr || !r->converged()) return {nan, nan, nan};
  return {r->error.tm, r->error.idg, r->error.odg};
}

}  // namespace icl::theory
