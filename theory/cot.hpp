// Test-time iteration of a ridge-trained linear-attention map ("chain of thought",
// docs/multistep.md): the map A, trained on tau*D single-context tasks, is applied t times to a
// fresh context, w_{t+1} = w_t - A S (w_t - w), and E_t = |w - w_t|^2 / D in the limit
// D -> infinity with L/D = alpha and M/D = tau fixed. E_t is the diagonal coefficient of a
// bivariate generating function (docs/multistep.md §2), solved row by row in extended precision
// chosen from the result (§3); the closed forms (§4) give the regime boundaries, the large-t
// limit and the growth rate.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/status.hpp"
#include "numerics/table.hpp"

namespace icl::theory {

// The model of docs/multistep.md §1. One struct for the theory and the simulator
// (verify/multistep/cot_simulator.hpp).
struct CotParams {
  double alpha = 2.0;   // context length per dimension, L/D > 0
  double tau = 4.0;     // pretraining tasks per dimension, M/D > 0 (the theory needs tau > 1)
  double sigma = 0.1;   // pretraining label noise (test labels are noise-free), >= 0
  // Ridge of the pretraining, (lambda/2) |A|_F^2 next to the mean squared error over the M
  // tasks; >= 0. The theory is the ridgeless limit lambda -> 0+: run() refuses lambda > 0,
  // the simulator uses it (docs/multistep.md §1).
  double lambda = 0.0;

  // Throws InvalidParams naming the field ("alpha", "tau", "sigma", "lambda"): finite, ranges
  // as above. The theory's own conditions (tau > 1, lambda = 0) are checked by run().
  void validate() const;
};

// At most 500 steps: the series costs about T^3 multiply-adds at about 4 T bits (T = 200: 5 s of
// CPU, bench/README.md; T = 500 estimated at minutes, not measured), and has no progress report.
inline constexpr int kCotMaxSteps = 500;
inline constexpr int kCotMaxBits = 16384;
inline constexpr int kCotMaxFiniteDim = 1000000;

struct CotOptions {
  int steps = 30;          // T: E_t for t = 0..T, 0..kCotMaxSteps (cost O(T^3) at the precision)
  // The series is computed at 128 bits, then at the precision its measured cancellation asks
  // for (at most max_bits), until two consecutive runs agree on every E_t (and every closed-form
  // tau -> infinity value) to `relative_tolerance` after rounding to double; the higher one is
  // reported (docs/multistep.md §3).
  int max_bits = 8192;     // 192..kCotMaxBits
  double relative_tolerance = 1e-14;  // [1e-15, 1e-3]
  // > 0: also the finite-D prediction at this dimension (docs/multistep.md §7.3): the exact-to-
  // O(1/D) tau -> infinity iteration at D, its difference from D = infinity added to the series.
  // 0 (default): none; else 2..kCotMaxFiniteDim.
  int finite_dim = 0;
  void validate() const;   // throws InvalidParams naming the field ("steps", "max_bits", ...)
};

// Where the iteration goes as t -> infinity (docs/multistep.md §4.3).
enum class CotRegime {
  Convergent,   // tau above both boundaries: E_t tends to `limit`
  Oscillatory,  // the dominant singularity is at x < 0: E_t grows, I - A S overshoots
  Monotone,     // the dominant singularity is at 0 < x < 1: E_t grows monotonically
};
const char* to_string(CotRegime r);  // "convergent" | "oscillatory" | "monotone"

struct CotResult {
  CotParams params;
  CotOptions options;
  std::vector<double> error;        // E_0..E_T (E_0 = 1); NaN when not certified
  // Closed form at tau -> infinity (A = I/c): E_t = int (1 - x/c)^{2t} dMP(x) (§4.1), per step.
  std::vector<double> error_tau_infinity;
  // With CotOptions::finite_dim = D (§7.3): the tau -> infinity iteration at D (moments of the
  // real Wishart S exact to O(1/D), c = m_2 + sigma^2 D/L), and the finite-D prediction
  // error + (error_tau_infinity_finite_dim - error_tau_infinity), per step; empty otherwise.
  std::vector<double> error_tau_infinity_finite_dim;
  std::vector<double> error_finite_dim;
  int precision_bits = 0;           // the precision of the reported E_t
  double precision_agreement = std::numeric_limits<double>::quiet_NaN();  // max relative
                                    // difference between the last two precisions
  double tau_c = std::numeric_limits<double>::quiet_NaN();     // oscillatory boundary (§4.3)
  double tau_monotone = std::numeric_limits<double>::quiet_NaN();  // monotone boundary
  double tau_crit = std::numeric_limits<double>::quiet_NaN();  // max of the two
  CotRegime regime = CotRegime::Convergent;
  // t -> infinity: (1 - alpha)(tau - 1)/(tau - 2 - sigma^2) for alpha < 1, 0 for alpha >= 1 in
  // the convergent regime; +infinity otherwise (§4.4).
  double limit = std::numeric_limits<double>::quiet_NaN();
  // Outside the convergent regime, ln E_{t+1}/E_t as t -> infinity = -2 ln|x0| with x0 the
  // dominant root of the denominator on the diagonal (§4.5); NaN when convergent.
  double growth_rate = std::numeric_limits<double>::quiet_NaN();
  int t_opt = -1;                    // argmin of E_t over t = 0..T; -1 unless converged
  double error_t_opt = std::numeric_limits<double>::quiet_NaN();
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  bool converged() const { return status == numerics::Status::Converged; }
};

// Whether the theory covers p (tau > 1 and lambda = 0), and the same as a check that throws
// InvalidParams naming "tau" or "lambda" (the one home of the rule: run(), cot_phase_grid() and
// verify::multistep::compare() use it).
bool cot_theory_applies(const CotParams& p);
void check_cot_theory_applies(const CotParams& p);

// Validates (params.validate(), options.validate(), check_cot_theory_applies), then computes the
// series and the closed forms. A series whose precision could not be certified within max_bits
// is a result with status NotConverged, the E_t NaN and precision_agreement the difference
// reached.
CotResult run(const CotParams& params, const CotOptions& options);

// Closed forms (docs/multistep.md §4), each checked against the series in tests/.
double cot_c(const CotParams& p);                     // 1 + (1 + sigma^2)/alpha
double cot_first_step_error(const CotParams& p);      // E_1 (§4.2)
// E_1 at dimension `dim` (§7.1), with the simulator's sizes L = round(alpha D), M = round(tau D):
// the exact Wishart moments of the test prompt and the inverse-Wishart mean of the pretraining
// Gram matrix, b treated as Gaussian (the O(1/D) terms; NaN when M <= D + 1).
double cot_first_step_error(const CotParams& p, int dim);
double cot_tau_c(double alpha, double sigma);         // oscillatory boundary
double cot_tau_monotone(double alpha, double sigma);  // monotone boundary
double cot_limit(const CotParams& p);                 // t -> infinity (§4.4)
double cot_growth_rate(const CotParams& p);           // §4.5, NaN when convergent
CotRegime cot_regime(const CotParams& p);

// A grid of the theory over two of the parameters ("alpha", "tau", "sigma"): the result at
// (xs[i], ys[j]) is element i * ys.size() + j. Every point is validated before any work (an
// InvalidParams names "x" or "y" for an unknown name, else the parameter's field); points run on
// `threads` threads (0: every core), each the same whatever the thread count.
std::vector<CotResult> cot_phase_grid(const CotParams& base, const std::string& x_name,
                                      const std::vector<double>& xs, const std::string& y_name,
                                      const std::vector<double>& ys, const CotOptions& options,
                                      int threads);
// The grid as the table of `icl cot --phase` (one row per point, x varying slowest): x, y (under
// their names), converged, regime (0 convergent, 1 oscillatory, 2 monotone), tau_c,
// tau_monotone, tau_crit, limit, growth_rate, t_opt, error_t_opt, error_last (E_T),
// precision_bits.
numerics::Table cot_phase_table(const std::string& x_name, const std::vector<double>& xs,
                                const std::string& y_name, const std::vector<double>& ys,
                                const std::vector<CotResult>& grid);

// The JSON of `icl cot --json` (keys in docs/multistep.md §6) and its text form.
nlohmann::ordered_json to_json(const CotParams& p);
nlohmann::ordered_json to_json(const CotResult& r);
std::string to_text(const CotResult& r);

}  // namespace icl::theory
