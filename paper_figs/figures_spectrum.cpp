// Figure 6: the spectrum of the empirical task covariance S = W W^T / M0 against the
// Marchenko-Pastur law with its atom (docs/spectral.md §6.1, docs/errors_phases.md §10).
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numbers>

#include "numerics/seed.hpp"
#include "numerics/spectral_measure.hpp"
#include "paper_figs/figures_extra.hpp"
#include "theory/lowrank.hpp"
#include "verify/lowrank/data.hpp"

namespace icl::paperfigs {

using theory::Params;

FigureData fig_spectrum(const Settings& s, const numerics::Progress& progress) {
  struct Case {
    double rho, kappa;
  };
  const Case cases[] = {{0.5, 1.0}, {0.9, 0.3}};  // task-rich (rho < kappa), task-poor
  const int dim = s.quick ? 20 : 60;
  const int seeds = s.quick ? 4 : 40;
  const int points = s.quick ? 200 : 800;
  FigureData out;
  DataTable eig, dens, atoms;
  eig.stem = "spectrum_eigs";
  eig.table.columns = {"case", "rho", "kappa", "seed", "eigenvalue"};
  dens.stem = "spectrum";
  dens.table.columns = {"case", "rho", "kappa", "x", "density"};
  atoms.stem = "spectrum_atoms";
  atoms.table.columns = {"case", "rho", "kappa", "position", "mass_theory", "mass_empirical",
                         "mass_in_span_theory", "support_lo", "support_hi"};
  nlohmann::json cases_meta = nlohmann::json::array();
  std::size_t step = 0;
  const std::size_t total = std::size(cases) * static_cast<std::size_t>(seeds);
  for (std::size_t c = 0; c < std::size(cases); ++c) {
    Params p = decomposition_params();
    p.rho = cases[c].rho;
    p.kappa = cases[c].kappa;
    p.alpha = 1;  // S does not depend on the contexts; keep the generator cheap
    std::size_t zeros = 0, all = 0;
    for (int k = 0; k < seeds; ++k) {
      verify::lowrank::Rng rng(
          numerics::derive_seed(numerics::derive_seed(s.base_seed, "spectrum", c),
                                std::uint64_t(k)));
      const verify::lowrank::Dataset d =
          verify::lowrank::generate(p, dim, rng, verify::lowrank::Sampler::Factorized);
      const Eigen::MatrixXd S = d.S();
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(S, Eigen::EigenvaluesOnly);
      const Eigen::VectorXd lam = es.eigenvalues();
      const double cut = 1e-9 * std::max(1.0, lam.maxCoeff());
      for (int i = 0; i < lam.size(); ++i) {
        const double v = std::max(0.0, lam(i));
        eig.table.rows.push_back({double(c), p.rho, p.kappa, double(k), v});
        zeros += v <= cut;
        ++all;
      }
      report(progress, "spectrum eigenvalues", ++step, total);
    }
    // Theory: (1 - rho) delta_0 + rho MP(rho/kappa, 1/rho).
    const double ratio = p.rho / p.kappa;
    const numerics::MarchenkoPastur mp(ratio, 1.0 / p.rho);
    const auto sup = mp.support();
    double lo = sup.front().lo, hi = sup.back().hi;
    for (int i = 0; i <= points; ++i) {
      // Denser near the edges (square-root behaviour): x = lo + (hi - lo)(1 - cos t)/2.
      const double t = std::numbers::pi * i / points;
      const double x = lo + (hi - lo) * 0.5 * (1.0 - std::cos(t));
      dens.table.rows.push_back({double(c), p.rho, p.kappa, x, p.rho * mp.density(x)});
    }
    double in_span_atom = 0;
    for (const auto& a : mp.atoms())
      if (a.position == 0.0) in_span_atom += a.mass;
    const double zero_mass = (1.0 - p.rho) + p.rho * in_span_atom;
    atoms.table.rows.push_back(
        {double(c), p.rho, p.kappa, 0.0, zero_mass,
         all ? double(zeros) / double(all) : std::numeric_limits<double>::quiet_NaN(), in_span_atom,
         lo, hi});
    cases_meta.push_back({{"rho", p.rho}, {"kappa", p.kappa}, {"ratio_c", ratio},
                          {"regime", theory::to_string(theory::regime(p))},
                          {"mp", {{"ratio", ratio}, {"scale", 1.0 / p.rho}}},
                          {"atom_at_zero", zero_mass}});
  }
  for (DataTable* t : {&dens, &eig, &atoms}) {
    Params p = decomposition_params();
    t->meta = table_meta(s, 6, p, t == &dens ? "theory density" : t == &eig ? "eigenvalues of S"
                                                                            : "atoms");
    t->meta["cases"] = cases_meta;
    t->meta["simulation"] = {{"dim", dim}, {"seeds", seeds},
                             {"generator", "verify::lowrank::generate (the simulator's data), S = W W^T / M0"},
                             {"seed_rule", "case c, seed k: derive_seed(derive_seed(base_seed, "
                                           "\"spectrum\", c), k)"}};
    t->meta["theory"] = "S spectrum = (1 - rho) delta_0 + rho MP(ratio rho/kappa, scale 1/rho)";
    t->meta.erase("params");
  }
  out.tables.push_back(std::move(dens));
  out.tables.push_back(std::move(eig));
  out.tables.push_back(std::move(atoms));
  return out;
}

}  // namespace icl::paperfigs
