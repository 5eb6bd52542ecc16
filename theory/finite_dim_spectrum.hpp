// The O(1/D) bias of the spectrum of S = (1/M0) sum_mu w_mu w_mu^T: for the paper's low-rank
// tasks (docs/finite_dim.md §21.5) and for a general population task spectrum (§21.13), where
// the mean of the resolvent's traces over one draw of the M0 tasks differs from the
// deterministic equivalent of docs/general_covariance.md §12.3 by a term of order 1/M0, derived
// by Gaussian integration by parts (real tasks), for Gaussian tasks w = Sigma^{1/2} g and for tasks rescaled to |w|^2 = D (the simulator's fixed-norm tasks,
// docs/simulation.md §13.7).
#pragma once

#include <functional>
#include <vector>

#include "theory/params.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

// 1/D biases of the spectral values, per unit h = 1/D: dR_{k,j}/dh and dT_{k,j}/dh (j <= 2;
// docs/finite_dim.md §21.5, §21.13). R_{3,1} is left 0 (no formula uses it).
struct SpectralBias {
  double R[4][3] = {};
  double T[4][3] = {};
  // The test-weighted U_{k,j} of a shifted protocol (docs/finite_dim.md §21.11; general task
  // spectra only: for low-rank tasks U is exactly a combination of R and T).
  double U[4][3] = {};
};

// v with h * bias added to every R_{k,j}, T_{k,j} (j <= 2): at h = 1/D the spectral values of
// one draw's mean, to O(1/D).
SpectralValues with_bias(SpectralValues v, const SpectralBias& bias, double h);
// The same for a shifted protocol's test-weighted values U (bias.U).
numerics::ResolventMoments with_test_bias(numerics::ResolventMoments U, const SpectralBias& bias,
                                          double h);

// A shifted protocol's test-weighted values at v0's z with the bias h * bias (docs/finite_dim.md
// §21.11): for low-rank tasks exactly the combination of the biased R and T (docs/
// general_covariance.md §20.2), for a general task spectrum U at v0 plus h * bias.U.
numerics::ResolventMoments biased_test_values(const SpectralModel& model, const SpectralValues& v0,
                                              const std::vector<double>& levels,
                                              const SpectralBias& bias, double h);

enum class TaskLaw { Gaussian, FixedNorm };

// The bias of the spectrum of S over one draw of the M0 tasks, for tasks of the law `law`, at z
// (z below the spectrum of S): low-rank tasks (p.task_spectrum empty, docs/finite_dim.md §21.5)
// by the real-Wishart bias of Bai and Silverstein (Gaussian tasks), minus the task norms' weight
// mixture for tasks of fixed norm; a general task spectrum by §21.13. With FixedNorm this is the
// source task_sampling; with Gaussian it is the whole bias of the spectrum of Gaussian tasks, which
// the algorithmic part of the error at D uses (§21.17).
SpectralBias task_set_bias(const Params& p, const SpectralModel& model, double z, TaskLaw law);

// The biases of R_{0,1} = (1/D) tr (S - z)^{-1} and T_{0,1} = (1/D) tr Sigma (S - z)^{-1} per
// unit 1/D at real z below the spectrum of S, and of T_{1,0} = (1/D) tr Sigma S (nonzero for
// fixed-norm tasks only: E[w w^T] = Sigma + (2/D)(tau2 Sigma - Sigma^2)). General task spectrum
// (p.task_spectrum non-empty, or the low-rank one given as population: p.population_spectrum()).
// With a shifted protocol also U_{0,1} = (1/D) tr C_test (S - z)^{-1} and U_{1,0} =
// (1/D) tr C_test S (docs/finite_dim.md §21.11), the same per-level bias traced against C_test.
struct ResolventBias {
  double R01 = 0, T01 = 0, T10 = 0, U01 = 0, U10 = 0;
};
ResolventBias task_spectrum_resolvent_bias(const Params& p, const SpectralModel& model, double z,
                                           TaskLaw law);

// Every R_{k,j}, T_{k,j} bias (j <= 2) at z from the above (the z-derivative for j = 2 and the
// recursion S^k (S - z)^{-j} = S^{k-1} (S - z)^{-(j-1)} + z S^{k-1} (S - z)^{-j}).
SpectralBias task_spectrum_bias(const Params& p, const SpectralModel& model, double z, TaskLaw law);

// The same from any function z -> ResolventBias.
SpectralBias spectral_bias_from(double z, const std::function<ResolventBias(double)>& bias);

// tr(C f(S))/D for f(s) = sum_{j=0..4} a_j (s - z0)^{-j} and a weight C commuting with Sigma with
// tr C/D = 1 (docs/finite_dim.md §21.14): a_0 + sum_j a_j W_{0,j}(z0), W the C-weighted values
// at z0 (T for C = Sigma, U for a shifted protocol's test covariance). The a_j from f at five
// points; f at a sixth checks the form (std::logic_error otherwise).
double weight_traced(const std::function<double(double)>& f, double z0,
                     const numerics::ResolventMoments& W);

}  // namespace icl::theory
