// The plot step of the paper figures: locating plot_<name>.py and running it.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "paper_figs/figures.hpp"

#ifndef ICL_FIGS_SOURCE_DIR
#define ICL_FIGS_SOURCE_DIR ""
#endif
#ifndef ICL_FIGS_INSTALL_DIR
#define ICL_FIGS_INSTALL_DIR ""
#endif

namespace icl::paperfigs {

std::vector<std::string> script_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ICL_FIGS_SCRIPTS"); env && *env) dirs.emplace_back(env);
  if (*ICL_FIGS_SOURCE_DIR) dirs.emplace_back(ICL_FIGS_SOURCE_DIR);
  if (*ICL_FIGS_INSTALL_DIR) dirs.emplace_back(ICL_FIGS_INSTALL_DIR);
  return dirs;
}

std::string locate_script(const std::string& script) {
  namespace fs = std::filesystem;
  for (const auto& d : script_search_path()) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(d) / script, ec)) return d;
  }
  return "";
}

std::string plot_python() {
  if (const char* env = std::getenv("ICL_FIGS_PYTHON"); env && *env) return env;
  return "/usr/bin/python3";
}

namespace {
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}
}  // namespace

int run_plot_script(const std::string& script_path, const std::string& out_dir) {
  std::fflush(stdout);
  std::fflush(stderr);
  const std::string cmd =
      shell_quote(plot_python()) + " " + shell_quote(script_path) + " " + shell_quote(out_dir);
  const int status = std::system(cmd.c_str());
  if (status == -1) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace icl::paperfigs
