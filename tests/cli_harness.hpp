// Running the `icl` program from tests: exit code, stdout, stderr, scratch folders that are
// removed when their test passes, and the checks several CLI tests share.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

namespace icl_test {

namespace fs = std::filesystem;

struct Run {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Failed assertions and unexpected exceptions in this process so far, counted by a doctest
// listener (registered once per program: every translation unit registers the same name).
inline int& failures_so_far() {
  static int n = 0;
  return n;
}

struct FailureCounter : doctest::IReporter {
  explicit FailureCounter(const doctest::ContextOptions&) {}
  void log_assert(const doctest::AssertData& a) override { failures_so_far() += a.m_failed; }
  void test_case_exception(const doctest::TestCaseException&) override { ++failures_so_far(); }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("icl_test_failure_counter", 1, FailureCounter);

// A scratch folder in the build tree, NAME_PID: ctest runs every test case as its own process,
// in parallel, so a shared folder would mix their files. Created empty; removed when it goes out
// of scope unless a check failed (or an exception is unwinding) meanwhile, in which case it is
// kept for diagnosis and its path printed on stderr.
class Scratch {
 public:
  explicit Scratch(const std::string& name = "cli_test_scratch")
      : dir_(fs::path(ICL_BINARY_DIR) / (name + "_" + std::to_string(::getpid()))),
        failures_(failures_so_far()) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (failures_so_far() > failures_ || std::uncaught_exceptions() > 0) {
      std::cerr << "kept the scratch folder of a failed test: " << dir_.string() << "\n";
      return;
    }
    std::error_code ec;  // never throw from a destructor
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }
  operator const fs::path&() const { return dir_; }
  fs::path operator/(const fs::path& p) const { return dir_ / p; }
  // DIR/NAME as a string, for command lines.
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
  int failures_;
};

// The folder of run_icl's stdout/stderr files when the test names none: one per process,
// removed at exit when nothing failed in the process.
inline const Scratch& default_scratch() {
  static const Scratch s;
  return s;
}

// `env` is prepended to the command line (e.g. "ICL_FIGS_PYTHON=/bin/false").
inline Run run_icl(const std::string& args, const fs::path& dir = default_scratch(),
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

// A run that must succeed (exit 0, REQUIRE) and print JSON on stdout: the parsed document, in
// its key order.
inline nlohmann::ordered_json run_json(const std::string& args, const fs::path& dir = default_scratch()) {
  CAPTURE(args);
  const Run r = run_icl(args, dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::ordered_json::parse(r.out);
}

// `args` + " --out FILE" must succeed and write FILE, a TSV of one header line starting with
// `header` and `rows` rows, and its JSON sidecar FILE.json (the layout of every TSV the program
// writes). Returns the TSV's text and the sidecar.
// The TSV as a header and rows of cells.
struct Tsv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(const std::string& name) const {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    FAIL("no column " << name);
    return 0;
  }
};

inline Tsv parse_tsv(const std::string& text) {
  Tsv t;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, '\t')) cells.push_back(cell);
    if (first) t.header = cells;
    else t.rows.push_back(cells);
    first = false;
  }
  return t;
}


struct TsvOutput {
  std::string tsv;
  nlohmann::json sidecar;
};
inline TsvOutput expect_tsv_output(const std::string& args, const std::string& file,
                                   const std::string& header, int rows) {
  CAPTURE(args);
  const Run r = run_icl(args + " --out " + file);
  INFO(r.err);
  REQUIRE(r.code == 0);
  TsvOutput t{slurp(file), nlohmann::json::parse(slurp(file + ".json"))};
  CHECK(count_lines(t.tsv) == 1 + rows);
  CHECK(t.tsv.rfind(header, 0) == 0);
  return t;
}

// The keys of a JSON object, in order.
inline std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

// A command line that must fail as bad input: exit 2, one line on stderr containing `needle`,
// nothing on stdout. Returns the run for further checks.
inline Run expect_bad_input(const std::string& args, const std::string& needle) {
  CAPTURE(args);
  const Run r = run_icl(args);
  CHECK(r.code == 2);
  CHECK(contains(r.err, needle));
  CHECK(count_lines(r.err) == 1);
  CHECK(r.out.empty());
  return r;
}

struct BadInput {
  const char* args;
  const char* needle;
};

// expect_bad_input for every case of a table.
inline void expect_bad_inputs(std::initializer_list<BadInput> cases) {
  for (const BadInput& c : cases) expect_bad_input(c.args, c.needle);
}

}  // namespace icl_test
