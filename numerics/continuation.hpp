// Solving along a parameter path with warm starts, step halving on failure, and a record of
// which points converged.
#pragma once
#include <functional>
#include <vector>

#include "numerics/residual_solver.hpp"

namespace icl::numerics {

// Solve at parameter value t from the start x0.
using PathSolver = std::function<SolveResult(double t, const Eigen::VectorXd& x0)>;

struct ContinuationOptions {
  bool warm_start = true;  // start each point from the previous converged solution
  int max_halvings = 8;    // on failure, insert intermediate points t_prev + (t - t_prev)/2^h
};

struct PathPoint {
  double t = 0.0;
  SolveResult result;
  int halvings = 0;  // how many halvings were needed to reach this point
};

// One PathPoint per entry of `path` (never skipped: failed points keep status and residual).
// `cold_start(t)` gives the start when there is no previous converged point.
std::vector<PathPoint> continuation(const std::vector<double>& path, const PathSolver& solve,
                                    const std::function<Eigen::VectorXd(double t)>& cold_start,
                                    const ContinuationOptions& options = {});

}  // namespace icl::numerics
