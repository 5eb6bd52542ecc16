// Depth as preconditioned gradient descent (docs/multistep_depth.md, issue 25 part 3): L layers
// of linear attention with infinite pretraining on isotropic data act on a context as L steps
// w_{l+1} = w_l + g S (w_hat - w_l) of gradient descent on the context's least squares, with
// S = (D/N) X X^T ~ Marchenko-Pastur(ratio 1/alpha). The test error at depth L,
//     e(g) = sigma^2 + int (1 - g s)^{2L} dmu + (sigma^2/alpha) int [1 - (1 - g s)^L]^2 / s dmu,
// is a polynomial in the per-layer step g whose coefficients are Marchenko-Pastur moments
// (Narayana polynomials, §2). It is evaluated exactly and stably through the law's Jacobi matrix
// (§3: (L+1) x (L+1), tridiagonal, closed form) and minimized globally over g (§4). The per-layer
// envelope (one step per layer, §5) is the best residual polynomial of degree L.
//
// Convention: g is the step of one layer; gamma = L g is the total step (the "gamma / L per layer"
// of the usual notation). Results report both.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/status.hpp"

namespace icl::theory {

// The model of docs/multistep_depth.md §1. One struct for the theory and the simulator
// (verify/multistep/depth_simulator.hpp).
struct DepthParams {
  double alpha = 2.0;  // context length per dimension N/D, > 0 (an atom at 0 when alpha < 1)
  double sigma = 0.1;  // label noise of the context and of the query, >= 0
  int layers = 4;      // L, 1..kMaxLayers

  // Throws InvalidParams naming the field ("alpha", "sigma", "layers"): finite, ranges as above.
  void validate() const;
};

inline constexpr int kMaxDepthLayers = 128;

struct DepthOptions {
  // The global minimization over g (§4): e and e' on a uniform grid of g in [0, g_bound], with
  // scan_density points per layer per unit of g s_+ (s_+ the upper edge of the law), at least
  // 200; every sign change of e' from - to + refined by TOMS 748. 4..10000.
  int scan_density = 8;
  // The optimal shared-step error at every depth l = 1..L (error_by_depth); off: only at L.
  bool by_depth = true;
  // The per-layer steps are reported real (per_layer_realizable) when every root of the optimal
  // residual polynomial has |Im| <= root_imag_tolerance |root|. (0, 1e-2].
  double root_imag_tolerance = 1e-7;
  void validate() const;  // throws InvalidParams naming the field
};

struct DepthResult {
  DepthParams params;
  DepthOptions options;
  double error = std::numeric_limits<double>::quiet_NaN();      // min_g e(g), query noise included
  double step_opt = std::numeric_limits<double>::quiet_NaN();   // argmin g (per layer)
  double gamma_opt = std::numeric_limits<double>::quiet_NaN();  // L * step_opt
  int local_minima = 0;       // local minima of e(g) on g >= 0 found by the scan
  double g_bound = std::numeric_limits<double>::quiet_NaN();  // the range [0, g_bound] searched
  // Lower envelope over one step per layer (§5): the best residual polynomial's error.
  double per_layer_error = std::numeric_limits<double>::quiet_NaN();
  // Its steps g_l = 1 / (roots of the residual polynomial), ascending; NaN where a root is
  // complex (then the envelope is not realizable by real steps).
  std::vector<double> per_layer_steps;
  std::vector<double> per_layer_roots_real, per_layer_roots_imag;  // the roots s_l themselves
  bool per_layer_realizable = false;
  std::vector<double> error_by_depth;  // optimal shared-step error at l = 1..L (by_depth)
  std::vector<double> step_by_depth;   // its argmin g at l = 1..L
  // Noiseless reference: g = 1/c, c = 1 + 1/alpha (the optimal step at L = 1 and sigma = 0, the
  // tau -> infinity test-time iteration's map, §6): e(1/c) at this sigma.
  double step_one_over_c = std::numeric_limits<double>::quiet_NaN();
  double error_at_one_over_c = std::numeric_limits<double>::quiet_NaN();
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  bool converged() const { return status == numerics::Status::Converged; }
};

// Validates both, then computes the shared-step optimum, the per-layer envelope and the depth
// series.
DepthResult run(const DepthParams& params, const DepthOptions& options = {});

// ---- The pieces (docs/multistep_depth.md), each tested against another route in tests/ ------

// Raw moment k of Marchenko-Pastur with ratio lambda = 1/alpha, mean 1 (atom included):
// sum_{j=1}^k Narayana(k, j) lambda^{j-1}; 1 for k = 0 (§2).
double mp_moment(double lambda, int k);

// e(g) and de/dg at the shared step g (§3: the Jacobi-matrix recursion, exact for the polynomial).
struct DepthValue {
  double error = 0, slope = 0;
};
DepthValue depth_error(const DepthParams& p, double g);

// The two integrals of e(g) separately, without sigma^2: int (1 - g s)^{2L} dmu (bias) and
// int [1 - (1 - g s)^L]^2 / s dmu (the noise integral, before the factor sigma^2 / alpha).
struct DepthTerms {
  double bias = 0, noise_integral = 0;
};
DepthTerms depth_terms(double alpha, int layers, double g);

// e at per-layer steps g_0..g_{L-1} (any real values; layers = steps.size() overrides p.layers):
// the residual polynomial P = prod (1 - g_l s) by the same recursion (§5).
double depth_error_steps(const DepthParams& p, const std::vector<double>& steps);

// The coefficients c_0..c_{2L} of e(g) = sum_j c_j g^j from the Narayana moments (§2), computed
// in 192-bit (57-digit) MPFR arithmetic and rounded: the monomial form loses about log10(max_j |c_j| g^j / e)
// digits when evaluated in double (fine for L <= 10 at the optimal g; the run uses §3).
std::vector<double> depth_error_polynomial(const DepthParams& p);

// The global minimum of e(g) over g >= 0 (§4).
struct DepthMinimum {
  double step = 0, error = 0, g_bound = 0;
  int local_minima = 0;
};
DepthMinimum minimize_shared_step(const DepthParams& p, const DepthOptions& options = {});

// The g beyond which e(g) >= e(0) = 1 + sigma^2 (§4, from Paley-Zygmund on the first two moments).
double shared_step_bound(double alpha, int layers);

// The per-layer envelope (§5): the error of the best residual polynomial P, deg P <= L, P(0) = 1,
// and its roots (complex in general).
struct PerLayerEnvelope {
  double error = 0;
  std::vector<double> roots_real, roots_imag;
};
PerLayerEnvelope per_layer_envelope(const DepthParams& p);

// {"alpha", "sigma", "layers"}
nlohmann::ordered_json to_json(const DepthParams& p);
// The JSON of `icl depth --json` (keys in docs/multistep_depth.md §8) and its text form.
nlohmann::ordered_json to_json(const DepthResult& r);
std::string to_text(const DepthResult& r);

}  // namespace icl::theory
