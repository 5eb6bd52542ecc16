#include "theory/spectral_model.hpp"

#include "numerics/error.hpp"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace icl::theory {

SpectralModel::SpectralModel(const Params& p)
    : ratio_(1.0 / p.kappa), population_(p.population_spectrum()), rho_(p.rho) {
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

numerics::ResolventMoments SpectralModel::weighted(double z, const numerics::ResolventMoments& R,
                                                   const std::vector<double>& weight) const {
  // Stieltjes transform of S and its derivatives: m^{(n)} = n! R_{0,n+1}.
  const double m0 = R(0, 1), m1 = R(0, 2), m2 = 2 * R(0, 3), m3 = 6 * R(0, 4);
  const double c = ratio_;
  // beta = 1 - c - c z m and its z-derivatives.
  const double b0 = 1 - c - c * z * m0;
  const double b1 = -c * (m0 + z * m1);
  const double b2 = -c * (2 * m1 + z * m2);
  const double b3 = -c * (3 * m2 + z * m3);
  // h = sum_k w_k a_k / u_k with u = beta t - z (t the eigenvalue of level k, a its weight);
  // for f = a/u: f' = -a u1/u^2, f'' = -a (u2/u^2 - 2 u1^2/u^3),
  // f''' = -a (u3/u^2 - 6 u1 u2/u^3 + 6 u1^3/u^4), with un the n-th z-derivative of u.
  double h0 = 0, h1 = 0, h2 = 0, h3 = 0, a0 = 0, a1 = 0, a2 = 0, t1 = 0;
  for (std::size_t k = 0; k < population_.size(); ++k) {
    const double t = population_[k].position, w = population_[k].mass, a = weight.at(k);
    t1 += w * t;
    a0 += w * a;
    a1 += w * a * t;
    a2 += w * a * t * t;
    if (a == 0) continue;
    const double u = b0 * t - z, u1 = b1 * t - 1, u2 = b2 * t, u3 = b3 * t;
    h0 += w * a / u;
    h1 += -w * a * u1 / (u * u);
    h2 += -w * a * (u2 / (u * u) - 2 * u1 * u1 / (u * u * u));
    h3 += -w * a * (u3 / (u * u) - 6 * u1 * u2 / (u * u * u) + 6 * u1 * u1 * u1 / (u * u * u * u));
  }
  numerics::ResolventMoments T;
  T.z = z;
  // Raw moments (1/D) tr C S^k for C commuting with Sigma: E S = Sigma and
  // E S^2 -> Sigma^2 + c (tr Sigma/D) Sigma. (1/D) tr C S^3 is not needed by any observable:
  // NaN so that a misuse shows.
  T.r[0][0] = a0;
  T.r[1][0] = a1;
  T.r[2][0] = a2 + c * t1 * a1;
  T.r[3][0] = std::numeric_limits<double>::quiet_NaN();
  T.r[0][1] = h0;
  T.r[0][2] = h1;
  T.r[0][3] = h2 / 2;
  T.r[0][4] = h3 / 6;
  for (int k = 1; k <= 3; ++k)
    for (int j = 1; j <= 4; ++j) T.r[k][j] = T.r[k - 1][j - 1] + z * T.r[k - 1][j];
  return T;
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
  // C = l_A P_A + l_perp P_perp, and for every X = S^k (S - z)^{-j}: (1/D) tr P_A X = rho T
  // (T is normalized by r = rho D) and (1/D) tr P_perp X = R - rho T. Exact: no deterministic
  // equivalent is needed.
  const double lA = levels.at(0), lperp = levels.size() > 1 ? levels[1] : 0.0;
  numerics::ResolventMoments U;
  U.z = v.z;
  for (int k = 0; k <= 3; ++k)
    for (int j = 0; j <= 4; ++j)
      U.r[k][j] = lA * rho_ * v.T.r[k][j] + lperp * (v.R.r[k][j] - rho_ * v.T.r[k][j]);
  return U;
}

}  // namespace icl::theory
