// Params (theory/params.hpp, theory/param_input.hpp): the constructor, fields, pickling and repr;
// the spectrum helpers and the phase functions (docs/errors_phases.md §10,
// docs/general_covariance.md §12).
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/kwargs.hpp"
#include "python/theory_common.hpp"
#include "theory/lowrank.hpp"
#include "theory/param_input.hpp"
#include "theory/params.hpp"
#include "theory/serialize.hpp"

namespace icl::python {
namespace {

using theory::Params;

// The raw fields (alpha_test as stored, negative = alpha), in constructor order.
// With a task spectrum rho is not a parameter (the spectrum is the whole task covariance, and
// the constructor refuses rho next to it): it is left out, so that eval(repr(p)) == p.
std::vector<std::pair<const char*, double>> raw_fields(const Params& p) {
  std::vector<std::pair<const char*, double>> f = {
      {"alpha", p.alpha}, {"alpha_test", p.alpha_test}, {"tau", p.tau}, {"kappa", p.kappa}};
  if (p.task_spectrum.empty()) f.emplace_back("rho", p.rho);
  f.insert(f.end(), {{"sigma", p.sigma}, {"sigma_test", p.sigma_test}, {"lambda_", p.lambda}});
  return f;
}

}  // namespace

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

namespace {

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

// Params(**kwargs): the keywords into theory::ParamInput, whose build() applies the input rules
// (gamma instead of tau, rho next to a spectrum that does not use it, the spectrum as text or as
// atoms) as the command line does; the values are not validated (validate() and solve() do).
// "lambda" (a Python keyword) is accepted through **{"lambda": x}; alpha_test None = alpha.
Params make_params(std::optional<double> alpha, std::optional<double> alpha_test,
                   std::optional<double> tau, std::optional<double> kappa,
                   std::optional<double> rho, std::optional<double> sigma,
                   std::optional<double> sigma_test, std::optional<double> lambda_,
                   std::optional<double> gamma, const py::object& task_spectrum,
                   std::optional<double> test_overlap, const std::vector<double>& test_levels,
                   const py::kwargs& extra) {
  theory::ParamInput in{.alpha = alpha, .alpha_test = alpha_test, .tau = tau, .gamma = gamma,
                        .kappa = kappa, .rho = rho, .sigma = sigma, .sigma_test = sigma_test,
                        .lambda = lambda_};
  Kwargs k(extra, "Params");
  double lambda_keyword = 0;
  if (k.take("lambda", lambda_keyword)) in.lambda = lambda_keyword;
  k.finish();
  if (py::isinstance<py::str>(task_spectrum)) {
    in.task_spectrum_text = task_spectrum.cast<std::string>();
  } else if (!task_spectrum.is_none()) {
    std::vector<numerics::Atom> atoms;
    for (const auto& [t, w] : task_spectrum.cast<std::vector<std::pair<double, double>>>())
      atoms.push_back({t, w});
    if (!atoms.empty()) in.task_spectrum = atoms;
  }
  in.test_overlap = test_overlap;
  in.test_levels = test_levels;
  return in.build();
}

}  // namespace

void bind_params(py::module_& m) {
  py::class_<Params> params_class(m, "Params",
      "Parameters of the low-rank ICL problem (all ratios to the token dimension D).\n\n"
      "alpha: context length L/D; alpha_test: test context L_t/D (None or negative = alpha);\n"
      "tau: sequences N/D^2; kappa: tasks M0/D; rho: task rank r/D in (0, 1];\n"
      "sigma, sigma_test: label-noise std (train, test); lambda_: ridge.\n"
      "gamma = tau/kappa may be given instead of tau. The constructor does not\n"
      "validate; validate() and solve() raise InvalidParams (ValueError) naming\n"
      "the field.");
  params_class
      .def(py::init(&make_params), py::kw_only(), py::arg("alpha") = py::none(),
           py::arg("alpha_test") = py::none(), py::arg("tau") = py::none(),
           py::arg("kappa") = py::none(), py::arg("rho") = py::none(),
           py::arg("sigma") = py::none(), py::arg("sigma_test") = py::none(),
           py::arg("lambda_") = py::none(), py::arg("gamma") = py::none(),
           py::arg("task_spectrum") = py::none(), py::arg("test_overlap") = py::none(),
           py::arg("test_levels") = std::vector<double>{},
           "Keyword arguments only; an omitted one takes the library's default (the paper's\n"
           "decomposition figure: alpha 2, tau 2.25, kappa 1.5, rho 0.9, sigma 0.3).\n"
           "Beyond the paper: task_spectrum=[(eigenvalue, weight), ...] or its text form as the\n"
           "CLI's --task-spectrum ('powerlaw:EXP:LEVELS', 'complement:EPS' (which takes rho),\n"
           "'t1:w1,t2:w2,...'): a general task covariance, docs/general_covariance.md §12 (rho next to any\n"
           "other spectrum raises InvalidParams naming rho; power_law_spectrum() and\n"
           "low_rank_plus_complement_spectrum() build atoms), test_overlap=C in [0, 1] (shifted\n"
           "test tasks with a fraction C of their energy in the training subspace) or\n"
           "test_levels=[t'_k] (the test eigenvalue per task_spectrum level), docs/general_covariance.md §20.\n"
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
      .def_property(
          "rho", [](const Params& p) { return p.rho; },
          [](Params& p, double v) { p.set("rho", v); },
          "task rank r / D, in (0, 1] (setting it with a task_spectrum raises InvalidParams)")
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
                     "C in [0, 1] or None: shifted test tasks (docs/general_covariance.md §20)")
      .def_readwrite("test_levels", &Params::test_levels,
                     "test eigenvalue per task_spectrum level (docs/general_covariance.md §20)")
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
             auto described = [](const Params& p) {
               auto j = theory::to_json(p);
               if (!p.task_spectrum.empty()) j.erase("rho");  // not a parameter then
               return j;
             };
             return raw_fields(a) == raw_fields(b) && described(a) == described(b);
           })
      .def(py::pickle(&params_state, &params_from_state));
  // `p.lambda` is a syntax error in Python but getattr(p, "lambda") works.
  params_class.def_readwrite("lambda", &Params::lambda, "same as lambda_");

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
