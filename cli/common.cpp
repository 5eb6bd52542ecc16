#include "cli/common.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <type_traits>
#include <iostream>
#include <limits>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "numerics/atomic_file.hpp"
#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/parallel.hpp"
#include "numerics/seed.hpp"
#include "theory/param_input.hpp"
#include "theory/sweep.hpp"

#ifndef ICL_VERSION
#define ICL_VERSION "unknown"
#endif

namespace icl::cli {
namespace {

std::string g_command_line;  // set once in main; read-only afterwards
std::vector<std::string> g_arguments;  // the same, one argument per element

std::string interval_text(double lo, double hi, bool lo_open, bool hi_open) {
  return std::string(lo_open ? "(" : "[") + numerics::format_significant(lo) + ", " +
         numerics::format_significant(hi) + (hi_open ? ")" : "]");
}

CLI::Validator range(double lo, double hi, bool lo_open, bool hi_open, const std::string& text) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        try {
          std::size_t pos = 0;
          v = std::stod(s, &pos);
          if (pos != s.size()) return "not a number: '" + s + "'";
        } catch (...) {
          return "not a number: '" + s + "'";
        }
        if (!std::isfinite(v)) return "must be finite, got '" + s + "'";
        if ((lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi))
          return "must be in " + text + ", got " + s;
        return {};
      },
      text);
}

}  // namespace

CLI::Validator real_range(double lo, double hi, bool lo_open, bool hi_open) {
  return range(lo, hi, lo_open, hi_open, interval_text(lo, hi, lo_open, hi_open));
}

CLI::Validator int_range(long lo, long hi) {
  const std::string text = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, text](std::string& s) -> std::string {
        long v = 0;
        try {
          std::size_t pos = 0;
          v = std::stol(s, &pos);
          if (pos != s.size()) return "not an integer: '" + s + "'";
        } catch (...) {
          return "not an integer: '" + s + "'";
        }
        if (v < lo || v > hi) return "must be in " + text + ", got " + s;
        return {};
      },
      text);
}

CLI::Option* add_dim_flag(CLI::App& app, int& dim, const std::string& help) {
  return app.add_option("--dim", dim, help)->check(int_range(kMinDim, kMaxDim))->capture_default_str();
}
CLI::Option* add_seeds_flag(CLI::App& app, int& seeds) {
  return app.add_option("--seeds", seeds, "independent seeds (mean and standard error over them)")
      ->check(int_range(1, 100000))->capture_default_str();
}
CLI::Option* add_seed_flag(CLI::App& app, std::uint64_t& seed) {
  // CLI11 reads "-1" into a uint64 as 2^64 - 1: a sign is refused here, with the range.
  const CLI::Validator unsigned_integer(
      [](std::string& s) -> std::string {
        if (!s.empty() && (s.front() == '-' || s.front() == '+'))
          return std::string(numerics::kSeedRange) + ", got '" + s + "'";
        return {};
      },
      "UINT64");
  return app.add_option("--seed", seed, "base seed (every random stream is derived from it)")
      ->check(unsigned_integer)->capture_default_str();
}
CLI::Option* add_threads_flag(CLI::App& app, int& threads, bool zero_means_all_cores) {
  return app
      .add_option("--threads", threads,
                  std::string("worker threads") + (zero_means_all_cores ? " (0 = all cores)" : "") +
                      "; results do not depend on it")
      ->check(int_range(zero_means_all_cores ? 0 : 1, numerics::kMaxThreads))
      ->capture_default_str();
}
CLI::Option* add_json_flag(CLI::App& app, bool& json) {
  return app.add_flag("--json", json, "print one JSON object");
}
CLI::Option* add_quiet_flag(CLI::App& app, bool& quiet) {
  return app.add_flag("--quiet", quiet, "no progress on stderr");
}
namespace {
// A CLI11 check made of a library rule that throws InvalidParams: its detail is the message.
CLI::Validator path_check(void (*rule)(const std::string&, const std::string&), const char* kind) {
  return CLI::Validator(
      [rule](std::string& s) -> std::string {
        try {
          rule(s, "out");
        } catch (const InvalidParams& e) {
          return e.detail();
        }
        return {};
      },
      kind);
}
}  // namespace

CLI::Validator output_file_check() {
  // numerics::prepare_output_file: the one rule for every file a command writes, applied while
  // the flags are parsed, before any computation (docs/cli.md "Shared flags").
  return path_check(&numerics::prepare_output_file, "FILE");
}

namespace {
// Empty, or why `path` is no name for a JSON output.
std::string json_output_name_problem(const std::string& path) {
  const bool csv = numerics::table_separator(path) == ',';
  const bool tsv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".tsv") == 0;
  if (!csv && !tsv) return {};
  return "'" + path + "' names a " + (tsv ? "TSV" : "CSV") + " table, but this output is JSON; "
         "name it .json";
}
}  // namespace

void check_json_output_name(const std::string& path) {
  const std::string problem = json_output_name_problem(path);
  if (!problem.empty()) throw ExitError(kExitBadInput, "--out " + problem);
}

CLI::Option* add_out_flag(CLI::App& app, std::string& path, const std::string& what,
                          OutFormat format) {
  auto* option = app.add_option("--out", path,
                                "write " + what + " to FILE (atomically) instead of stdout; a "
                                "missing folder is created")
                     ->check(output_file_check());
  if (format == OutFormat::Json)
    option->check(CLI::Validator([](std::string& p) { return json_output_name_problem(p); },
                                 "FILE", "json_name"));
  return option;
}
std::vector<const CLI::Option*> add_switch_flags(CLI::App& app, theory::FiniteDSwitches& switches,
                                                 const std::string& scope) {
  std::vector<const CLI::Option*> options;
  theory::visit_switches(switches, [&](const theory::SwitchInfo& info, auto& field) {
    std::string flag = std::string("--") + info.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const std::string help = std::string("finite-D source off (") + info.removes + "): " +
                             info.help + scope + " (docs/simulation.md §13.7)";
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
      options.push_back(app.add_flag(flag, field, help));
    } else {
      options.push_back(add_choice(
          app, flag, field, {theory::Assignment::Random, theory::Assignment::Balanced}, help));
    }
  });
  return options;
}

void FiniteDimFlags::add_to(CLI::App& app, const std::string& other) {
  other_ = other;
  dim_option_ = app.add_option("--finite-dim", dim,
                               "also the finite-D prediction at token dimension D (the D -> "
                               "infinity theory at the sizes of D plus the O(1/D) term of each "
                               "derived source, docs/finite_dim.md §21)")
                    ->type_name("D")
                    ->check(int_range(kMinDim, kMaxFiniteDim));
  const std::string scope =
      other.empty() ? ", in the prediction of --finite-dim"
                    : ", in the prediction of --finite-dim and in " + other;
  add_switch_flags(app, switches, scope);
}

std::optional<theory::FiniteDimOptions> FiniteDimFlags::options(bool other_given) const {
  const bool given = dim_option_ != nullptr && dim_option_->count() > 0;
  return theory::finite_dim_request(given ? std::optional<int>(dim) : std::nullopt, switches,
                                    other_given, other_.empty() ? "" : "the simulation (" + other_ + ")");
}

theory::FiniteDimResult FiniteDimFlags::solve(const theory::Params& p,
                                              const theory::FiniteDimOptions& options) {
  try {
    return theory::solve_finite_dim(p, options);
  } catch (const InvalidParams& e) {
    throw ExitError(kExitBadInput, "--finite-dim " + std::to_string(options.dim) +
                                       ": invalid parameter " + e.what());
  }
}

CLI::Option* add_out_dir_flag(CLI::App& app, std::string& dir, const std::string& what) {
  return app.add_option("--out", dir, "folder for " + what + " (created when missing)")
      ->type_name("DIR")->capture_default_str()
      ->check(path_check(&numerics::prepare_output_folder, "DIR"));
}

RangeSpec parse_range(const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return ExitError(kExitBadInput, flag + " '" + text + "': " + why + " (expected START:STOP:COUNT)");
  };
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ':');) parts.push_back(item);
  if (parts.size() != 3 || text.back() == ':') throw bad("need three fields");
  RangeSpec r;
  try {
    std::size_t p1 = 0, p2 = 0, p3 = 0;
    r.start = std::stod(parts[0], &p1);
    r.stop = std::stod(parts[1], &p2);
    const long n = std::stol(parts[2], &p3);
    if (p1 != parts[0].size() || p2 != parts[1].size() || p3 != parts[2].size())
      throw std::invalid_argument("trailing characters");
    if (n < 1 || n > 1000000) throw bad("COUNT must be in [1, 1000000]");
    r.count = static_cast<int>(n);
  } catch (const ExitError&) {
    throw;
  } catch (const std::exception&) {
    throw bad("not numbers");
  }
  if (!std::isfinite(r.start) || !std::isfinite(r.stop)) throw bad("START and STOP must be finite");
  if (r.count == 1 && r.start != r.stop) throw bad("COUNT 1 needs START == STOP");
  return r;
}

namespace {

// NAME of NAME=... with dashes for underscores (the library checks that it is a parameter and
// names its own field, as it does for Python).
std::string flag_param_name(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

NamedRange parse_named_range(const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return ExitError(kExitBadInput, flag + " '" + text + "': " + why +
                                        " (expected NAME=START:STOP:COUNT, e.g. alpha=0.5:8:40)");
  };
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw bad("missing '='");
  NamedRange g;
  g.name = flag_param_name(text.substr(0, eq));
  g.range = parse_range(text.substr(eq + 1), flag + " " + g.name);
  return g;
}

std::pair<double, double> parse_interval(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  const auto bad = [&] {
    return ExitError(kExitBadInput, flag + " '" + text + "': expected A:B with two numbers");
  };
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) throw bad();
  const auto number = [&](const std::string& s) {
    if (s.empty()) throw bad();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v)) throw bad();
    return v;
  };
  // The order (A < B) is the library's rule (InvalidParams naming lo or hi), as for Python.
  return {number(text.substr(0, colon)), number(text.substr(colon + 1))};
}

NamedInterval parse_named_interval(const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return ExitError(kExitBadInput, flag + " '" + text + "': " + why +
                                        " (expected NAME=START:STOP, e.g. rho=0.05:1)");
  };
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw bad("missing '='");
  NamedInterval g;
  g.name = flag_param_name(text.substr(0, eq));
  std::tie(g.lo, g.hi) = parse_interval(text.substr(eq + 1), flag + " " + g.name);
  return g;
}

std::vector<double> range_values(const RangeSpec& r, bool log, const std::string& flag) {
  if (log && !(r.start > 0 && r.stop > 0))
    throw ExitError(kExitBadInput, flag + ": a log grid needs START, STOP > 0");
  std::vector<double> v =
      log ? theory::logspace(r.start, r.stop, r.count) : theory::linspace(r.start, r.stop, r.count);
  // Snap to 12 significant digits, so that 0.1:1:10 gives 0.3 and 1 rather than
  // 0.30000000000000004 and 0.99999999999999989: the grid the user typed.
  for (double& x : v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", x);
    x = std::strtod(buf, nullptr);
  }
  return v;
}

void ParamFlags::add_to(CLI::App& app) {
  const double inf = std::numeric_limits<double>::infinity();
  auto* g = "Model parameters";
  app.add_option("--alpha", params.alpha, "context length L/D")
      ->check(range(0, inf, true, true, "(0, inf)"))->group(g)->capture_default_str();
  app.add_option("--alpha-test", alpha_test, "test context L_t/D (default: = alpha)")
      ->check(range(0, inf, true, true, "(0, inf)"))->group(g);
  auto* tau = app.add_option("--tau", params.tau, "sequences N/D^2")
                  ->check(range(0, inf, true, true, "(0, inf)"))->group(g)->capture_default_str();
  auto* gam = app.add_option("--gamma", gamma, "N/(M0 D) = tau/kappa (alternative to --tau)")
                  ->check(range(0, inf, true, true, "(0, inf)"))->group(g);
  tau->excludes(gam);
  app.add_option("--kappa", params.kappa, "tasks M0/D")
      ->check(range(0, inf, true, true, "(0, inf)"))->group(g)->capture_default_str();
  rho_options_.push_back(app.add_option("--rho", params.rho, "task rank r/D")
      ->check(range(0, 1, true, false, "(0, 1]"))->group(g)->capture_default_str());
  app.add_option("--sigma", params.sigma, "label-noise std (pretraining)")
      ->check(range(0, inf, false, true, "[0, inf)"))->group(g)->capture_default_str();
  app.add_option("--sigma-test", params.sigma_test, "label-noise std at test")
      ->check(range(0, inf, false, true, "[0, inf)"))->group(g)->capture_default_str();
  app.add_option("--lambda", params.lambda, "ridge (loss + lambda*M0*|Gamma|_F^2)")
      ->check(range(0, inf, false, true, "[0, inf)"))->group(g)->capture_default_str();
  app.add_option("--task-spectrum", task_spectrum,
                 "beyond the paper: population task spectrum, powerlaw:EXP:LEVELS | "
                 "complement:EPS (rho-fraction plus EPS-weaker rest; the one that takes "
                 "--rho) | t1:w1,t2:w2,... (weights sum to 1, mean eigenvalue 1); default: "
                 "the paper's rank-rho tasks")
      ->group(g);
  app.add_option("--test-overlap", test_overlap,
                 "beyond the paper: a shifted test protocol whose tasks put a fraction C of "
                 "their energy in the training subspace and the rest isotropically outside it "
                 "(1 = IDG, rho = ODG; low-rank tasks only)")
      ->check(range(0, 1, false, false, "[0, 1]"))->group(g);
  app.add_option("--test-levels", test_levels,
                 "beyond the paper: a shifted test protocol for a --task-spectrum: the test "
                 "covariance's eigenvalue on each level, in order (weighted mean 1)")
      ->delimiter(',')->group(g);
}

bool ParamFlags::rho_given() const {
  for (const CLI::Option* o : rho_options_)
    if (o->count() > 0) return true;
  return false;
}

theory::Params ParamFlags::resolve() const {
  // The input rules (gamma, alpha_test, the spectrum text, rho next to a spectrum) are the
  // library's (theory/param_input.hpp); InvalidParams goes to main(): exit 2.
  theory::ParamInput in;
  in.alpha = params.alpha;
  if (alpha_test > 0) in.alpha_test = alpha_test;
  if (gamma > 0) in.gamma = gamma;
  else in.tau = params.tau;
  in.kappa = params.kappa;
  if (rho_given()) in.rho = params.rho;
  in.sigma = params.sigma;
  in.sigma_test = params.sigma_test;
  in.lambda = params.lambda;
  if (!task_spectrum.empty()) in.task_spectrum_text = task_spectrum;
  in.test_overlap = test_overlap;
  in.test_levels = test_levels;
  return in.resolve();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  try {
    numerics::write_file_atomically(path, content);
  } catch (const std::runtime_error& e) {
    throw ExitError(kExitBadInput, e.what());
  }
}

namespace {
void emit_text(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
  } else {
    write_file_atomically(path, text);
  }
}
}  // namespace

void emit_json(const nlohmann::json& j, const std::string& path) { emit_text(j.dump(2) + "\n", path); }
void emit_json(const nlohmann::ordered_json& j, const std::string& path) {
  emit_text(j.dump(2) + "\n", path);
}

namespace {
// A failed write is exit 2 with the library's message, as write_file_atomically.
template <class F>
void writing(const F& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    throw ExitError(kExitBadInput, e.what());
  }
}
}  // namespace

TableStream::TableStream(const std::string& path, const std::vector<std::string>& columns)
    : path_(path), columns_(columns), separator_(numerics::table_separator(path)) {
  const std::string header = numerics::header_line(columns_, separator_);
  if (path_.empty() || path_ == "-") {
    std::cout << header;
    return;
  }
  writing([&] {
    file_.emplace(path_);
    file_->write(header);
  });
}

void TableStream::write(const std::vector<std::vector<double>>& rows, int threads) {
  std::string text;
  if (threads == 1) {
    for (const auto& row : rows) numerics::append_row_line(text, row, separator_);
  } else {
    std::vector<std::string> lines(rows.size());
    numerics::parallel_for(rows.size(), threads, [&](std::size_t i) {
      numerics::append_row_line(lines[i], rows[i], separator_);
    });
    std::size_t size = 0;
    for (const auto& line : lines) size += line.size();
    text.reserve(size);
    for (const auto& line : lines) text += line;
  }
  if (file_) writing([&] { file_->write(text); });
  else std::cout << text << std::flush;
}

void TableStream::finish(const nlohmann::json& meta) {
  if (!file_) return;
  nlohmann::json side = meta;
  side["version"] = ICL_VERSION;
  side["command"] = command_line();
  side["columns"] = columns_;
  writing([&] { file_->commit(); });
  file_.reset();
  write_file_atomically(path_ + ".json", side.dump(2) + "\n");
}

void emit_tsv(const Table& table, const std::string& path, const nlohmann::json& meta) {
  TableStream out(path, table.columns);
  out.write(table.rows);
  out.finish(meta);
}

void progress(const std::string& what, std::size_t done, std::size_t total) {
  // On a terminal: one line updated in place. Elsewhere (a log file, a pipe): a full line at
  // most every 5 s per stage, plus its last one, so that logs stay short. Calls are serialized
  // (numerics::Progress), so the state below is only touched by one thread at a time.
  static const bool terminal = ::isatty(STDERR_FILENO) != 0;
  static std::string last_what;
  static std::chrono::steady_clock::time_point last_line{};
  const bool finished = done == total;
  if (terminal) {
    std::fprintf(stderr, "\r[%s] %zu/%zu", what.c_str(), done, total);
    if (finished) std::fprintf(stderr, "\n");
  } else {
    const auto now = std::chrono::steady_clock::now();
    if (!finished && what == last_what && now - last_line < std::chrono::seconds(5)) return;
    std::fprintf(stderr, "[%s] %zu/%zu\n", what.c_str(), done, total);
    last_what = what;
    last_line = now;
  }
  std::fflush(stderr);
}

const std::string& command_line() { return g_command_line; }
void set_command_line(int argc, char** argv) {
  std::string s;
  g_arguments.clear();
  // --resume changes how a run gets its result, not the result: a resumed run records the
  // command of an uninterrupted one, so that their sidecars are identical.
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--resume") continue;
    s += (s.empty() ? "" : " ") + std::string(argv[i]);
    g_arguments.emplace_back(argv[i]);
  }
  g_command_line = s;
}

std::string resume_command() {
  std::string out;
  for (const std::string& a : g_arguments) {
    const bool plain = !a.empty() && a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
                                                         "opqrstuvwxyz0123456789_./:=,+-@%") ==
                                         std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? a : quoted + "'");
  }
  return out + " --resume";
}

}  // namespace icl::cli
