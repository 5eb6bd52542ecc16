// icl boundary: for each value of one parameter (--y), the value of another (--x) where a
// criterion on one quantity of the theory holds (theory/boundary.hpp, docs/errors_phases.md §19): a
// level crossing, the steepest point, or the minimizer. TSV (one header row, JSON sidecar with
// --out), or with --json the layout of theory::to_json(BoundaryResult). A y with no such point in
// range is a row with nan x and converged = 0 (the reason in the JSON message); exit 3 when a solve
// or refinement failed at some y (after writing the output).
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/boundary.hpp"
#include "theory/serialize.hpp"

namespace icl::cli {
namespace {

// ERR=VALUE of --level: the syntax only (a non-finite VALUE is refused by
// BoundaryOptions::validate, naming "level").
std::pair<std::string, double> parse_level(const std::string& text) {
  const auto eq = text.find('=');
  const auto bad = [&] {
    return ExitError(kExitBadInput, "--level '" + text + "': expected ERR=VALUE, e.g. idg=0.5");
  };
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) throw bad();
  char* end = nullptr;
  const std::string v = text.substr(eq + 1);
  const double value = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size()) throw bad();
  return {text.substr(0, eq), value};
}

}  // namespace

void register_boundary(CLI::App& app) {
  // The defaults are the library's (theory::BoundaryOptions); the checks are its validate().
  const theory::BoundaryOptions def{};
  struct Options {
    ParamFlags flags;
    std::string x, y, level, steepest, argmin, method, out;
    bool log_x = false, log_y = false, json = false, quiet = false, trace = false;
    int scan_points = 0, threads = 0, trace_points = 0;
    double trace_step = 0;
  };
  auto opt = std::make_shared<Options>();
  opt->method = theory::to_string(def.solve.method);
  opt->scan_points = def.scan_points;
  opt->threads = def.threads;
  opt->trace_points = def.trace_points;
  opt->trace_step = def.trace_step;
  auto* cmd = app.add_subcommand(
      "boundary", "Per value of --y, the --x where a level is crossed, the slope is steepest, or "
                  "the minimum sits (scan + TOMS 748 / Brent)");
  cmd->footer("ERR: tm, idg, odg, a decomposition piece (tm_algo ... odg_struct), an order "
              "parameter (q m chi qbar chibar mbar m0 q0 qhat mhat chihat qbarhat chibarhat), z, e, "
              "bayes_idg, bayes_odg. A --y value with no such --x in range is a row with nan and "
              "converged = 0 (the reason in the JSON message). docs/errors_phases.md §19.");
  opt->flags.add_to(*cmd);
  cmd->add_option("--x", opt->x, "NAME=START:STOP: the parameter searched and its range")
      ->required();
  cmd->add_flag("--log-x", opt->log_x,
                "logarithmic x axis (START > 0): the scan's spacing, and --steepest maximizes "
                "|d ERR / d ln x| instead of |d ERR / dx|");
  cmd->add_option("--y", opt->y, "NAME=START:STOP:COUNT: the parameter stepped")->required();
  cmd->add_flag("--log-y", opt->log_y, "geometric grid for --y");
  auto* level = cmd->add_option("--level", opt->level, "ERR=VALUE: where ERR crosses VALUE");
  auto* steepest = cmd->add_option("--steepest", opt->steepest,
                                   "ERR: where |d ERR / dx| (with --log-x: |d ERR / d ln x|) is largest");
  auto* argmin = cmd->add_option("--argmin", opt->argmin, "ERR: where ERR is smallest");
  level->excludes(steepest)->excludes(argmin);
  steepest->excludes(argmin);
  cmd->add_flag("--trace", opt->trace,
                "follow the --level or --steepest curve through the box of --x and --y by "
                "pseudo-arclength continuation (turning points included); the TSV is the curve");
  cmd->add_option("--trace-points", opt->trace_points, "--trace: at most this many points, 10..100000")
      ->capture_default_str();
  cmd->add_option("--trace-step", opt->trace_step,
                  "--trace: the largest step, a fraction of the box's diagonal, in (0, 0.5]")
      ->capture_default_str();
  cmd->add_option("--scan-points", opt->scan_points,
                  "points of the coarse scan along x per y, 5..100000")
      ->capture_default_str();
  cmd->add_option("--method", opt->method, "saddle | reduced | letey (as icl solve)")
      ->capture_default_str();
  add_threads_flag(*cmd, opt->threads, /*zero_means_all_cores=*/true);
  add_json_flag(*cmd, opt->json);
  add_out_flag(*cmd, opt->out, "the TSV table (+ JSON sidecar FILE.json), or with --json the JSON",
               OutFormat::JsonOrTable);
  add_quiet_flag(*cmd, opt->quiet);
  cmd->callback([opt] {
    if (opt->json) check_json_output_name(opt->out);
    theory::BoundaryOptions o;
    if (!opt->level.empty()) {
      o.criterion = theory::Criterion::Level;
      std::tie(o.quantity, o.level) = parse_level(opt->level);
    } else if (!opt->steepest.empty()) {
      o.criterion = theory::Criterion::Steepest;
      o.quantity = opt->steepest;
    } else if (!opt->argmin.empty()) {
      o.criterion = theory::Criterion::Argmin;
      o.quantity = opt->argmin;
    } else {
      throw ExitError(kExitBadInput, "give one criterion: --level ERR=VALUE, --steepest ERR or "
                                     "--argmin ERR");
    }
    const NamedInterval x = parse_named_interval(opt->x, "--x");
    const NamedRange y = parse_named_range(opt->y, "--y");
    o.x = x.name;
    o.lo = x.lo;
    o.hi = x.hi;
    o.log_x = opt->log_x;
    o.log_y = opt->log_y;
    o.trace = opt->trace;
    o.trace_points = opt->trace_points;
    o.trace_step = opt->trace_step;
    o.y = y.name;
    o.ys = range_values(y.range, opt->log_y, "--y");
    o.scan_points = opt->scan_points;
    o.threads = opt->threads;
    o.solve.method = theory::method_from_string(opt->method);
    numerics::Progress report;
    if (!opt->quiet)
      report = [](std::size_t d, std::size_t n, const std::string&) { progress("boundary", d, n); };
    const theory::Params p = opt->flags.resolve();
    const theory::BoundaryResult r = theory::run(p, o, report);
    if (opt->json) {
      emit_json(theory::to_json(r), opt->out);
    } else {
      // The JSON layout, messages included: criterion, range, one message per point, params.
      nlohmann::json meta = nlohmann::json::parse(theory::to_json(r).dump());
      meta["method"] = theory::to_string(r.options.solve.method);
      emit_tsv(opt->trace ? theory::trace_table(r) : theory::to_table(r), opt->out, meta);
    }
    if (r.status == numerics::Status::NotConverged)
      throw ExitError(kExitNotConverged, "boundary: " + r.message);
    if (r.trace && r.trace->status == numerics::Status::NotConverged)
      throw ExitError(kExitNotConverged, "boundary --trace: " + r.trace->message);
  });
}

}  // namespace icl::cli
