#include "theory/spectral_model.hpp"

#include "numerics/error.hpp"
#include "theory/observables.hpp"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace icl::theory {

SpectralModel::SpectralModel(const Params& p)
    : kappa_(p.kappa),
      task_spectrum_(p.task_spectrum),
      ratio_(1.0 / p.kappa),
      population_(p.population_spectrum()),
      rho_(p.rho) {
  if (p.task_spectrum.empty()) {
    // In span(A): S_A = (1/rho) T, T an r x r Wishart with M0 samples: ratio c = r/M0 =
    // rho/kappa, scale 1/rho (so tr S / D = 1). Outside span(A) (fraction 1 - rho) S = 0.
    S_A_ = std::make_shared<numerics::MarchenkoPastur>(p.rho / p.kappa, 1.0 / p.rho);
    std::vector<numerics::Atom> null_directions;
    if (p.rho < 1) null_directions.push_back({0.0, 1.0 - p.rho});
    S_ = std::make_shared<numerics::PointMassMixture>(S_A_, p.rho, null_directions);
  } else {
    S_ = std::make_shared<numerics::GeneralizedMarchenkoPastur>(ratio_, population_);
  }
  lower_edge_ = S_->lower_edge();
}

std::shared_ptr<const SpectralModel> SpectralModel::shared(const Params& p) {
  thread_local std::shared_ptr<const SpectralModel> last;
  const auto same_atoms = [](const std::vector<numerics::Atom>& a,
                             const std::vector<numerics::Atom>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k].position != b[k].position || a[k].mass != b[k].mass) return false;
    return true;
  };
  if (!(last && last->kappa_ == p.kappa && last->rho_ == p.rho &&
        same_atoms(last->task_spectrum_, p.task_spectrum)))
    last = std::make_shared<const SpectralModel>(p);
  return last;
}

numerics::ResolventMoments SpectralModel::weighted(double z, const numerics::ResolventMoments& R,
                                                   const std::vector<double>& weight) const {
  return deterministic_equivalent(z, R, ratio_, population_, weight, 4);
}

const numerics::SpectralMeasure& SpectralModel::spectrum_on_task_subspace() const {
  if (!S_A_) throw std::logic_error("spectrum_on_task_subspace: low-rank tasks only");
  return *S_A_;
}

SpectralValues SpectralModel::at(double z, numerics::MomentMethod method) const {
  SpectralValues v;
  v.z = z;
  // A failed integral names what it was computing (docs/spectral.md §6): the moments of S at z,
  // with the measure's support, so that a degenerate point (kappa -> 0: c = rho/kappa huge)
  // reads as such rather than as a bare GSL code.
  const auto moments = [&](const numerics::SpectralMeasure& m, const char* what) {
    try {
      return numerics::resolvent_moments(m, z, method);
    } catch (const NumericalError& e) {
      const auto support = m.support();
      const double hi = support.empty() ? m.lower_edge() : support.back().hi;
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s at z = %.6g (spectrum of S within [%.6g, %.6g]) not computed: ",
                    what, z, m.lower_edge(), hi);
      throw NumericalError(buf + std::string(e.what()));
    }
  };
  v.R = moments(*S_, "the resolvent moments R_{k,j}(z) of S");
  if (low_rank()) {
    v.T = moments(*S_A_, "the resolvent moments T_{k,j}(z) of S on span(A)");
  } else {
    std::vector<double> t;
    for (const auto& a : population_) t.push_back(a.position);
    v.T = weighted(z, v.R, t);
  }
  return v;
}

numerics::ResolventMoments SpectralModel::test_weighted(const SpectralValues& v,
                                                        const std::vector<double>& levels) const {
  if (!low_rank()) return weighted(v.z, v.R, levels);
  // C = l_A P_A + l_perp P_perp: exact, no deterministic equivalent is needed.
  return low_rank_test_weighted(v.R, v.T, rho_, levels, 4);
}

}  // namespace icl::theory
