// The per-unit-h terms of the finite-D sources (docs/finite_dim.md §21.3-§21.5, §21.13-§21.15)
// at the D -> infinity root: each source's spectral bias, channel law, matrix corrections of the
// Gamma equation and task laws. Internal to the finite-D theory (theory/finite_dim.cpp builds the
// perturbed map and its linear response from them; theory/finite_dim_sources.cpp computes them).
#pragma once

#include <functional>
#include <vector>

#include "theory/finite_d_switches.hpp"
#include "theory/finite_dim_channel.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/params.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory::detail {

// A matrix commuting with S, for low-rank tasks (docs/finite_dim.md §21.4): on span(A) a function
// of the eigenvalue s of S, on the complement (where S = 0) one number.
struct MatFun {
  std::function<double(double)> on_A = [](double) { return 0.0; };
  double off_A = 0;
};

// Corrections, per unit h = 1/D, to the three matrices of the Gamma equation (docs/finite_dim.md
// §21.4): the Hessian H = qh (S - z) (+ lambda), the linear term L = mh S, the noise covariance
// M = chih S + chibarh; their D -> infinity forms are multiples of S and I, the corrections are
// not (they carry Sigma and the resolvent of S).
struct MatrixCorrection {
  MatFun H, L, M;
  bool active = false;
  // General task spectrum (docs/finite_dim.md §21.14): the corrections' first-order Sigma-weighted
  // traces per unit h at the root, d tr(Sigma Gbar)/D and d tr(Sigma (Gbar^2 + N))/D, and the same
  // traced against a shifted protocol's C_test (§21.11).
  double sigma_m0 = 0, sigma_q0 = 0;
  double test_m = 0, test_q = 0;
};

// One source: its spectral bias, its channel law, whether it adds the test-context term, its
// matrix corrections, and its task laws.
struct Source {
  SpectralBias bias;
  ChannelLaw law;
  bool test_context = false;
  MatrixCorrection matrix;
  // Task sources (docs/finite_dim.md §21.6, §21.15): the task-resolved theory with Gaussian
  // against fixed-norm tasks, or with relative sequence counts of this variance (per unit 1/D);
  // computed apart from the map.
  bool gaussian_norms = false;
  double count_variance = 0;
};

// Every source's terms at the root x0 (z0 its spectral argument), in the order of
// finite_dim_source_names(); a source switched off (sw) stays zero.
std::vector<Source> source_terms(const Params& q, const SpectralModel& model, const SaddleVec& x0,
                                 double z0, const FiniteDSwitches& sw);

// The matrix corrections of context_quadratic_forms and (with along_task) of the context's
// along-task Stein terms for training samples whose scalars have the law h * cov, to first order
// in it, at the order parameters x (z its spectral argument), per unit h (docs/finite_dim.md
// §21.18; low-rank tasks).
MatrixCorrection sample_corrections(const Params& q, const SpectralModel& model, const SaddleVec& x,
                                    double z, const ScalarCov& cov, double h, bool along_task);

}  // namespace icl::theory::detail
