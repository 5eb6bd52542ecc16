// Path continuation: warm starts and adaptive step halving between converged points.
#include "numerics/continuation.hpp"

#include <cmath>

namespace icl::numerics {

std::vector<PathPoint> continuation(const std::vector<double>& path, const PathSolver& solve,
                                    const std::function<Eigen::VectorXd(double t)>& cold_start,
                                    const ContinuationOptions& options) {
  std::vector<PathPoint> out;
  out.reserve(path.size());
  bool have_prev = false;  // a converged point to continue from
  double t_prev = 0.0;
  Eigen::VectorXd x_prev;
  for (const double t : path) {
    PathPoint p;
    p.t = t;
    const bool warm = options.warm_start && have_prev;
    p.result = solve(t, warm ? x_prev : cold_start(t));
    if (!p.result.converged() && have_prev && options.max_halvings > 0) {
      // Walk from the last converged point towards t. A failed step is halved (at most
      // max_halvings times in total depth); a successful one moves the start forward. The step
      // is not grown again, so `halvings` is the finest subdivision 2^h that was needed.
      double cur = t_prev;
      Eigen::VectorXd x = x_prev;
      int h = 1;
      double step = (t - t_prev) / 2.0;
      SolveResult last;
      bool reached = false;
      while (h <= options.max_halvings) {
        const double target = (std::abs(t - cur) <= std::abs(step) * (1 + 1e-12)) ? t : cur + step;
        SolveResult r = solve(target, x);
        if (r.converged()) {
          cur = target;
          x = r.x;
          if (target == t) {
            last = std::move(r);
            reached = true;
            break;
          }
        } else {
          step /= 2.0;
          ++h;
        }
      }
      if (reached) {
        p.result = std::move(last);
        p.halvings = h;
      } else {
        p.halvings = options.max_halvings;  // all halvings spent; keep the direct attempt's result
      }
    }
    if (p.result.converged()) {
      have_prev = true;
      t_prev = t;
      x_prev = p.result.x;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace icl::numerics
