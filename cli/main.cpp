// `icl`: the command line of icl-theory. Subcommands register themselves (cli/commands.hpp);
// every failure ends here, in one place, as one line on stderr and an exit code:
//   CLI11 parse error (bad flag, out-of-range value)   -> 2
//   ExitError(code, message)                           -> code
//   icl::InvalidParams(field, message)                 -> 2, "invalid parameter <field>: <message>"
//   icl::NumericalError                                -> 3
//   anything else                                      -> 1
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "numerics/error.hpp"

namespace {

// The one error path of the program: the exception in flight as (message, exit code).
int report(CLI::App& app) {
  using namespace icl::cli;
  try {
    throw;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "icl: %s (see icl --help)\n", e.what());
    return kExitBadInput;
  } catch (const ExitError& e) {
    std::fprintf(stderr, "icl: %s\n", e.what());
    return e.code;
  } catch (const icl::InvalidParams& e) {
    // e.what() is "<field>: <message>".
    std::fprintf(stderr, "icl: invalid parameter %s\n", e.what());
    return kExitBadInput;
  } catch (const icl::NumericalError& e) {
    std::fprintf(stderr, "icl: %s\n", e.what());
    return kExitNotConverged;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "icl: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace icl::cli;
  set_command_line(argc, argv);
  icl::numerics::ensure_gsl_error_handler_off();
  CLI::App app{"icl: exact high-dimensional theory of in-context learning, with simulators"};
  app.set_version_flag("--version", std::string("icl ") + ICL_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  register_solve(app);
  register_sweep(app);
  register_simulate(app);
  register_patch(app);
  register_merge(app);
  register_figs(app);
  register_softmax(app);
  register_optimize(app);
  register_boundary(app);
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (...) {
    return report(app);
  }
  return kExitOk;
}
