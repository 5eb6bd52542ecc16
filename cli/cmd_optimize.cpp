// icl optimize: the value of one parameter in a range that minimizes TM, IDG or ODG
// (theory/optimize.hpp, docs/errors_phases.md §18). One line of text, or with --json the layout of
// theory::to_json(OptimizeResult). Exit 3 when the minimization did not converge.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/optimize.hpp"
#include "theory/serialize.hpp"

namespace icl::cli {

void register_optimize(CLI::App& app) {
  // The defaults are the library's (theory::OptimizeOptions); the checks are its validate().
  const theory::OptimizeOptions def{};
  struct Options {
    ParamFlags flags;
    std::string minimize, over, range, method;
    int scan_points = 0;
    bool json = false;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  opt->minimize = theory::to_string(def.objective);
  opt->method = theory::to_string(def.solve.method);
  opt->scan_points = def.scan_points;
  auto* cmd = app.add_subcommand(
      "optimize", "The value of one parameter that minimizes TM, IDG or ODG (scan + Brent)");
  opt->flags.add_to(*cmd);
  cmd->add_option("--minimize", opt->minimize,
                  "the error to minimize: tm | idg | odg | shift (the shifted test "
                  "protocol: needs --test-overlap or --test-levels)")
      ->capture_default_str();
  cmd->add_option("--over", opt->over,
                  "the parameter varied: alpha alpha_test tau gamma kappa rho sigma sigma_test "
                  "lambda test_overlap (dashes allowed)")
      ->required();
  cmd->add_option("--range", opt->range,
                  "A:B, the range searched (log scale when A > 0); default per parameter "
                  "(lambda 1e-4:10, rho 0.01:1, sigma 0:2, test_overlap 0:1, others 0.1:20)");
  cmd->add_option("--scan-points", opt->scan_points, "points of the coarse scan, 5..100000")
      ->capture_default_str();
  cmd->add_option("--method", opt->method, "saddle | reduced | letey (as icl solve)")
      ->capture_default_str();
  add_json_flag(*cmd, opt->json);
  add_out_flag(*cmd, opt->out, "the JSON", OutFormat::Json);
  cmd->callback([opt] {
    theory::OptimizeOptions o;
    o.objective = theory::objective_from_string(opt->minimize);
    o.over = opt->over;
    for (char& c : o.over)
      if (c == '-') c = '_';
    if (!opt->range.empty()) std::tie(o.lo, o.hi) = parse_interval(opt->range, "--range");
    o.scan_points = opt->scan_points;
    o.solve.method = theory::method_from_string(opt->method);
    const theory::Params p = opt->flags.resolve();
    const theory::OptimizeResult r = theory::run(p, o);
    if (!r.converged())
      throw ExitError(kExitNotConverged, "optimize did not converge: " + r.message);
    if (opt->json || !opt->out.empty()) emit_json(theory::to_json(r), opt->out);
    else std::cout << theory::to_text(r);
  });
}

}  // namespace icl::cli
