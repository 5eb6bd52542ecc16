// Theory vs simulation for the low-rank ICL model (docs/simulation.md §14): z-scores at fixed D and
// a finite-size extrapolation in 1/D (weighted least squares of mean(D) = a + b/D), over a fixed
// grid of parameter points.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "numerics/progress.hpp"
#include "numerics/statistics.hpp"
#include "numerics/status.hpp"
#include "numerics/unit_store.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::verify::lowrank {

// One compared quantity: its name ("error.tm"), where the simulation and the theory hold it.
struct Quantity {
  const char* name;
  // The simulated estimate; nullptr when the result does not hold it (no decomposition).
  const numerics::Estimate* (*simulated)(const SimulationResult&);
  double (*theory)(const theory::Solution&);
  std::string short_name() const;  // the part after the first '.' ("tm", "q0")
};
// The quantities every comparison enforces: error.{tm,idg,odg}, order.{m,q,mbar,qbar,m0,q0}.
const std::vector<Quantity>& compared_quantities();
// The shifted test protocol's error (docs/general_covariance.md §20), enforced at grid points with
// Params::has_test_shift(): SimulationResult::shift against Solution::test_shift (nullptr / NaN
// when absent).
Quantity shift_quantity();
// compared_quantities() with shift_quantity() after the errors when `shift` (a point with a
// shifted protocol): the rows of a comparison, in their order.
std::vector<Quantity> compared_quantities(bool shift);
// The measured decomposition's decomp.{tm,idg,odg}.{algo,excess} (docs/errors_phases.md §8.4):
// the informational rows with a finite-D prediction (docs/finite_dim.md §21.17).
const std::vector<Quantity>& decomposition_quantities();
// Informational rows (the decomposition, docs/errors_phases.md §8, partly conjectural): reported
// when the simulation measured them, never failing. decomposition_quantities(), then
// decomp.fit.{e,e_nu}.
const std::vector<Quantity>& informational_quantities();

// One compared quantity of a simulation at one point (icl simulate, Python simulate()): the
// simulation against the theory at the simulated ratios and against the finite-D prediction at
// its D (docs/simulation.md §13.8), with the Bayes-optimal error next to the errors it bounds.
struct SimulationComparison {
  std::string quantity;  // a compared quantity's name, "error.shift" with a shifted protocol
  double mean = 0, sem = 0;  // the simulation
  double theory = 0, z = 0;  // D -> infinity theory at SimulationResult::simulated; (mean - theory) / sem
  // NaN without a converged finite-D prediction.
  double finite_dim = std::numeric_limits<double>::quiet_NaN();
  double z_finite_dim = std::numeric_limits<double>::quiet_NaN();
  // The theory's Bayes-optimal error for error.idg, error.odg, error.shift (docs/errors_phases.md
  // §17); the simulated dMMSE baseline for error.tm when it was measured; NaN otherwise.
  double bayes_optimal = std::numeric_limits<double>::quiet_NaN();
};
// Empty without a converged theory or with a failed simulation (no aggregates).
std::vector<SimulationComparison> comparison(const SimulationResult& r);

// Weighted least squares y = a + b x with weights 1/se^2 (x = 1/D). se of a and b from the
// covariance (J^T W J)^{-1}, inflated by sqrt(chi2/dof) when chi2/dof > 1 (the model
// a + b/D leaves out O(1/D^2); a poor fit then widens the error bar instead of hiding it).
struct Extrapolation {
  double value = 0, se = 0;    // a = the D -> infinity value
  double slope = 0, slope_se = 0;
  double chi2 = 0;
  int dof = 0;
};
Extrapolation extrapolate_inverse_d(const std::vector<double>& dims,
                                    const std::vector<double>& means,
                                    const std::vector<double>& sems);

struct PerDim {
  int dim = 0, seeds = 0;
  double mean = 0, sem = 0, z = 0;  // z = (mean - theory) / sem
  double rel = 0;                   // (mean - theory) / |theory|
};
struct ComparisonRow {
  std::string quantity;
  double theory = 0;
  std::vector<PerDim> dims;
  Extrapolation extrapolated;
  double rel_dev = 0;     // (extrapolated - theory) / |theory|
  double tolerance = 0;   // allowed |extrapolated - theory|
  bool enforced = true;  // false: informational (reported, never failing)
  // Converged when |extrapolated - theory| <= tolerance (always for informational rows),
  // CheckFailed otherwise.
  numerics::Status status = numerics::Status::Converged;
  bool passed() const { return status == numerics::Status::Converged; }
};

struct GridPoint {
  std::string label;
  theory::Params params;
};
// Both sides of rho = kappa, tau below and above 1, lambda 0 and > 0, alpha_test != alpha,
// sigma_test > 0; full mode adds one general task covariance (low rank plus a weaker
// complement) and the ridgeless minimum-norm branch. quick: the smaller CI subset (two
// low-rank points).
std::vector<GridPoint> verify_grid(bool quick);

struct VerifyOptions {
  std::vector<int> dims{20, 30, 40, 60, 80};      // >= 2 dims, each 2..2000
  std::vector<int> seeds{400, 200, 100, 32, 16};  // per dim, >= 2 (s.e. ~ 1/(D sqrt(seeds)))
  // Seeds of dimension D: derive_seed(derive_seed(base_seed, D), k).
  std::uint64_t base_seed = 7;
  int threads = 2;  // >= 1
  // |extrapolated - theory| <= k_se * se(extrapolated) + rel_tol * |theory| + abs_tol; all >= 0.
  double k_se = 3.0;
  double rel_tol = 0.02;
  double abs_tol = 1e-3;
  std::vector<GridPoint> points = verify_grid(false);
  bool quick_mode = false;         // set by quick(); recorded as "quick" in the JSON
  // Finite-D sources switched off in every simulation (SimOptions, docs/simulation.md §13.7).
  FiniteDSwitches switches;
  static VerifyOptions quick();    // the CI subset: smaller D, verify_grid(true)
  void validate() const;                         // InvalidParams naming the field
};

// One simulated D and quantity against the finite-D prediction (docs/simulation.md §14.5,
// docs/finite_dim.md §21) and, for contrast, against the D -> infinity theory. Informational: never
// enforced.
struct FiniteDimRow {
  int dim = 0;
  std::string quantity;  // a compared quantity that the prediction holds: error.*, order.*
  double prediction = 0;  // solve_finite_dim at this D; NaN when it did not converge
  double limit = 0;       // the D -> infinity theory (ComparisonRow::theory)
  double mean = 0, sem = 0;  // the simulation at this D (as in the comparison rows)
  double z = 0;        // (mean - prediction) / sem (0 when sem = 0; NaN with the prediction)
  double z_limit = 0;  // (mean - limit) / sem (PerDim::z)
  // The prediction's error bar for TM, IDG and ODG (FiniteDimResult::validity.remainder,
  // docs/finite_dim.md §21.12); NaN for the other quantities.
  double uncertainty = std::numeric_limits<double>::quiet_NaN();
};
struct FiniteDimReport {
  // false: no prediction at this point, `message` says why: solve_finite_dim refuses it (the
  // interpolation peak), or the point has no comparison (theory or simulation did not
  // converge). Then there are no rows.
  bool available = false;
  // When available: Converged when every D's prediction converged, otherwise the first failing
  // D's status (that D's rows hold NaN predictions and z; `message` names it).
  numerics::Status status = numerics::Status::NotConverged;
  std::string message;
  // Finite-D effects the prediction leaves out (FiniteDimResult::omitted, the same at every D),
  // e.g. "task_spectrum_general" for a general task covariance.
  std::vector<std::string> omitted;
  // For each simulated D (in VerifyOptions::dims order), error.{tm,idg,odg} then
  // order.{m,q,mbar,qbar,m0,q0}.
  std::vector<FiniteDimRow> rows;
};

struct PointResult {
  GridPoint point;
  theory::Solution theory;
  std::vector<ComparisonRow> rows;
  // The simulations against the finite-D predictions at each D, reported next to the rows and
  // never part of the status (docs/simulation.md §14.5).
  FiniteDimReport finite_dim;
  std::vector<double> seconds_per_dim;
  // Converged: every enforced row holds; CheckFailed: some row does not; NotConverged: the
  // theory or a simulation (a seed's CG) did not converge (message says which).
  numerics::Status status = numerics::Status::Converged;
  std::string message;
  bool passed() const { return status == numerics::Status::Converged; }
};
// One grid point: the theory, then one simulation per dim; progress(k, dims, label) after each.
// `store` keeps each converged simulation's summary under "D<dim>" and gives back kept ones
// (a resumed run; the result equals an uninterrupted one, seconds_per_dim included).
PointResult verify_point(const GridPoint& gp, const VerifyOptions& o,
                         const numerics::Progress& progress = {},
                         const numerics::UnitStore& store = {});

struct VerifyResult {
  VerifyOptions options;
  std::vector<PointResult> points;
  numerics::Status status = numerics::Status::Converged;  // the first failing point's
  std::string message;
  bool passed() const { return status == numerics::Status::Converged; }
};
// Every point of o.points; progress(done, points x dims, label) after each simulation.
// `store`: the finished simulations, under "p<point index>_D<dim>" (see verify_point).
VerifyResult run(const VerifyOptions& o, const numerics::Progress& progress = {},
                 const numerics::UnitStore& store = {});

}  // namespace icl::verify::lowrank
