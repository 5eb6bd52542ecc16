// Params, solve, sweep, phase_grid and the phase helpers (theory/params.hpp, lowrank.hpp,
// sweep.hpp). Every dict and array of results comes from the theory's one serializer
// (theory/serialize.hpp: to_json, solution_columns/solution_row).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/progress.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "theory/params.hpp"
#include "theory/serialize.hpp"
#include "theory/sweep.hpp"

namespace icl::python {
namespace {

using theory::Params;
using theory::Solution;

numerics::MomentMethod moments_from_string(const std::string& s) {
  if (s == "quadrature") return numerics::MomentMethod::Quadrature;
  if (s == "exact") return numerics::MomentMethod::Exact;
  throw InvalidParams("moments", "must be quadrature or exact (got '" + s + "')");
}

theory::SolveOptions solve_options(const std::string& method, const std::string& moments,
                                    double residual_tolerance, int max_iterations) {
  theory::SolveOptions o;
  o.method = theory::method_from_string(method);
  o.moments = moments_from_string(moments);
  if (!(residual_tolerance > 0)) throw InvalidParams("residual_tolerance", "must be > 0");
  if (max_iterations < 1) throw InvalidParams("max_iterations", "must be >= 1");
  o.solver.residual_tolerance = residual_tolerance;
  o.solver.max_iterations = max_iterations;
  return o;
}

// One part of the `icl solve --json` layout as Python objects, built alone
// (theory::to_json_block: about 1 us against 10 us for the whole object).
py::object solution_part(const Solution& s, const char* key) {
  return to_python(theory::to_json_block(s, key));
}

// The raw fields (alpha_test as stored, negative = alpha), in constructor order.
std::vector<std::pair<const char*, double>> raw_fields(const Params& p) {
  return {{"alpha", p.alpha}, {"alpha_test", p.alpha_test}, {"tau", p.tau},
          {"kappa", p.kappa}, {"rho", p.rho},               {"sigma", p.sigma},
          {"sigma_test", p.sigma_test}, {"lambda_", p.lambda}};
}

// Pickle states: plain tuples of the fields (exact doubles, so a round trip is bit for bit).
// Params: the eight raw fields, the task spectrum as [(eigenvalue, weight), ...], test_overlap
// (None when unset) and test_levels (docs/theory.md §20).
py::tuple params_state(const Params& p) {
  py::list spectrum;
  for (const auto& a : p.task_spectrum) spectrum.append(py::make_tuple(a.position, a.mass));
  return py::make_tuple(p.alpha, p.alpha_test, p.tau, p.kappa, p.rho, p.sigma, p.sigma_test,
                        p.lambda, spectrum, py::cast(p.test_overlap), py::cast(p.test_levels));
}

Params params_from_state(const py::tuple& t) {
  if (t.size() != 8 && t.size() != 9 && t.size() != 11)
    throw std::runtime_error("Params: bad pickle state");
  Params p{.alpha = t[0].cast<double>(), .alpha_test = t[1].cast<double>(),
           .tau = t[2].cast<double>(), .kappa = t[3].cast<double>(), .rho = t[4].cast<double>(),
           .sigma = t[5].cast<double>(), .sigma_test = t[6].cast<double>(),
           .lambda = t[7].cast<double>()};
  if (t.size() >= 9)
    for (const auto& a : t[8].cast<std::vector<std::pair<double, double>>>())
      p.task_spectrum.push_back({a.first, a.second});
  if (t.size() == 11) {
    p.test_overlap = t[9].cast<std::optional<double>>();
    p.test_levels = t[10].cast<std::vector<double>>();
  }
  return p;
}

// The values of a solution (or of a last iterate) as one flat list of doubles, in a fixed
// order: order parameters (13), errors (3), decomposition (9), z, e.
std::vector<double*> value_fields(theory::OrderParams& o, theory::Errors& er,
                                  theory::Decomposition& d, double& z, double& e) {
  return {&o.q, &o.m, &o.chi, &o.qbar, &o.chibar, &o.mbar, &o.m0, &o.q0, &o.qhat, &o.mhat,
          &o.chihat, &o.qbarhat, &o.chibarhat, &er.tm, &er.idg, &er.odg,
          &d.tm.algo, &d.tm.mem, &d.tm.structural, &d.idg.algo, &d.idg.mem, &d.idg.structural,
          &d.odg.algo, &d.odg.mem, &d.odg.structural, &z, &e};
}

std::vector<double> values_of(theory::OrderParams o, theory::Errors er, theory::Decomposition d,
                              double z, double e) {
  std::vector<double> out;
  for (double* v : value_fields(o, er, d, z, e)) out.push_back(*v);
  return out;
}

void set_values(const std::vector<double>& v, theory::OrderParams& o, theory::Errors& er,
                theory::Decomposition& d, double& z, double& e) {
  auto fields = value_fields(o, er, d, z, e);
  if (v.size() != fields.size()) throw std::runtime_error("Solution: bad pickle state");
  for (std::size_t i = 0; i < v.size(); ++i) *fields[i] = v[i];
}

// The shifted test protocol (docs/theory.md §20): None, or (overlap, levels, error, algo, mem,
// struct).
py::object shift_state(const std::optional<theory::TestShift>& t) {
  if (!t) return py::none();
  return py::make_tuple(t->overlap, t->levels, t->error, t->decomposition.algo,
                        t->decomposition.mem, t->decomposition.structural);
}

std::optional<theory::TestShift> shift_from_state(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  const auto t = o.cast<py::tuple>();
  theory::TestShift s;
  s.overlap = t[0].cast<double>();
  s.levels = t[1].cast<std::vector<double>>();
  s.error = t[2].cast<double>();
  s.decomposition = {t[3].cast<double>(), t[4].cast<double>(), t[5].cast<double>()};
  return s;
}

py::tuple solution_state(const Solution& s) {
  py::object last = py::none();
  if (s.last_iterate) {
    auto li = *s.last_iterate;
    last = py::cast(values_of(li.order, li.error, li.decomposition, li.z, li.e));
  }
  return py::make_tuple(params_state(s.params), static_cast<int>(s.method),
                        static_cast<int>(s.status), s.residual_norm, s.iterations, s.message,
                        values_of(s.order, s.error, s.decomposition, s.z, s.e), s.nu,
                        static_cast<int>(s.regime), s.bayes_optimal.idg, s.bayes_optimal.odg,
                        last, shift_state(s.test_shift), s.bayes_optimal.shift,
                        s.last_iterate ? shift_state(s.last_iterate->test_shift) : py::none());
}

Solution solution_from_state(const py::tuple& t) {
  if (t.size() != 12 && t.size() != 15) throw std::runtime_error("Solution: bad pickle state");
  Solution s;
  s.params = params_from_state(t[0].cast<py::tuple>());
  s.method = static_cast<theory::Method>(t[1].cast<int>());
  s.status = static_cast<numerics::Status>(t[2].cast<int>());
  s.residual_norm = t[3].cast<double>();
  s.iterations = t[4].cast<int>();
  s.message = t[5].cast<std::string>();
  set_values(t[6].cast<std::vector<double>>(), s.order, s.error, s.decomposition, s.z, s.e);
  s.nu = t[7].cast<double>();
  s.regime = static_cast<theory::Regime>(t[8].cast<int>());
  s.bayes_optimal.idg = t[9].cast<double>();
  s.bayes_optimal.odg = t[10].cast<double>();
  if (!t[11].is_none()) {
    theory::LastIterate li;
    set_values(t[11].cast<std::vector<double>>(), li.order, li.error, li.decomposition, li.z,
               li.e);
    s.last_iterate = li;
  }
  if (t.size() == 15) {
    s.test_shift = shift_from_state(t[12]);
    s.bayes_optimal.shift = t[13].cast<double>();
    if (s.last_iterate) s.last_iterate->test_shift = shift_from_state(t[14]);
  }
  return s;
}

// Params(alpha=2.0, ...) with Python's shortest round-trip float repr: eval(repr(p)) == p.
std::string params_repr(const Params& p) {
  std::string r = "Params(";
  const char* sep = "";
  for (const auto& [name, v] : raw_fields(p)) {
    r += sep;
    r += name;
    r += "=";
    r += py::repr(py::float_(v)).cast<std::string>();
    sep = ", ";
  }
  auto f = [](double v) { return py::repr(py::float_(v)).cast<std::string>(); };
  if (!p.task_spectrum.empty()) {
    r += ", task_spectrum=[";
    for (std::size_t k = 0; k < p.task_spectrum.size(); ++k)
      r += (k ? ", (" : "(") + f(p.task_spectrum[k].position) + ", " +
           f(p.task_spectrum[k].mass) + ")";
    r += "]";
  }
  if (p.test_overlap) r += ", test_overlap=" + f(*p.test_overlap);
  if (!p.test_levels.empty()) {
    r += ", test_levels=[";
    for (std::size_t k = 0; k < p.test_levels.size(); ++k) r += (k ? ", " : "") + f(p.test_levels[k]);
    r += "]";
  }
  return r + ")";
}

// Arrays of `shape` from the solutions (row-major): the TSV columns of `icl sweep`
// (theory::solution_columns/solution_row), NaN where a point did not converge and for the
// quantities Letey/Lu does not define; converged as bool and iterations as int.
py::dict solutions_to_arrays(const std::vector<Solution>& sols, std::vector<py::ssize_t> shape) {
  const bool shift = theory::any_test_shift(sols);
  const std::vector<std::string> names = theory::solution_columns(shift);
  std::vector<std::vector<double>> rows;
  rows.reserve(sols.size());
  for (const Solution& s : sols) rows.push_back(theory::solution_row(s, shift));
  py::dict out;
  for (std::size_t c = 0; c < names.size(); ++c) {
    auto fill = [&](auto array) {
      for (std::size_t i = 0; i < rows.size(); ++i)
        array.mutable_data()[i] = static_cast<typename decltype(array)::value_type>(rows[i][c]);
      return array;
    };
    if (names[c] == "converged")
      out["converged"] = fill(py::array_t<bool>(shape));
    else if (names[c] == "iterations")
      out["iterations"] = fill(py::array_t<int>(shape));
    else
      out[py::str(names[c])] = fill(py::array_t<double>(shape));
  }
  return out;
}

// The finite-D options of solve_finite_dim and sweep(finite_dim=D) (docs/theory.md §21); the
// switches without a dimension are refused, as `icl sweep` refuses them without --finite-dim.
std::optional<theory::FiniteDimOptions> finite_dim_options(std::optional<int> dim,
                                                           bool sphere_queries,
                                                           bool fixed_norm_tasks,
                                                           bool balanced_assignment,
                                                           bool gaussian_context) {
  if (!dim) {
    for (const auto& [name, on] : {std::pair{"sphere_queries", sphere_queries},
                                   std::pair{"fixed_norm_tasks", fixed_norm_tasks},
                                   std::pair{"balanced_assignment", balanced_assignment},
                                   std::pair{"gaussian_context", gaussian_context}})
      if (on) throw InvalidParams(name, "needs finite_dim (the finite-D prediction's switch)");
    return std::nullopt;
  }
  theory::FiniteDimOptions o;
  o.dim = *dim;
  o.sphere_queries = sphere_queries;
  o.fixed_norm_tasks = fixed_norm_tasks;
  o.balanced_assignment = balanced_assignment;
  o.gaussian_context = gaussian_context;
  o.validate();
  return o;
}

// The constructor's name of the ridge, lambda_ (lambda is a Python keyword), as Params' name.
std::string param_name(const std::string& name) { return name == "lambda_" ? "lambda" : name; }

// Params(**kwargs) accepts the field names, "lambda" (a Python keyword: use lambda_ or
// **{"lambda": ...}) and "gamma" (sets tau = gamma * kappa after everything else; giving both
// tau and gamma is an InvalidParams naming gamma). alpha_test None (default) = same as alpha.
Params make_params(double alpha, std::optional<double> alpha_test, std::optional<double> tau,
                   double kappa, double rho, double sigma, double sigma_test, double lambda_,
                   std::optional<double> gamma,
                   const std::vector<std::pair<double, double>>& task_spectrum,
                   std::optional<double> test_overlap, const std::vector<double>& test_levels,
                   const py::kwargs& extra) {
  if (tau && gamma)
    throw InvalidParams("gamma", "give tau or gamma = tau/kappa, not both");
  const Params def{};
  Params p{.alpha = alpha, .alpha_test = alpha_test.value_or(def.alpha_test),
           .tau = tau.value_or(def.tau), .kappa = kappa, .rho = rho, .sigma = sigma,
           .sigma_test = sigma_test, .lambda = lambda_};
  for (const auto& item : extra) {
    const std::string key = py::str(item.first);
    if (key != "lambda")
      throw py::type_error("Params() got an unexpected keyword argument '" + key + "'");
    p.lambda = item.second.cast<double>();
  }
  if (gamma) p.set("gamma", *gamma);
  for (const auto& [t, w] : task_spectrum) p.task_spectrum.push_back({t, w});
  p.test_overlap = test_overlap;
  p.test_levels = test_levels;
  return p;
}

}  // namespace

void bind_theory(py::module_& m) {
  const Params def{};
  py::class_<Params> params_class(m, "Params",
      "Parameters of the low-rank ICL problem (all ratios to the token dimension D).\n\n"
      "alpha: context length L/D; alpha_test: test context L_t/D (None or negative = alpha);\n"
      "tau: sequences N/D^2; kappa: tasks M0/D; rho: task rank r/D in (0, 1];\n"
      "sigma, sigma_test: label-noise std (train, test); lambda_: ridge.\n"
      "gamma = tau/kappa may be given instead of tau. The constructor does not\n"
      "validate; validate() and solve() raise InvalidParams (ValueError) naming\n"
      "the field.");
  params_class
      .def(py::init(&make_params), py::kw_only(), py::arg("alpha") = def.alpha,
           py::arg("alpha_test") = py::none(), py::arg("tau") = py::none(),
           py::arg("kappa") = def.kappa, py::arg("rho") = def.rho, py::arg("sigma") = def.sigma,
           py::arg("sigma_test") = def.sigma_test, py::arg("lambda_") = def.lambda,
           py::arg("gamma") = py::none(),
           py::arg("task_spectrum") = std::vector<std::pair<double, double>>{},
           py::arg("test_overlap") = py::none(),
           py::arg("test_levels") = std::vector<double>{},
           "Keyword arguments only; defaults are the paper's decomposition figure (tau = 2.25).\n"
           "Beyond the paper: task_spectrum=[(eigenvalue, weight), ...] (a general task\n"
           "covariance, docs/theory.md §12; power_law_spectrum() and\n"
           "low_rank_plus_complement_spectrum() build them), test_overlap=C in [0, 1] (shifted\n"
           "test tasks with a fraction C of their energy in the training subspace) or\n"
           "test_levels=[t'_k] (the test eigenvalue per task_spectrum level), docs/theory.md §20.\n"
           "alpha_test=None (default) means the same as alpha. `lambda` may be passed as\n"
           "**{'lambda': x}; `gamma` (if given) sets tau = gamma * kappa, and giving both tau\n"
           "and gamma raises InvalidParams naming gamma.")
      .def_readwrite("alpha", &Params::alpha, "context length L / D")
      .def_property(
          "alpha_test", [](const Params& p) { return p.alpha_test; },
          [](Params& p, std::optional<double> v) {
            p.alpha_test = v.value_or(Params{}.alpha_test);
          },
          "test context L_t / D as stored (negative: alpha); setting None means the same as alpha")
      .def_readwrite("tau", &Params::tau, "sequences N / D^2")
      .def_readwrite("kappa", &Params::kappa, "pretraining tasks M0 / D (setting it keeps tau)")
      .def_readwrite("rho", &Params::rho, "task rank r / D, in (0, 1]")
      .def_readwrite("sigma", &Params::sigma, "label-noise standard deviation (pretraining)")
      .def_readwrite("sigma_test", &Params::sigma_test, "label-noise standard deviation (test)")
      .def_readwrite("lambda_", &Params::lambda, "ridge: the loss adds lambda M0 |Gamma|_F^2")
      .def_property(
          "task_spectrum",
          [](const Params& p) {
            std::vector<std::pair<double, double>> v;
            for (const auto& a : p.task_spectrum) v.emplace_back(a.position, a.mass);
            return v;
          },
          [](Params& p, const std::vector<std::pair<double, double>>& v) {
            p.task_spectrum.clear();
            for (const auto& [t, w] : v) p.task_spectrum.push_back({t, w});
          },
          "[(eigenvalue, weight), ...]: a general task covariance (empty: the paper's rank-rho "
          "tasks)")
      .def_readwrite("test_overlap", &Params::test_overlap,
                     "C in [0, 1] or None: shifted test tasks (docs/theory.md §20)")
      .def_readwrite("test_levels", &Params::test_levels,
                     "test eigenvalue per task_spectrum level (docs/theory.md §20)")
      .def_property(
          "gamma", &Params::gamma, [](Params& p, double g) { p.set("gamma", g); },
          "tau / kappa = N / (M0 D); setting it sets tau = gamma * kappa")
      .def_property_readonly("effective_alpha_test", &Params::effective_alpha_test,
                             "alpha_test, or alpha when alpha_test < 0")
      .def_property_readonly("nu", &Params::nu, "(1 + sigma^2) / alpha: the context-induced ridge")
      .def("validate", &Params::validate,
           "Raise InvalidParams (ValueError) naming the field when a value is out of range.")
      .def("validate_for_saddle_point", &Params::validate_for_saddle_point,
           "validate() plus lambda > 0 or tau > 1 (the saddle point's requirement).")
      .def("get", [](const Params& p, const std::string& name) { return p.get(param_name(name)); },
           py::arg("name"), "Value by name (names(), or lambda_); includes gamma, lambda.")
      .def("set",
           [](Params& p, const std::string& name, double v) { p.set(param_name(name), v); },
           py::arg("name"), py::arg("value"), "Set by name; 'gamma' sets tau = gamma * kappa.")
      .def_static("names", &Params::names,
                  "Names usable with get/set, sweep and phase_grid (which also accept lambda_).")
      .def("to_dict", [](const Params& p) { return to_python(theory::to_json(p)); },
           "{name: value} for every name in names() (the `icl solve --json` params).")
      .def("copy", [](const Params& p) { return p; }, "A copy.")
      .def("__copy__", [](const Params& p) { return p; })
      .def("__deepcopy__", [](const Params& p, py::dict) { return p; }, py::arg("memo"))
      .def("__repr__", &params_repr)
      .def("__eq__",
           [](const Params& a, const Params& b) {
             return raw_fields(a) == raw_fields(b) && theory::to_json(a) == theory::to_json(b);
           })
      .def(py::pickle(&params_state, &params_from_state));
  // `p.lambda` is a syntax error in Python but getattr(p, "lambda") works.
  params_class.def_readwrite("lambda", &Params::lambda, "same as lambda_");

  py::class_<Solution>(m, "Solution",
                       "Result of solve(): convergence facts (converged, status, residual_norm,\n"
                       "iterations, message), the order parameters, errors, decomposition, z and\n"
                       "e (all NaN when not converged: the solver's last iterate is then in\n"
                       "last_iterate), and nu, regime, bayes_optimal (functions of params).")
      .def_property_readonly("params", [](const Solution& s) { return s.params; },
                             "the Params solved")
      .def_property_readonly("method", [](const Solution& s) { return theory::to_string(s.method); },
                             "'saddle' | 'reduced' | 'letey'")
      .def_property_readonly("converged", &Solution::converged, "residual below the tolerance")
      .def_property_readonly("status", [](const Solution& s) { return numerics::to_string(s.status); },
                             "solver status as a string")
      .def_readonly("residual_norm", &Solution::residual_norm, "|F(x*)|_2 recomputed at the result")
      .def_readonly("iterations", &Solution::iterations, "solver iterations")
      .def_readonly("message", &Solution::message, "solver report / reason for failure")
      .def_property_readonly("order", [](const Solution& s) { return solution_part(s, "order"); },
                             "order parameters {q, m, chi, qbar, chibar, mbar, m0, q0, qhat, mhat,\n"
                             "chihat, qbarhat, chibarhat} (Letey: without chi/chibar/conjugates)")
      .def_property_readonly("error", [](const Solution& s) { return solution_part(s, "error"); },
                             "{tm, idg, odg} test errors")
      .def_property_readonly(
          "bayes_optimal", [](const Solution& s) { return solution_part(s, "bayes_optimal"); },
          "{idg, odg}: the Bayes-optimal errors from the test prompt alone, same convention as\n"
          "`error` (docs/theory.md §17); with a shifted test protocol also shift")
      .def_property_readonly(
          "test_shift",
          [](const Solution& s) -> py::object {
            if (!s.test_shift) return py::none();
            return solution_part(s, "test_shift");
          },
          "None, or the shifted test protocol (Params.test_overlap / test_levels,\n"
          "docs/theory.md §20): {overlap, levels, error, decomposition: {algo, mem, struct}}")
      .def_property_readonly(
          "decomposition", [](const Solution& s) { return solution_part(s, "decomposition"); },
          "{tm|idg|odg: {algo, mem, struct}}; the three pieces sum to the error (letey: from\n"
          "the ridgeless limit of the reduced solution)")
      .def_property_readonly("regime", [](const Solution& s) { return theory::to_string(s.regime); },
                             "'task-rich' | 'task-poor' | 'boundary'")
      .def_readonly("z", &Solution::z, "spectral argument; -z is the effective ridge on S")
      .def_readonly("e", &Solution::e, "E_train / tau: weight of the memorization noise")
      .def_readonly("nu", &Solution::nu, "(1 + sigma^2) / alpha")
      .def_property_readonly(
          "last_iterate",
          [](const Solution& s) -> py::object {
            if (!s.last_iterate) return py::none();
            return solution_part(s, "last_iterate");
          },
          "None when converged; otherwise (when the solver produced one) the last iterate\n"
          "{order, error, decomposition, z, e}, for diagnosis only: not a solution")
      .def("to_dict", [](const Solution& s) { return to_python(theory::to_json(s)); },
           "Everything as nested dicts (the `icl solve --json` layout).")
      .def(py::pickle(&solution_state, &solution_from_state))
      .def("__repr__", [](const Solution& s) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "<Solution %s %s residual=%.3g iterations=%d tm=%.6g idg=%.6g odg=%.6g>",
                      theory::to_string(s.method), s.converged() ? "converged" : "NOT converged",
                      s.residual_norm, s.iterations, s.error.tm, s.error.idg, s.error.odg);
        return std::string(buf);
      });

  auto spectrum_list = [](const std::vector<numerics::Atom>& v) {
    std::vector<std::pair<double, double>> out;
    for (const auto& a : v) out.emplace_back(a.position, a.mass);
    return out;
  };
  m.def(
      "power_law_spectrum",
      [spectrum_list](double exponent, int levels) {
        return spectrum_list(theory::power_law_spectrum(exponent, levels));
      },
      py::arg("exponent"), py::arg("levels"),
      "[(eigenvalue, weight), ...]: `levels` equally weighted eigenvalues proportional to\n"
      "k^-exponent, mean 1 (for Params(task_spectrum=...); CLI --task-spectrum powerlaw:EXP:LEVELS).");
  m.def(
      "low_rank_plus_complement_spectrum",
      [spectrum_list](double rho, double epsilon) {
        return spectrum_list(theory::low_rank_plus_complement_spectrum(rho, epsilon));
      },
      py::arg("rho"), py::arg("epsilon"),
      "[(eigenvalue, weight), ...]: eigenvalue a on a fraction rho and epsilon * a on the rest,\n"
      "mean 1 (CLI --task-spectrum complement:EPS).");
  m.def(
      "solve",
      [](const Params& p, const std::string& method, const std::string& moments,
         double residual_tolerance, int max_iterations, std::optional<Solution> start) {
        auto o = solve_options(method, moments, residual_tolerance, max_iterations);
        if (start) {
          if (!start->converged())
            throw InvalidParams("start", "the Solution did not converge (its values are NaN)");
          o.start = start->order;
        }
        py::gil_scoped_release release;
        return theory::solve(p, o);
      },
      py::arg("params"), py::kw_only(), py::arg("method") = "saddle",
      py::arg("moments") = "quadrature", py::arg("residual_tolerance") = 1e-10,
      py::arg("max_iterations") = 200, py::arg("start") = py::none(),
      "Solve the theory at `params` and return a Solution.\n\n"
      "method: 'saddle' (full replica saddle point), 'reduced' (scalar closed forms) or 'letey'\n"
      "(Letey/Lu deterministic equivalent). moments: 'quadrature' | 'exact' spectral moments for\n"
      "the saddle point. start: a previous converged Solution to warm-start from. Raises\n"
      "InvalidParams (ValueError) for bad parameters; non-convergence is reported in\n"
      ".converged/.status, never raised (then every value is NaN, see last_iterate).");

  m.def(
      "sweep",
      [](const Params& p, const std::string& name, const std::vector<double>& values,
         const std::string& method, const std::string& moments, bool warm_start, int max_halvings,
         double residual_tolerance, const py::object& progress, std::optional<int> finite_dim,
         bool sphere_queries, bool fixed_norm_tasks, bool balanced_assignment,
         bool gaussian_context) {
        const auto fd_options = finite_dim_options(finite_dim, sphere_queries, fixed_norm_tasks,
                                                   balanced_assignment, gaussian_context);
        theory::SweepOptions o;
        o.solve = solve_options(method, moments, residual_tolerance, 200);
        o.warm_start = warm_start;
        o.max_halvings = max_halvings;
        const PyProgress report(progress, /*cancels=*/true);  // single-threaded: may unwind
        o.progress = report.function();
        std::vector<Solution> sols;
        std::vector<theory::FiniteDimPoint> fd;
        {
          py::gil_scoped_release release;
          sols = theory::sweep(p, param_name(name), values, o);
          // Reported as the second half of one count (a progress bar never runs backwards).
          const auto second_half = [&](std::size_t d, std::size_t n, const std::string& what) {
            o.progress(n + d, 2 * n, what);
          };
          if (fd_options)
            fd = theory::finite_dim_sweep(p, param_name(name), values, *fd_options, second_half);
        }
        py::dict out = solutions_to_arrays(sols, {static_cast<py::ssize_t>(sols.size())});
        if (fd_options) {  // the fd_* columns of `icl sweep --finite-dim`
          const auto names = theory::finite_dim_columns();
          std::vector<py::array_t<double>> cols;
          for (std::size_t c = 0; c < names.size(); ++c)
            cols.emplace_back(static_cast<py::ssize_t>(fd.size()));
          for (std::size_t i = 0; i < fd.size(); ++i) {
            const auto row = theory::finite_dim_row(fd[i].result ? &*fd[i].result : nullptr);
            for (std::size_t c = 0; c < names.size(); ++c) cols[c].mutable_data()[i] = row[c];
          }
          for (std::size_t c = 0; c < names.size(); ++c) out[py::str(names[c])] = cols[c];
        }
        py::array_t<double> v(static_cast<py::ssize_t>(values.size()));
        for (std::size_t i = 0; i < values.size(); ++i) v.mutable_data()[i] = values[i];
        out[py::str(name)] = v;
        return out;
      },
      py::arg("params"), py::arg("name"), py::arg("values"), py::kw_only(),
      py::arg("method") = "saddle", py::arg("moments") = "quadrature",
      py::arg("warm_start") = true, py::arg("max_halvings") = 6,
      py::arg("residual_tolerance") = 1e-10, py::arg("progress") = py::none(),
      py::arg("finite_dim") = py::none(), py::arg("sphere_queries") = false,
      py::arg("fixed_norm_tasks") = false, py::arg("balanced_assignment") = false,
      py::arg("gaussian_context") = false,
      "Solve along one parameter (`name` in Params.names(), or lambda_) over `values`.\n\n"
      "Returns a dict of 1-D numpy arrays: the varied parameter under its own name, converged\n"
      "(bool), residual, iterations, tm, idg, odg, the decomposition pieces (tm_algo, tm_mem,\n"
      "tm_struct, idg_*, odg_*), the order parameters, z and e; NaN where a point did not\n"
      "converge. Every point is validated first (InvalidParams names the bad one).\n"
      "finite_dim=D (with the switches sphere_queries, fixed_norm_tasks, balanced_assignment,\n"
      "gaussian_context):\n"
      "also fd_tm, fd_idg, fd_odg, the finite-D prediction per point (solve_finite_dim; NaN\n"
      "where it failed or does not cover the point), as `icl sweep --finite-dim D`.\n"
      "progress: None or callable(done, total, what) called with the GIL after each point.");

  m.def(
      "_solve_finite_dim",
      [](const Params& p, int dim, bool sphere_queries, bool fixed_norm_tasks,
         bool balanced_assignment, bool gaussian_context) {
        const auto o = *finite_dim_options(dim, sphere_queries, fixed_norm_tasks,
                                           balanced_assignment, gaussian_context);
        theory::FiniteDimResult r;
        {
          py::gil_scoped_release release;
          r = theory::solve_finite_dim(p, o);
        }
        return to_python(theory::to_json(r));
      },
      py::arg("params"), py::arg("dim"), py::kw_only(), py::arg("sphere_queries") = false,
      py::arg("fixed_norm_tasks") = false, py::arg("balanced_assignment") = false,
      py::arg("gaussian_context") = false,
      "Internal (icl_theory.solve_finite_dim): the finite-D prediction at dimension `dim`\n"
      "(theory::solve_finite_dim, docs/theory.md §21) as the dict of its one serializer.");

  m.def(
      "phase_grid",
      [](const Params& p, const std::string& x_name, const std::vector<double>& xs,
         const std::string& y_name, const std::vector<double>& ys, const std::string& method,
         const std::string& moments, int threads, const py::object& progress) {
        theory::PhaseOptions o;
        o.solve = solve_options(method, moments, 1e-10, 200);
        if (threads < 0) throw InvalidParams("threads", "must be >= 0");
        o.threads = threads;
        const PyProgress report(progress, /*cancels=*/true);  // solve_points stops its workers
        o.progress = report.function();
        std::vector<Solution> sols;
        {
          py::gil_scoped_release release;
          sols = theory::phase_grid(p, param_name(x_name), xs, param_name(y_name), ys, o);
        }
        const auto nx = static_cast<py::ssize_t>(xs.size());
        const auto ny = static_cast<py::ssize_t>(ys.size());
        py::dict out = solutions_to_arrays(sols, {nx, ny});
        py::array_t<double> X({nx, ny}), Y({nx, ny});
        for (py::ssize_t i = 0; i < nx; ++i)
          for (py::ssize_t j = 0; j < ny; ++j) {
            X.mutable_at(i, j) = xs[static_cast<std::size_t>(i)];
            Y.mutable_at(i, j) = ys[static_cast<std::size_t>(j)];
          }
        out[py::str(x_name)] = X;
        out[py::str(y_name)] = Y;
        py::array_t<int> reg({nx, ny});
        for (std::size_t k = 0; k < sols.size(); ++k)
          reg.mutable_data()[k] = static_cast<int>(sols[k].regime);
        out["regime"] = reg;
        return out;
      },
      py::arg("params"), py::arg("x_name"), py::arg("xs"), py::arg("y_name"), py::arg("ys"),
      py::kw_only(), py::arg("method") = "saddle", py::arg("moments") = "quadrature",
      py::arg("threads") = 0, py::arg("progress") = py::none(),
      "Solve on the grid xs x ys of two parameters (names as in sweep()). Returns a dict of 2-D\n"
      "numpy arrays of shape (len(xs), len(ys)) (element [i, j] at x = xs[i], y = ys[j]): the\n"
      "same quantities as sweep(), the two parameters under their names, and regime\n"
      "(0 task-rich, 1 task-poor, 2 boundary). threads = 0 uses every core; results do not\n"
      "depend on it. progress: as in sweep().");

  m.def(
      "_solve_points",
      [](const Params& base, const std::vector<std::string>& names,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
         const std::string& method, const std::string& moments, double residual_tolerance,
         int max_iterations, int threads, const py::object& progress) {
        if (values.ndim() != 2 || values.shape(1) != static_cast<py::ssize_t>(names.size()))
          throw std::invalid_argument("_solve_points: values must have shape (n, len(names))");
        theory::PhaseOptions o;
        o.solve = solve_options(method, moments, residual_tolerance, max_iterations);
        if (threads < 0) throw InvalidParams("threads", "must be >= 0");
        o.threads = threads;
        const PyProgress report(progress, /*cancels=*/true);
        o.progress = report.function();
        const auto n = values.shape(0);
        const auto v = values.unchecked<2>();
        std::vector<Params> points(static_cast<std::size_t>(n), base);
        for (py::ssize_t k = 0; k < n; ++k)
          for (std::size_t c = 0; c < names.size(); ++c)  // in order: gamma last sets tau
            points[static_cast<std::size_t>(k)].set(param_name(names[c]),
                                                    v(k, static_cast<py::ssize_t>(c)));
        std::vector<Solution> sols;
        {
          py::gil_scoped_release release;
          sols = theory::solve_points(points, o);
        }
        py::dict out = solutions_to_arrays(sols, {n});
        py::array_t<int> reg(n);
        for (std::size_t k = 0; k < sols.size(); ++k)
          reg.mutable_data()[k] = static_cast<int>(sols[k].regime);
        out["regime"] = reg;
        return out;
      },
      py::arg("base"), py::arg("names"), py::arg("values"), py::kw_only(), py::arg("method"),
      py::arg("moments"), py::arg("residual_tolerance"), py::arg("max_iterations"),
      py::arg("threads"), py::arg("progress"),
      "Internal (icl_theory.solve with arrays): solve base with names[c] set to values[k, c]\n"
      "for every row k (theory::solve_points); a dict of 1-D arrays as sweep() returns.");

  m.def("regime", [](const Params& p) { return std::string(theory::to_string(theory::regime(p))); },
        py::arg("params"), "'task-rich' (rho < kappa), 'task-poor' (rho > kappa) or 'boundary'.");
  m.def("critical_rho", &theory::critical_rho, py::arg("params"),
        "Phase boundary rho_c = kappa (inside (0, 1] only when kappa <= 1).");
  m.def("has_transition", &theory::has_transition, py::arg("params"),
        "True when kappa < 1: the boundary rho = kappa is reachable.");
  m.def("atom_mass", &theory::atom_mass, py::arg("params"),
        "Marchenko-Pastur atom at 0 inside span(A): max(0, 1 - kappa/rho).");
  m.def("interpolation_tau", &theory::interpolation_tau,
        "tau = 1 (N = D^2): the ridgeless interpolation threshold.");
}

}  // namespace icl::python
