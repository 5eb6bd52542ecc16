// `icl`: the command line of icl-theory. Subcommands register themselves (cli/commands.hpp);
// every failure ends here, in one place, as one line on stderr and an exit code:
//   CLI11 parse error (bad flag, out-of-range value)   -> 2
//   ExitError(code, message)                           -> code
//   icl::InvalidParams(field, message)                 -> 2, "invalid parameter <field>: <message>"
//   icl::NumericalError                                -> 3
//   anything else                                      -> 1
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "numerics/error.hpp"
#include "numerics/memory.hpp"
#include "numerics/suggest.hpp"

namespace {

// "Did you mean": walks the command line as CLI11 does (subcommand names, then flags) and, for
// the first word that is neither a subcommand of the command reached nor a flag of it or of its
// parents, names the closest one (numerics::closest_name). "" when every word is known.
std::string suggestion(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  const auto flags_of = [](const CLI::App* a) {
    std::vector<std::string> names;
    for (; a != nullptr; a = a->get_parent())
      for (const CLI::Option* o : a->get_options())
        for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    return names;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) == 0) {
      const std::string flag = word.substr(0, word.find('='));
      const auto names = flags_of(at);
      if (std::find(names.begin(), names.end(), flag) == names.end()) {
        const std::string hint = icl::numerics::did_you_mean(flag, names);
        std::string command;
        for (const CLI::App* a = at; a != &app; a = a->get_parent()) command = " " + a->get_name() + command;
        return "unknown flag '" + flag + "' for 'icl" + command + "'" + hint;
      }
      continue;
    }
    if (word.empty() || word.front() == '-') continue;
    std::vector<std::string> subs;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      subs.push_back(sub->get_name());
    if (subs.empty()) continue;  // a value or a positional argument
    if (std::find(subs.begin(), subs.end(), word) != subs.end()) {
      at = at->get_subcommand(word);
      continue;
    }
    // Only where a subcommand is expected: right after the command that has them.
    const std::string prev = argv[i - 1];
    if (i == 1 || prev == at->get_name())
      return "unknown command '" + word + "'" + icl::numerics::did_you_mean(word, subs);
  }
  return {};
}

// The available memory as text ("unknown" when it cannot be read).
std::string available_now() {
  const auto m = icl::numerics::available_memory();
  return m ? icl::numerics::format_bytes(double(m->bytes)) + " available now, " + m->source
           : "available memory unknown";
}

// The one error path of the program: the exception in flight as (message, exit code).
int report(CLI::App& app, int argc, char** argv) {
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
    // CLI11 says "A subcommand is required" for `icl solvee` and "not expected" for `--alpah`:
    // the word that was not recognized, with the closest name, is the useful message.
    if (const std::string hint = suggestion(app, argc, argv); !hint.empty()) {
      std::fprintf(stderr, "icl: %s (see icl --help)\n", hint.c_str());
      return kExitBadInput;
    }
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
  } catch (const std::bad_alloc&) {
    // Sizes the library estimates are refused before any work (exit 2, docs/cli.md "Memory and
    // size"); this is an allocation nothing estimated, or memory taken by other programs since.
    std::fprintf(stderr, "icl: out of memory: an allocation failed (%s); use a "
                         "smaller size, fewer --threads, or free memory\n",
                 available_now().c_str());
    return kExitOutOfMemory;
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
  register_cot(app);
  register_depth(app);
  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (...) {
    return report(app, argc, argv);
  }
  return kExitOk;
}
