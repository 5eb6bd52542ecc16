#include "theory/spectral_model.hpp"

#include <limits>

namespace icl::theory {

SpectralModel::SpectralModel(const Params& p)
    : ratio_(1.0 / p.kappa), population_(p.population_spectrum()) {
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

numerics::ResolventMoments SpectralModel::sigma_weighted(
    double z, const numerics::ResolventMoments& R) const {
  // Stieltjes transform of S and its derivatives: m^{(n)} = n! R_{0,n+1}.
  const double m0 = R(0, 1), m1 = R(0, 2), m2 = 2 * R(0, 3), m3 = 6 * R(0, 4);
  const double c = ratio_;
  // beta = 1 - c - c z m and its z-derivatives.
  const double b0 = 1 - c - c * z * m0;
  const double b1 = -c * (m0 + z * m1);
  const double b2 = -c * (2 * m1 + z * m2);
  const double b3 = -c * (3 * m2 + z * m3);
  // h = sum w t / u with u = beta t - z; for f = t/u: f' = -t u'/u^2,
  // f'' = -t (u''/u^2 - 2 u'^2/u^3), f''' = -t (u'''/u^2 - 6 u' u''/u^3 + 6 u'^3/u^4).
  double h0 = 0, h1 = 0, h2 = 0, h3 = 0, t1 = 0, t2 = 0, t3 = 0;
  for (const auto& a : population_) {
    const double t = a.position, w = a.mass;
    t1 += w * t;
    t2 += w * t * t;
    t3 += w * t * t * t;
    if (t == 0) continue;
    const double u = b0 * t - z, u1 = b1 * t - 1, u2 = b2 * t, u3 = b3 * t;
    h0 += w * t / u;
    h1 += -w * t * u1 / (u * u);
    h2 += -w * t * (u2 / (u * u) - 2 * u1 * u1 / (u * u * u));
    h3 += -w * t * (u3 / (u * u) - 6 * u1 * u2 / (u * u * u) + 6 * u1 * u1 * u1 / (u * u * u * u));
  }
  numerics::ResolventMoments T;
  T.z = z;
  // Raw moments (1/D) tr Sigma S^k: E S = Sigma, E S^2 -> Sigma^2 + c (tr Sigma/D) Sigma.
  // (1/D) tr Sigma S^3 is not needed by any observable: NaN so that a misuse shows.
  T.r[0][0] = t1;
  T.r[1][0] = t2;
  T.r[2][0] = t3 + c * t1 * t2;
  T.r[3][0] = std::numeric_limits<double>::quiet_NaN();
  T.r[0][1] = h0;
  T.r[0][2] = h1;
  T.r[0][3] = h2 / 2;
  T.r[0][4] = h3 / 6;
  for (int k = 1; k <= 3; ++k)
    for (int j = 1; j <= 4; ++j) T.r[k][j] = T.r[k - 1][j - 1] + z * T.r[k - 1][j];
  return T;
}

SpectralValues SpectralModel::at(double z, numerics::MomentMethod method) const {
  SpectralValues v;
  v.z = z;
  v.R = numerics::resolvent_moments(*S_, z, method);
  v.T = low_rank() ? numerics::resolvent_moments(*S_A_, z, method) : sigma_weighted(z, v.R);
  return v;
}

}  // namespace icl::theory
