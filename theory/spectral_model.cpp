#include "theory/spectral_model.hpp"

namespace icl::lowrank {

SpectralModel::SpectralModel(const Params& p) {
  // In span(A): S_A = (1/rho) T, T an r x r Wishart with M0 samples: ratio c = r/M0 = rho/kappa,
  // scale 1/rho (so tr S / D = 1). Outside span(A) (fraction 1 - rho of directions) S = 0.
  S_A_ = std::make_shared<numerics::MarchenkoPastur>(p.rho / p.kappa, 1.0 / p.rho);
  std::vector<numerics::Atom> null_directions;
  if (p.rho < 1) null_directions.push_back({0.0, 1.0 - p.rho});
  S_ = std::make_shared<numerics::PointMassMixture>(S_A_, p.rho, null_directions);
  lower_edge_ = S_->lower_edge();
}

SpectralValues SpectralModel::at(double z, numerics::MomentMethod method) const {
  SpectralValues v;
  v.z = z;
  v.R = numerics::resolvent_moments(*S_, z, method);
  v.T = numerics::resolvent_moments(*S_A_, z, method);
  return v;
}

}  // namespace icl::lowrank
