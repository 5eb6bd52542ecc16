#include "theory/sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <cmath>
#include <map>

#include "numerics/continuation.hpp"
#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/parallel.hpp"
#include "theory/param_path.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

// The point's message names it ("alpha = 2"); built only when it is invalid, since a sweep
// validates every point first (a formatted string per point was measurable, docs/README).
template <class Check, class Where>
void validate_at(const Check& check, const Where& where) {
  try {
    check();
  } catch (const InvalidParams& e) {
    throw InvalidParams(e.field(), e.detail() + " (at " + where() + ")");
  }
}

template <class Where>
void validate_point(const Params& p, Method method, const Where& where) {
  validate_at([&] { validate_for(p, method); }, where);
}

using detail::describe;

}  // namespace

std::vector<double> linspace(double start, double stop, int count) {
  if (count < 1) throw InvalidParams("count", "must be >= 1");
  std::vector<double> v(count);
  for (int i = 0; i < count; ++i)
    v[i] = count == 1 ? start : start + (stop - start) * i / (count - 1);
  return v;
}

std::vector<double> logspace(double start, double stop, int count) {
  if (!(start > 0 && stop > 0)) throw InvalidParams("start", "a log grid needs start, stop > 0");
  std::vector<double> v = linspace(std::log(start), std::log(stop), count);
  for (double& x : v) x = std::exp(x);
  if (count > 1) v.back() = stop;
  v.front() = start;
  return v;
}

void SweepOptions::validate() const {
  if (max_halvings < 0)
    throw InvalidParams("max_halvings", "must be >= 0, got " + std::to_string(max_halvings));
}

void PhaseOptions::validate() const {
  numerics::check_threads(threads, /*zero_means_all_cores=*/true);
}

std::vector<Solution> sweep(const Params& base, const std::string& name,
                            const std::vector<double>& values, const SweepOptions& options,
                            const numerics::Progress& progress) {
  options.validate();
  Params::check_name(name);
  for (double v : values)
    validate_point(with_param(base, name, v), options.solve.method, [&] { return describe(name, v); });
  std::vector<Solution> out;
  out.reserve(values.size());
  if (options.solve.method != Method::Saddle) {
    for (double v : values) {
      out.push_back(solve(with_param(base, name, v), options.solve));
      if (progress) progress(out.size(), values.size(), "point");
    }
    return out;
  }
  // Saddle: continuation along the path, warm-started from the previous converged point; a
  // failure is retried through intermediate points (step halving). The solutions are kept by
  // parameter value so that each requested point reports its own Solution.
  std::map<double, Solution> solved;
  std::size_t done = 0;
  const numerics::PathSolver path_solver = [&](double t, const Eigen::VectorXd& x0) {
    // First from the point's own reduced closed form (usually already a root of the full map:
    // zero iterations), then, if that fails, warm-started from the previous converged point.
    const OrderParams warm = x0.size() == 10 ? order_from_vector(x0) : OrderParams{};
    Solution s = solve_near(with_param(base, name, t), options.solve, x0.size() == 10 ? &warm : nullptr);
    numerics::SolveResult r;
    r.status = s.status;
    // NaN unless converged: continuation only continues from converged points' x.
    r.x = to_vector(s.order);
    r.residual_norm = s.residual_norm;
    r.iterations = s.iterations;
    r.message = s.message;
    // t may be attempted again (step halving): keep its best attempt, converged first, then
    // the smaller residual.
    const auto it = solved.find(t);
    if (it == solved.end()) solved.emplace(t, std::move(s));
    else if (!it->second.converged() && (s.converged() || s.residual_norm < it->second.residual_norm))
      it->second = std::move(s);
    return r;
  };
  numerics::ContinuationOptions co;
  co.warm_start = options.warm_start;
  co.max_halvings = options.max_halvings;
  // Cold start: empty vector -> solve() starts from the reduced closed form.
  const auto points = numerics::continuation(
      values,
      [&](double t, const Eigen::VectorXd& x0) {
        auto r = path_solver(t, x0);
        if (progress && std::find(values.begin(), values.end(), t) != values.end())
          progress(++done, values.size(), "point");
        return r;
      },
      [](double) { return Eigen::VectorXd(); }, co);
  for (const auto& pt : points) {
    auto it = solved.find(pt.t);
    if (it != solved.end()) out.push_back(it->second);
    else out.push_back(Solution{});  // unreachable: every requested t was attempted
  }
  return out;
}

namespace {

// solve_finite_dim at validated points: a refusal is the point's not_covered, not thrown.
std::vector<FiniteDimPoint> finite_dim_at(const std::vector<Params>& points,
                                          const FiniteDimOptions& options,
                                          const numerics::Progress& progress) {
  std::vector<FiniteDimPoint> out(points.size());
  for (std::size_t k = 0; k < points.size(); ++k) {
    // The point is valid, so an InvalidParams here is solve_finite_dim's refusal of a point
    // outside the finite-D theory (docs/finite_dim.md §21): its own rule, not restated here.
    try {
      out[k].result = solve_finite_dim(points[k], options);
    } catch (const InvalidParams& e) {
      out[k].not_covered = e.what();
    }
    if (progress) progress(k + 1, points.size(), "finite-D point");
  }
  return out;
}

}  // namespace

std::vector<FiniteDimPoint> finite_dim_sweep(const Params& base, const std::string& name,
                                             const std::vector<double>& values,
                                             const FiniteDimOptions& options,
                                             const numerics::Progress& progress) {
  Params::check_name(name);
  options.validate();
  std::vector<Params> points;
  points.reserve(values.size());
  for (double v : values) {
    points.push_back(with_param(base, name, v));
    validate_at([&] { points.back().validate(); }, [&] { return describe(name, v); });
  }
  return finite_dim_at(points, options, progress);
}

std::vector<FiniteDimPoint> finite_dim_points(const std::vector<Params>& points,
                                              const FiniteDimOptions& options,
                                              const numerics::Progress& progress) {
  options.validate();
  for (std::size_t k = 0; k < points.size(); ++k)
    validate_at([&] { points[k].validate(); }, [&] { return "point " + std::to_string(k); });
  return finite_dim_at(points, options, progress);
}

std::vector<Solution> solve_points(const std::vector<Params>& points,
                                   const PhaseOptions& options,
                                   const numerics::Progress& progress) {
  options.validate();
  options.solve.validate();
  for (std::size_t k = 0; k < points.size(); ++k)
    validate_point(points[k], options.solve.method, [k] { return "point " + std::to_string(k); });
  std::vector<Solution> out(points.size());
  // Points are independent (each starts from its own reduced closed form), so the result does
  // not depend on the number of threads or the order of work. A progress callback that throws
  // (e.g. Python's KeyboardInterrupt) stops the remaining points and is rethrown here.
  numerics::parallel_for(
      points.size(), options.threads,
      [&](std::size_t k) { out[k] = detail::solve_validated(points[k], options.solve); }, progress,
      "point");
  return out;
}

}  // namespace icl::theory
