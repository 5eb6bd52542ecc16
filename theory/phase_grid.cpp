#include "theory/phase_grid.hpp"

#include <cmath>
#include <cstdio>
#include <thread>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/memory.hpp"
#include "numerics/timing.hpp"
#include "theory/param_path.hpp"
#include "theory/detail/common.hpp"

namespace icl::theory {
namespace {

using detail::describe;

void check_axes(const std::string& x_name, const std::string& y_name) {
  Params::check_name(x_name, "x_name");
  Params::check_name(y_name, "y_name");
  if (x_name == y_name)
    throw InvalidParams("y_name", "must vary a different parameter than x_name (both are '" +
                                      x_name + "': one axis would overwrite the other)");
}

// Grid point (x, y), validated for the method; setting y must keep x (e.g. y = kappa keeps
// tau, so it moves x = gamma = tau/kappa).
Params grid_point(const Params& base, const std::string& x_name, double x,
                  const std::string& y_name, double y, Method method) {
  Params q = with_param(with_param(base, x_name, x), y_name, y);
  const double got = q.get(x_name);
  if (!(std::abs(got - x) <= 1e-12 * std::abs(x)))
    throw InvalidParams("y_name", "setting " + y_name + " moves " + x_name + " (" +
                                      describe(x_name, x) + " became " +
                                      numerics::format_significant(got) +
                                      "): swap the axes or vary another parameter");
  try {
    validate_for(q, method);
  } catch (const InvalidParams& e) {
    throw InvalidParams(e.field(), e.detail() + " (at " + describe(x_name, x) + ", " +
                                       describe(y_name, y) + ")");
  }
  return q;
}

void validate_grid(const Params& base, const std::string& x_name, const std::vector<double>& xs,
                   const std::string& y_name, const std::vector<double>& ys,
                   const PhaseOptions& options) {
  options.validate();
  check_axes(x_name, y_name);
  for (double x : xs)
    for (double y : ys) grid_point(base, x_name, x, y_name, y, options.solve.method);
}

int effective_threads(int threads) {
  return threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

double PhaseGridSize::output_bytes(std::size_t columns) const {
  return double(points) * double(columns) * 25.0;
}

std::string PhaseGridSize::describe() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "a %zu x %zu grid (%.4g points, about %s s at %.3g ms per point)",
                nx, ny, double(points), numerics::format_significant(seconds).c_str(),
                1e3 * seconds_per_point);
  return buf;
}

PhaseGridSize phase_grid_size(const Params& base, const std::string& x_name,
                              const std::vector<double>& xs, const std::string& y_name,
                              const std::vector<double>& ys, const PhaseOptions& options) {
  // Only the axes and the corners here: validating every point of an absurd grid would itself
  // take the time the check is there to refuse (phase_grid_rows validates them all).
  options.validate();
  check_axes(x_name, y_name);
  PhaseGridSize s;
  s.nx = xs.size();
  s.ny = ys.size();
  s.points = s.nx * s.ny;
  s.memory_bytes = double(s.points) * double(sizeof(Params) + sizeof(Solution));
  if (s.points == 0) return s;
  // The corners: the grid's extremes, where solves are typically the slowest.
  std::vector<Params> probe;
  for (double x : {xs.front(), xs.back()})
    for (double y : {ys.front(), ys.back()})
      probe.push_back(grid_point(base, x_name, x, y_name, y, options.solve.method));
  // Timed on a second pass, in this thread's CPU time: the first pass pays the process's
  // one-time setup, and a wall time of microseconds is inflated a hundredfold by one preemption
  // on a loaded machine (which would refuse a feasible grid as "exceeds a day").
  for (const Params& q : probe) (void)solve(q, options.solve);
  const double t0 = numerics::thread_cpu_seconds();
  for (const Params& q : probe) (void)solve(q, options.solve);
  s.seconds_per_point = (numerics::thread_cpu_seconds() - t0) / double(probe.size());
  s.seconds = double(s.points) * s.seconds_per_point / effective_threads(options.threads);
  return s;
}

void check_phase_grid(const PhaseGridSize& size, bool holds_all, std::size_t columns,
                      const std::string& output) {
  if (size.seconds > kMaxGridSeconds)
    throw InvalidParams("grid", size.describe() + " exceeds a day (" +
                                    numerics::format_significant(kMaxGridSeconds) +
                                    " s); use fewer points, or shard it over runs (--shard I/N)");
  if (holds_all)
    numerics::check_fits_in_memory(size.memory_bytes, "grid", size.describe());
  if (columns == 0) return;
  const bool to_stdout = output.empty() || output == "-";
  const auto free = to_stdout ? numerics::free_space_of_stdout()
                              : numerics::free_space_of_folder(output);
  const double need = size.output_bytes(columns);
  if (free && need > double(free->bytes))
    throw InvalidParams("grid", size.describe() + " writes up to " + numerics::format_bytes(need) +
                                    "; " + free->source + " has " +
                                    numerics::format_bytes(double(free->bytes)) + " free");
}

std::vector<Solution> phase_grid(const Params& base, const std::string& x_name,
                                 const std::vector<double>& xs, const std::string& y_name,
                                 const std::vector<double>& ys, const PhaseOptions& options,
                                 const numerics::Progress& progress) {
  // Before building the points: a grid that cannot be held, or would take more than a day, is
  // refused, never a bad_alloc or a hang.
  check_phase_grid(phase_grid_size(base, x_name, xs, y_name, ys, options), /*holds_all=*/true);
  std::vector<Params> points;
  points.reserve(xs.size() * ys.size());
  for (double x : xs)
    for (double y : ys) points.push_back(grid_point(base, x_name, x, y_name, y, options.solve.method));
  return solve_points(points, options, progress);
}

void phase_grid_rows(const Params& base, const std::string& x_name, const std::vector<double>& xs,
                     const std::string& y_name, const std::vector<double>& ys,
                     const PhaseOptions& options,
                     const std::function<void(std::size_t, const std::vector<Solution>&)>& row,
                     const numerics::Progress& progress) {
  validate_grid(base, x_name, xs, y_name, ys, options);
  const std::size_t total = xs.size() * ys.size();
  std::vector<Params> points(ys.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    for (std::size_t j = 0; j < ys.size(); ++j)
      points[j] = grid_point(base, x_name, xs[i], y_name, ys[j], options.solve.method);
    numerics::Progress within;
    if (progress)
      within = [&progress, done = i * ys.size(), total](std::size_t d, std::size_t,
                                                        const std::string& what) {
        progress(done + d, total, what);
      };
    row(i, solve_points(points, options, within));
  }
}

}  // namespace icl::theory
