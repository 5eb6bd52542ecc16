// Spectral measures (numerics/spectral_measure.hpp) and integrals against them
// (numerics/spectral_integral.hpp).
#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <complex>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "numerics/error.hpp"
#include "numerics/spectral_integral.hpp"
#include "numerics/spectral_measure.hpp"
#include "python/bindings.hpp"

namespace icl::python {
namespace {

using numerics::Atom;
using numerics::SpectralMeasure;

std::vector<Atom> to_atoms(const std::vector<std::pair<double, double>>& pairs) {
  std::vector<Atom> out;
  out.reserve(pairs.size());
  for (const auto& [t, w] : pairs) out.push_back({t, w});
  return out;
}

std::vector<std::pair<double, double>> from_atoms(const std::vector<Atom>& atoms) {
  std::vector<std::pair<double, double>> out;
  out.reserve(atoms.size());
  for (const auto& a : atoms) out.emplace_back(a.position, a.mass);
  return out;
}

numerics::QuadratureOptions quadrature_options(double rel_tolerance, double abs_tolerance,
                                               int max_subintervals) {
  if (!(rel_tolerance >= 0) || !(abs_tolerance >= 0))
    throw InvalidParams("rel_tolerance", "tolerances must be >= 0");
  if (max_subintervals < 1) throw InvalidParams("max_subintervals", "must be >= 1");
  return {.abs_tolerance = abs_tolerance, .rel_tolerance = rel_tolerance,
          .max_subintervals = max_subintervals};
}

}  // namespace

void bind_spectral(py::module_& m) {
  py::class_<SpectralMeasure, std::shared_ptr<SpectralMeasure>>(
      m, "SpectralMeasure",
      "A probability measure on [0, inf): continuous part with square-root edges plus atoms.\n"
      "Stieltjes convention m(z) = int dmu(x) / (x - z) (m > 0 for real z below the support).")
      .def("support",
           [](const SpectralMeasure& mu) {
             std::vector<std::pair<double, double>> out;
             for (const auto& iv : mu.support()) out.emplace_back(iv.lo, iv.hi);
             return out;
           },
           "Intervals [(lo, hi), ...] carrying the continuous part, sorted and disjoint.")
      .def("density", py::vectorize(&SpectralMeasure::density), py::arg("x"),
           "Density of the continuous part at x (float or numpy array; 0 outside support()).")
      .def("atoms", [](const SpectralMeasure& mu) { return from_atoms(mu.atoms()); },
           "Point masses [(position, mass), ...].")
      .def("raw_moment", &SpectralMeasure::raw_moment, py::arg("k"),
           "Exact raw moment int x^k dmu, k = 0..3.")
      .def("stieltjes_derivative", &SpectralMeasure::stieltjes_derivative, py::arg("z"),
           py::arg("n"),
           "Exact n-th derivative (n = 0..4) of the Stieltjes transform at real z below the\n"
           "measure; InvalidParams (ValueError) otherwise.")
      .def("stieltjes",
           [](const SpectralMeasure& mu, double z) { return mu.stieltjes(z); }, py::arg("z"),
           "Stieltjes transform m(z) = int dmu(x)/(x - z) at real z below the measure.")
      .def("stieltjes",
           [](const SpectralMeasure& mu, std::complex<double> z) {
             if (!(z.imag() > 0)) {
               if (z.imag() == 0) return std::complex<double>(mu.stieltjes(z.real()), 0.0);
               // m(conj z) = conj m(z)
               return std::conj(mu.stieltjes(std::conj(z)));
             }
             return mu.stieltjes(z);
           },
           py::arg("z"),
           "Stieltjes transform at complex z (Im z != 0; Im z = 0 only below the measure).")
      .def("lower_edge", &SpectralMeasure::lower_edge,
           "Lowest point of the measure (lowest atom or support edge).")
      .def("continuous_mass", &SpectralMeasure::continuous_mass, "1 - total atom mass.");

  py::class_<numerics::MarchenkoPastur, SpectralMeasure, std::shared_ptr<numerics::MarchenkoPastur>>(
      m, "MarchenkoPastur",
      "Marchenko-Pastur law of (scale/n) X X^T, X p x n standard Gaussian, ratio = p/n:\n"
      "support scale (1 -+ sqrt(ratio))^2, atom at 0 of mass 1 - 1/ratio when ratio > 1,\n"
      "mean = scale.")
      .def(py::init<double, double>(), py::arg("ratio"), py::arg("scale") = 1.0,
           "InvalidParams (ValueError) unless ratio and scale are > 0 and finite.")
      .def_property_readonly("ratio", &numerics::MarchenkoPastur::ratio, "p / n")
      .def_property_readonly("scale", &numerics::MarchenkoPastur::scale, "the mean")
      .def("__repr__", [](const numerics::MarchenkoPastur& mp) {
        return "MarchenkoPastur(ratio=" + py::repr(py::float_(mp.ratio())).cast<std::string>() +
               ", scale=" + py::repr(py::float_(mp.scale())).cast<std::string>() + ")";
      });

  py::class_<numerics::GeneralizedMarchenkoPastur, SpectralMeasure,
             std::shared_ptr<numerics::GeneralizedMarchenkoPastur>>(
      m, "GeneralizedMarchenkoPastur",
      "Limiting spectrum of (1/n) Sigma^{1/2} X X^T Sigma^{1/2} (p x p, ratio = p/n) for a\n"
      "population covariance with discrete spectrum [(t_k, w_k), ...] (eigenvalue t_k >= 0 with\n"
      "weight w_k, weights summing to 1).")
      .def(py::init([](double ratio, const std::vector<std::pair<double, double>>& population) {
             return std::make_shared<numerics::GeneralizedMarchenkoPastur>(ratio,
                                                                           to_atoms(population));
           }),
           py::arg("ratio"), py::arg("population"),
           "population: [(eigenvalue, weight), ...]. InvalidParams (ValueError) when invalid.")
      .def_property_readonly("ratio", &numerics::GeneralizedMarchenkoPastur::ratio, "p / n")
      .def_property_readonly(
          "population",
          [](const numerics::GeneralizedMarchenkoPastur& g) { return from_atoms(g.population()); },
          "[(eigenvalue, weight), ...]");

  py::class_<numerics::PointMassMixture, SpectralMeasure,
             std::shared_ptr<numerics::PointMassMixture>>(
      m, "PointMassMixture",
      "base_weight * base + extra point masses (total mass 1), e.g. the null directions of a\n"
      "low-rank covariance: PointMassMixture(MarchenkoPastur(rho/kappa, 1/rho), rho,\n"
      "[(0, 1 - rho)]).")
      .def(py::init([](std::shared_ptr<SpectralMeasure> base, double base_weight,
                       const std::vector<std::pair<double, double>>& extra) {
             return std::make_shared<numerics::PointMassMixture>(std::move(base), base_weight,
                                                                 to_atoms(extra));
           }),
           py::arg("base"), py::arg("base_weight"), py::arg("extra_atoms"),
           "extra_atoms: [(position, mass), ...].");

  m.def(
      "resolvent_moment",
      [](const SpectralMeasure& mu, double z, int k, int j, const std::string& method,
         double rel_tolerance) {
        if (k < 0 || j < 0) throw InvalidParams(k < 0 ? "k" : "j", "must be >= 0");
        if (method == "exact") return numerics::resolvent_moment_exact(mu, z, k, j);
        if (method != "quadrature")
          throw InvalidParams("method", "must be quadrature or exact (got '" + method + "')");
        const auto o = quadrature_options(rel_tolerance, 0.0, 2000);
        py::gil_scoped_release release;
        return numerics::resolvent_moment_quadrature(mu, z, k, j, o);
      },
      py::arg("measure"), py::arg("z"), py::arg("k"), py::arg("j"), py::kw_only(),
      py::arg("method") = "quadrature", py::arg("rel_tolerance") = 1e-13,
      "R_{k,j}(z) = int x^k (x - z)^{-j} dmu(x) for real z below the measure.\n"
      "method 'quadrature' (GSL adaptive, any k, j >= 0) or 'exact' (closed forms from the\n"
      "Stieltjes derivatives; k <= 3, j <= 5).");

  m.def(
      "integrate",
      [](const SpectralMeasure& mu, const std::function<double(double)>& f, double rel_tolerance,
         double abs_tolerance, int max_subintervals) {
        // A Python exception inside f must not unwind through GSL's C frames: store it, return
        // NaN to GSL, and re-raise it here.
        std::exception_ptr error;
        auto guarded = [&](double x) {
          if (error) return std::nan("");
          try {
            return f(x);
          } catch (...) {
            error = std::current_exception();
            return std::nan("");
          }
        };
        numerics::Integral r;
        try {
          r = numerics::integrate(mu, guarded,
                                  quadrature_options(rel_tolerance, abs_tolerance, max_subintervals));
        } catch (...) {
          if (!error) throw;
        }
        if (error) std::rethrow_exception(error);
        return py::make_tuple(r.value, r.abs_error);
      },
      py::arg("measure"), py::arg("f"), py::kw_only(), py::arg("rel_tolerance") = 1e-10,
      py::arg("abs_tolerance") = 0.0, py::arg("max_subintervals") = 2000,
      "int f dmu over the density (GSL QAWS, square-root edges) plus the atoms.\n"
      "f: a Python callable of one float. Returns (value, abs_error estimate).");
}

}  // namespace icl::python
