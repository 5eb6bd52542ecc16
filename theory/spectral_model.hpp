// The spectral side of the replica theory: the empirical task covariance S = (1/M0) sum w w^T
// and the population (test) task covariance Sigma, reduced to the traces the saddle point needs.
//   R_{k,j}(z) = (1/D) tr S^k (S - z)^{-j}          (TM, ODG, training)
//   T_{k,j}(z) = (1/D) tr Sigma S^k (S - z)^{-j}    (IDG: fresh tasks w ~ N(0, Sigma))
// For the paper's low-rank tasks Sigma = (1/rho) P_A, S lives in span(A), and
// T_{k,j} = (1/r) tr_A S_A^k (S_A - z)^{-j}: moments of the in-subspace Marchenko-Pastur law
// MP(ratio rho/kappa, scale 1/rho) (docs/spectral.md §6.1, §6.3).
//
// General task covariance (beyond the paper, docs/general_covariance.md §12): S follows the
// generalized MP law with ratio c = D/M0 = 1/kappa and the population spectrum of Sigma, and T
// comes from the deterministic equivalent of the resolvent of a sample covariance,
// (S - z)^{-1} ~ (beta(z) Sigma - z)^{-1} with beta(z) = 1 - c - c z m(z) (m the Stieltjes
// transform of S; this is the Silverstein equation read as a matrix identity):
//   h(z) = T_{0,1} = sum_k w_k t_k / (beta t_k - z),  T_{0,j+1} = h^{(j)}(z) / j!,
//   T_{k,j} = T_{k-1,j-1} + z T_{k-1,j}  (S^k = S^{k-1}(S - z) + z S^{k-1}).
// [derived] For Sigma = (1/rho) P_A this reduces exactly to the in-subspace MP moments
// (checked in the tests); for other spectra the comparison is with the simulator and with the Letey/Lu
// theory (which takes arbitrary covariances).
#pragma once
#include <memory>

#include "numerics/spectral_integral.hpp"
#include "theory/params.hpp"

namespace icl::theory {

struct SpectralValues {
  double z = 0;
  numerics::ResolventMoments R;  // spectrum of S (atoms at 0 included)
  numerics::ResolventMoments T;  // Sigma-weighted
};

class SpectralModel {
 public:
  explicit SpectralModel(const Params& p);
  // All R_{k,j}, T_{k,j} (k <= 3, j <= 4) at real z below the spectrum of S.
  SpectralValues at(double z, numerics::MomentMethod method) const;
  // Highest z allowed: the lowest point of the spectrum of S (0 when S has null directions).
  double lower_edge() const { return lower_edge_; }
  const numerics::SpectralMeasure& spectrum_of_S() const { return *S_; }
  bool low_rank() const { return S_A_ != nullptr; }
  // Low rank only: the spectrum of S on span(A) (a probability measure; T_{k,j} are its
  // resolvent moments). Throws std::logic_error for a general task spectrum.
  const numerics::SpectralMeasure& spectrum_on_task_subspace() const;
  // U_{k,j}(z) = (1/D) tr C S^k (S - z)^{-j} for a test covariance C that shares the eigenbasis
  // of Sigma, given by its eigenvalue t'_k on each population level (Params::test_eigenvalues),
  // from the values v = at(z, ...) (docs/general_covariance.md §20.2). Low rank: C = l_A P_A +
  // l_perp P_perp, so U = l_A rho T + l_perp (R - rho T) exactly; general: the deterministic
  // equivalent of §12.3 with the weights t'_k in the numerator.
  numerics::ResolventMoments test_weighted(const SpectralValues& v,
                                           const std::vector<double>& levels) const;

 private:
  // The deterministic equivalent (1/D) tr C S^k (S - z)^{-j} with C = sum_k c_k P_k, where P_k
  // is the eigenprojector of Sigma on population level k (c_k = t_k gives T).
  numerics::ResolventMoments weighted(double z, const numerics::ResolventMoments& R,
                                      const std::vector<double>& c) const;


  double ratio_ = 0;                        // c = D / M0 = 1 / kappa
  std::vector<numerics::Atom> population_;  // spectrum of Sigma
  std::shared_ptr<const numerics::SpectralMeasure> S_A_;  // low-rank only: S on span(A)
  std::shared_ptr<const numerics::SpectralMeasure> S_;    // full spectrum of S
  double lower_edge_ = 0;
  double rho_ = 1;  // low rank: the fraction of directions in span(A)
};

}  // namespace icl::theory
