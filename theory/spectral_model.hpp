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
#include <limits>
#include <memory>
#include <vector>

#include "numerics/spectral_integral.hpp"
#include "theory/params.hpp"

namespace icl::theory {

// The deterministic equivalent (1/D) tr C S^k (S - z)^{-j} for C = sum_k a_k P_k, P_k the
// eigenprojector of Sigma on population level k (a_k = t_k gives T; docs/general_covariance.md
// §12.3, §20.2), from the moments R of S at z (R_{0,j}, j <= jmax: the Stieltjes transform and
// its derivatives) and the ratio c = D/M0. Entries up to j = jmax (2 or 4); higher ones NaN. The
// scalar T may carry derivatives (theory/sensitivity.hpp), A is double or T (moving levels).
template <class T, class A>
numerics::BasicResolventMoments<T> deterministic_equivalent(
    const T& z, const numerics::BasicResolventMoments<T>& R, const T& c,
    const std::vector<numerics::Atom>& population, const std::vector<A>& weight, int jmax) {
  // Stieltjes transform of S and its derivatives: m^{(n)} = n! R_{0,n+1}.
  const T m0 = R(0, 1), m1 = R(0, 2);
  const T m2 = jmax >= 3 ? 2.0 * R(0, 3) : T(0.0), m3 = jmax >= 4 ? 6.0 * R(0, 4) : T(0.0);
  // beta = 1 - c - c z m and its z-derivatives.
  const T b0 = 1.0 - c - c * z * m0;
  const T b1 = -c * (m0 + z * m1);
  const T b2 = -c * (2.0 * m1 + z * m2);
  const T b3 = -c * (3.0 * m2 + z * m3);
  // h = sum_k w_k a_k / u_k with u = beta t - z (t the eigenvalue of level k, a its weight);
  // for f = a/u: f' = -a u1/u^2, f'' = -a (u2/u^2 - 2 u1^2/u^3),
  // f''' = -a (u3/u^2 - 6 u1 u2/u^3 + 6 u1^3/u^4), with un the n-th z-derivative of u.
  T h0(0.0), h1(0.0), h2(0.0), h3(0.0), a0(0.0), a1(0.0), a2(0.0), t1(0.0);
  for (std::size_t k = 0; k < population.size(); ++k) {
    const double t = population[k].position, w = population[k].mass;
    const T a = T(weight.at(k));
    t1 += w * t;
    a0 += w * a;
    a1 += w * a * t;
    a2 += w * a * t * t;
    const T u = b0 * t - z, u1 = b1 * t - 1.0, u2 = b2 * t, u3 = b3 * t;
    h0 += w * a / u;
    h1 += -w * a * u1 / (u * u);
    if (jmax < 3) continue;
    h2 += -w * a * (u2 / (u * u) - 2.0 * u1 * u1 / (u * u * u));
    h3 += -w * a * (u3 / (u * u) - 6.0 * u1 * u2 / (u * u * u) + 6.0 * u1 * u1 * u1 / (u * u * u * u));
  }
  numerics::BasicResolventMoments<T> out;
  out.z = z;
  // Raw moments (1/D) tr C S^k for C commuting with Sigma: E S = Sigma and
  // E S^2 -> Sigma^2 + c (tr Sigma/D) Sigma. (1/D) tr C S^3 is not needed by any observable:
  // NaN so that a misuse shows.
  const T nan(std::numeric_limits<double>::quiet_NaN());
  out.r[0][0] = a0;
  out.r[1][0] = a1;
  out.r[2][0] = a2 + c * t1 * a1;
  out.r[3][0] = nan;
  out.r[0][1] = h0;
  out.r[0][2] = h1;
  out.r[0][3] = jmax >= 3 ? h2 / 2.0 : nan;
  out.r[0][4] = jmax >= 4 ? h3 / 6.0 : nan;
  for (int k = 1; k <= 3; ++k)
    for (int j = 1; j <= 4; ++j) out.r[k][j] = out.r[k - 1][j - 1] + z * out.r[k - 1][j];
  return out;
}

struct SpectralValues {
  double z = 0;
  numerics::ResolventMoments R;  // spectrum of S (atoms at 0 included)
  numerics::ResolventMoments T;  // Sigma-weighted
};

class SpectralModel {
 public:
  explicit SpectralModel(const Params& p);
  // The model of p, shared: the one built by the previous call on this thread when p has the same
  // kappa, rho and task_spectrum (the model depends on nothing else), a new one otherwise. Along
  // a grid or vector of points that varies alpha, tau, sigma or lambda this builds one model, and
  // the measures' quadrature nodes and density values are computed once instead of per point;
  // the numbers are the same as from a new model (a model is immutable and its caches hold what
  // it would compute).
  static std::shared_ptr<const SpectralModel> shared(const Params& p);
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


  // What the model was built from (shared()'s key).
  double kappa_ = 0;
  std::vector<numerics::Atom> task_spectrum_;
  double ratio_ = 0;                        // c = D / M0 = 1 / kappa
  std::vector<numerics::Atom> population_;  // spectrum of Sigma
  std::shared_ptr<const numerics::SpectralMeasure> S_A_;  // low-rank only: S on span(A)
  std::shared_ptr<const numerics::SpectralMeasure> S_;    // full spectrum of S
  double lower_edge_ = 0;
  double rho_ = 1;  // low rank: the fraction of directions in span(A)
};

}  // namespace icl::theory
