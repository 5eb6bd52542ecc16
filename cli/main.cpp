// `icl`: the command line of icl-theory. Subcommands register themselves (cli/commands.hpp).
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "numerics/error.hpp"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One readable line; exit 2 for any malformed command line.
    std::fprintf(stderr, "icl: %s (see icl --help)\n", e.what());
    return kExitBadInput;
  } catch (const ExitError& e) {
    std::fprintf(stderr, "icl: %s\n", e.what());
    return e.code;
  } catch (const icl::InvalidParams& e) {
    std::fprintf(stderr, "icl: invalid parameter %s\n", e.what());
    return kExitBadInput;
  } catch (const icl::NumericalError& e) {
    std::fprintf(stderr, "icl: %s\n", e.what());
    return kExitNotConverged;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "icl: error: %s\n", e.what());
    return 1;
  }
  return kExitOk;
}
