// Theory vs simulation for the low-rank ICL model: z-scores at fixed D and a finite-size
// extrapolation in 1/D (weighted least squares of mean(D) = a + b/D), over a fixed grid.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "theory/lowrank.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::verify::lowrank {

// The quantities compared (simulation name, theory value read from a Solution).
std::vector<std::string> compared_quantities();  // error.tm ... order.q0
double theory_value(const theory::Solution& s, const std::string& name);
TheoryRef theory_ref(const theory::Solution& s);

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
  bool pass = true;
};

struct GridPoint {
  std::string label;
  theory::Params params;
};
// Both sides of rho = kappa, tau below and above 1, lambda 0 and > 0, alpha_test != alpha,
// sigma_test > 0; full mode adds one general task covariance (power law). quick: the smaller CI
// subset (low-rank tasks only).
std::vector<GridPoint> verify_grid(bool quick);

struct VerifyOptions {
  std::vector<int> dims{20, 30, 40, 60, 80};
  std::vector<int> seeds{400, 200, 100, 32, 16};  // per dim (s.e. ~ 1/(D sqrt(seeds)))
  std::uint64_t base_seed = 7;
  int threads = 2;
  // |extrapolated - theory| <= k_se * se(extrapolated) + rel_tol * |theory| + abs_tol.
  double k_se = 3.0;
  double rel_tol = 0.02;
  double abs_tol = 1e-3;
  static VerifyOptions quick();
};

struct PointResult {
  GridPoint point;
  theory::Solution theory;
  std::vector<ComparisonRow> rows;
  std::vector<double> seconds_per_dim;
  bool pass = true;
  std::string message;  // e.g. theory did not converge
};
// lambda = 0 and tau < 1: compared as minimum-norm simulation vs the ridgeless Letey/Lu theory.
bool ridgeless_point(const theory::Params& p);
// progress(i, n) is called after each (dim) simulation.
PointResult verify_point(const GridPoint& gp, const VerifyOptions& o,
                         const std::function<void(const std::string&)>& progress = {});

}  // namespace icl::verify::lowrank
