// Phase grids (docs/errors_phases.md §9.1): the grid solved at once (phase_grid), its size and
// the checks that keep a grid within the machine before any work, and the streaming form that
// `icl phase` writes row by row, so that its memory does not grow with the grid.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "theory/sweep.hpp"

namespace icl::theory {

// A grid whose estimated time on its threads exceeds this is refused (a day: beyond it, shard
// the grid over runs or machines with `icl phase --shard`, each shard is estimated alone).
inline constexpr double kMaxGridSeconds = 24 * 3600.0;

struct PhaseGridSize {
  std::size_t nx = 0, ny = 0, points = 0;
  double seconds_per_point = 0;  // CPU time of a warm probe of the grid's corners (one thread)
  double seconds = 0;            // points x seconds_per_point / threads
  double memory_bytes = 0;       // phase_grid() holding every point and Solution at once
  // The text of a TSV of `columns` numbers per row: an upper bound (the widest number of
  // numerics::format_number, 24 characters, and a separator per value).
  double output_bytes(std::size_t columns) const;
  std::string describe() const;  // "nx x ny = P points, about T s on K threads, ..."
};

// Validates the axes (names, order) and the four corner points (InvalidParams as phase_grid())
// and solves them to time one point (a few milliseconds); the other points are validated by
// phase_grid() / phase_grid_rows() before their first solve.
PhaseGridSize phase_grid_size(const Params& base, const std::string& x_name,
                              const std::vector<double>& xs, const std::string& y_name,
                              const std::vector<double>& ys, const PhaseOptions& options = {});

// Refuses (InvalidParams "grid", with the point count, time and sizes) a grid whose estimated
// time exceeds kMaxGridSeconds, whose points do not fit in the available memory when
// `holds_all` (phase_grid(); the streaming rows hold one row), or whose output of `columns`
// numbers per row would not fit on the file system of `output` (a path; "" or "-" is stdout,
// checked against the file system of the file it is redirected to, if it is one).
void check_phase_grid(const PhaseGridSize& size, bool holds_all, std::size_t columns = 0,
                      const std::string& output = "");

// Grid over (x_name, y_name): result[i * ny + j] solves at x = xs[i], y = ys[j] (solve_points
// over the grid). The two names must differ (InvalidParams("y_name"): one axis would overwrite
// the other). A grid refused by check_phase_grid(holds_all = true) is InvalidParams("grid").
std::vector<Solution> phase_grid(const Params& base, const std::string& x_name,
                                 const std::vector<double>& xs, const std::string& y_name,
                                 const std::vector<double>& ys, const PhaseOptions& options = {},
                                 const numerics::Progress& progress = {});

// phase_grid() one x row at a time, in order: row(i, the ny Solutions at x = xs[i]) after each
// row (each point exactly as phase_grid() solves it). Every point is validated before the first
// solve. progress(done, points, "point") over the whole grid; it or `row` may throw to stop.
void phase_grid_rows(const Params& base, const std::string& x_name, const std::vector<double>& xs,
                     const std::string& y_name, const std::vector<double>& ys,
                     const PhaseOptions& options,
                     const std::function<void(std::size_t, const std::vector<Solution>&)>& row,
                     const numerics::Progress& progress = {});

}  // namespace icl::theory
