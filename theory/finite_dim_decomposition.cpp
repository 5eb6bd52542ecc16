// The decomposition of the error at finite D (docs/finite_dim.md §21.17). Its algorithmic part is
// the error of the deterministic predictor Gbar = S (S - z)^{-1}, a function of the task set's
// S alone at the limit's z: at D its mean moves by the bias of the spectrum of S over the draw of
// the tasks (§21.5, §21.13) and by the test context's w w^T / L_t term (§21.3). No training
// source reaches it. The excess (memorization + structural) is the error at D minus it; the two
// noise parts are not separated at finite D (docs/errors_phases.md §8.4).
#include <cmath>
#include <limits>
#include <optional>

#include "theory/finite_dim.hpp"
#include "theory/finite_dim_spectrum.hpp"
#include "theory/observables.hpp"
#include "theory/spectral_model.hpp"

namespace icl::theory {

namespace detail {

void add_decomposition(FiniteDimResult& r) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  const Components none{nan, nan, nan};
  r.decomposition = {none, none, none};
  if (r.test_shift) r.test_shift->decomposition = none;
  if (!r.converged()) return;
  const Params& q = r.sized;
  const SpectralModel model(q);
  const double z = r.limit.z, D = r.options.dim;
  const TaskLaw law = r.options.switches.fixed_norm_tasks ? TaskLaw::FixedNorm : TaskLaw::Gaussian;
  const SpectralValues v0 = model.at(z, numerics::MomentMethod::Exact);
  const SpectralBias bias = task_set_bias(q, model, z, law);
  const SpectralValues v = with_bias(v0, bias, 1 / D);
  // A shifted protocol's test-weighted values, of the limit and of one draw's mean (§21.11).
  std::optional<numerics::ResolventMoments> U0, U;
  if (q.has_test_shift()) {
    U0 = model.test_weighted(v0, q.test_eigenvalues());
    U = biased_test_values(model, v0, q.test_eigenvalues(), bias, 1 / D);
  }
  // Gbar's own second moments, coefficients A = 1, B = C = 0, mh/qh = 1 (docs/errors_phases.md
  // §8.2): the algo piece of each protocol with the spectral values of one draw's mean.
  const CoefficientsT<double> gbar{1.0, 0.0, 0.0, 1.0};
  const ObservablesT<double> ob =
      observables(q, v.R, v.T, U ? &*U : nullptr, v.R(3, 2), v.R(2, 1), v.R(2, 2), gbar);
  // The test context (§21.3): (1/L_t) tr(Gbar C Gbar^T)/D, Gbar's own q_P over alpha_t D.
  const double ctx = 1 / (q.effective_alpha_test() * D);
  const Errors algo{ob.d_tm.algo + ctx * v0.R(3, 2), ob.d_idg.algo + ctx * v0.T(2, 2),
                    ob.d_odg.algo + ctx * v0.R(2, 2)};
  r.decomposition = {{algo.tm, nan, nan}, {algo.idg, nan, nan}, {algo.odg, nan, nan}};
  if (r.test_shift && U) r.test_shift->decomposition.algo = ob.d_shift.algo + ctx * (*U0)(2, 2);
}

}  // namespace detail

}  // namespace icl::theory
