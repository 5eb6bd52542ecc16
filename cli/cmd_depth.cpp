// icl depth: L layers of linear attention as L steps of gradient descent (theory/depth.hpp,
// docs/multistep_depth.md): the optimal shared step, the per-layer envelope and the error by
// depth; with --simulate the finite-D simulator at the optimal step. Text by default, or with
// --json the layout of theory::to_json(DepthResult) (+ "simulation"). Exit 3 when not converged.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "numerics/error.hpp"
#include "theory/depth.hpp"
#include "verify/multistep/depth_simulator.hpp"

namespace icl::cli {

void register_depth(CLI::App& app) {
  // The defaults are the library's (theory::DepthParams, verify::multistep::DepthSimOptions);
  // the checks are their validate().
  struct Options {
    theory::DepthParams params;
    verify::multistep::DepthSimOptions sim;
    bool simulate = false, literal = false, json = false;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "depth", "L layers of linear attention as L gradient-descent steps: optimal step and error");
  cmd->add_option("--alpha", opt->params.alpha, "context length per dimension N/D, > 0")
      ->capture_default_str();
  cmd->add_option("--sigma", opt->params.sigma, "label noise, >= 0")->capture_default_str();
  cmd->add_option("--layers", opt->params.layers,
                  "depth L, 1.." + std::to_string(theory::kMaxDepthLayers))
      ->capture_default_str();
  cmd->add_flag("--simulate", opt->simulate,
                "also simulate at the optimal step (the conditional estimator: exact average over "
                "w and noise given each sampled context)");
  add_dim_flag(*cmd, opt->sim.dim);
  cmd->add_option("--seeds", opt->sim.seeds, "sampled contexts X (mean and standard error)")
      ->capture_default_str();
  add_seed_flag(*cmd, opt->sim.seed);
  add_threads_flag(*cmd, opt->sim.threads);
  cmd->add_flag("--literal", opt->literal,
                "simulate the layer recursion itself with sampled w and noise (slower, noisier)");
  add_json_flag(*cmd, opt->json);
  add_out_flag(*cmd, opt->out, "the JSON", OutFormat::Json);
  cmd->callback([opt] {
    if (opt->literal) opt->sim.estimator = verify::multistep::DepthEstimator::Literal;
    if (opt->simulate) opt->sim.validate(opt->params);
    const theory::DepthResult r = theory::run(opt->params);
    if (!r.converged()) throw ExitError(kExitNotConverged, "depth did not converge: " + r.message);
    nlohmann::ordered_json j = theory::to_json(r);
    std::string text = theory::to_text(r);
    if (opt->simulate) {
      const auto s = verify::multistep::simulate(opt->params, r.step_opt, opt->sim);
      j["simulation"] = verify::multistep::to_json(s);
      text += "simulation at g = " + format_number(r.step_opt) + " (D = " +
              std::to_string(opt->sim.dim) + ", " + std::to_string(opt->sim.seeds) +
              " contexts): " + format_number(s.error.mean) + " +- " + format_number(s.error.sem) +
              " (" + verify::multistep::to_string(opt->sim.estimator) + "; finite-D bias O(1/D))\n";
      if (!s.converged()) {
        if (opt->json || !opt->out.empty()) emit_json(j, opt->out);
        throw ExitError(kExitNotConverged, "depth simulation failed: " + s.message);
      }
    }
    if (opt->json || !opt->out.empty()) emit_json(j, opt->out);
    else std::cout << text;
  });
}

}  // namespace icl::cli
