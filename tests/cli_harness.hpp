// Running the `icl` program from tests: exit code, stdout, stderr.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace icl_test {

struct Run {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch folder in the build tree, one per test process: ctest runs every test case as its
// own process, in parallel, so a shared folder would mix their stdout/stderr files.
inline std::filesystem::path scratch(const std::string& name = "cli_test_scratch") {
  const std::filesystem::path d =
      std::filesystem::path(ICL_BINARY_DIR) / (name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// `env` is prepended to the command line (e.g. "ICL_FIGS_PYTHON=/bin/false").
inline Run run_icl(const std::string& args, const std::filesystem::path& dir = scratch(),
                   const std::string& env = "") {
  const std::string cmd = env + (env.empty() ? "" : " ") + std::string(ICL_EXE) + " " + args +
                          " >" + (dir / "stdout").string() + " 2>" + (dir / "stderr").string();
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "stdout");
  r.err = slurp(dir / "stderr");
  return r;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A command line that must fail as bad input: exit 2, one line on stderr containing `needle`,
// nothing on stdout. Returns the run for further checks.
inline Run expect_bad_input(const std::string& args, const std::string& needle) {
  CAPTURE(args);
  const Run r = run_icl(args);
  CHECK(r.code == 2);
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.out.empty());
  return r;
}

// A bad command line and the text its one-line message must contain.
struct BadInput {
  const char* args;
  const char* needle;
};
inline void expect_bad_inputs(std::initializer_list<BadInput> cases) {
  for (const BadInput& b : cases) expect_bad_input(b.args, b.needle);
}

}  // namespace icl_test
