// icl solve: one theory solve, printing the three errors (and with --json everything, in the
// layout of theory::to_json). With --finite-dim D also the finite-D prediction at dimension D
// (docs/finite_dim.md §21, theory/finite_dim.hpp): a "finite_dim" block in the JSON, a "finite D"
// section in the text. Bad parameters reach main() as icl::InvalidParams (exit 2).
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/finite_dim.hpp"
#include "theory/lowrank.hpp"
#include "theory/serialize.hpp"

namespace icl::cli {

void register_solve(CLI::App& app) {
  struct Options {
    ParamFlags flags;
    std::string method = "saddle";
    bool json = false, gradient = false;
    std::string out;
    FiniteDimFlags finite_dim;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("solve", "Solve the replica theory at one point: TM/IDG/ODG errors");
  opt->flags.add_to(*cmd);
  cmd->add_option("--method", opt->method, "saddle (full saddle point, GSL quadrature) | "
                  "reduced (closed form) | letey (deterministic equivalent, ridgeless)")
      ->check(CLI::IsMember({"saddle", "reduced", "letey"}))->capture_default_str();
  cmd->add_flag("--gradient", opt->gradient,
                "also the exact derivative of every output with respect to every parameter "
                "(implicit differentiation, docs/sensitivity.md §22)");
  add_json_flag(*cmd, opt->json);
  add_out_flag(*cmd, opt->out, "the JSON", OutFormat::Json);
  opt->finite_dim.add_to(*cmd);
  cmd->callback([opt] {
    const theory::Params p = opt->flags.resolve();
    // The finite-D prediction first: a point it refuses is bad input (exit 2) before any output.
    std::optional<theory::FiniteDimResult> fd;
    if (const auto o = opt->finite_dim.options()) fd = opt->finite_dim.solve(p, *o);
    const theory::Solution s = theory::solve(
        p, {.method = theory::method_from_string(opt->method), .gradient = opt->gradient});
    if (opt->json || !opt->out.empty()) {
      nlohmann::ordered_json j = theory::to_json(s);
      if (fd) j["finite_dim"] = theory::to_json(*fd);
      emit_json(j, opt->out);
    } else {
      std::cout << theory::to_text(s);
      if (s.gradient && s.converged()) std::cout << theory::to_text(*s.gradient);
      if (fd) std::cout << theory::to_text(*fd);
    }
    // Printed first (status, message, residual and null values), then exit 3.
    if (!s.converged()) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s solve did not converge: residual norm %.3g (%s)",
                    theory::to_string(s.method), s.residual_norm, s.message.c_str());
      throw ExitError(kExitNotConverged, buf);
    }
    if (s.gradient && !s.gradient->converged())
      throw ExitError(kExitNotConverged, "no gradient: " + s.gradient->message);
    if (fd && !fd->converged()) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "finite-D prediction at --finite-dim %d: %s, residual norm %.3g (%s)",
                    fd->options.dim, numerics::to_string(fd->status), fd->residual_norm, fd->message.c_str());
      throw ExitError(kExitNotConverged, buf);
    }
  });
}

}  // namespace icl::cli
