// icl solve: one theory solve, printing the three errors (and with --json everything, in the
// layout of theory::to_json). Bad parameters reach main() as icl::InvalidParams (exit 2).
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"

namespace icl::cli {

void register_solve(CLI::App& app) {
  struct Options {
    ParamFlags flags;
    std::string method = "saddle";
    bool json = false;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("solve", "Solve the replica theory at one point: TM/IDG/ODG errors");
  opt->flags.add_to(*cmd);
  cmd->add_option("--method", opt->method, "saddle (full saddle point, GSL quadrature) | "
                  "reduced (closed form) | letey (deterministic equivalent, ridgeless)")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  add_json_flag(*cmd, opt->json);
  add_out_flag(*cmd, opt->out, "the JSON");
  cmd->callback([opt] {
    const theory::Params p = opt->flags.resolve();
    const theory::Solution s =
        theory::solve(p, {.method = theory::method_from_string(opt->method)});
    if (!s.converged()) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s solve did not converge: residual norm %.3g (%s)",
                    theory::to_string(s.method), s.residual_norm, s.message.c_str());
      throw ExitError(kExitNotConverged, buf);
    }
    if (opt->json || !opt->out.empty()) {
      emit_json(theory::to_json(s), opt->out);
      return;
    }
    std::cout << theory::to_text(s);
  });
}

}  // namespace icl::cli
