// Shared pieces of the `icl` program: the parameter flags, exit codes, and output helpers
// (numbers with max_digits10, TSV with one header line, JSON sidecars, atomic file writes).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numerics/atomic_file.hpp"
#include "numerics/table.hpp"
#include "theory/finite_dim.hpp"
#include "theory/params.hpp"

namespace icl::cli {

// Exit codes (docs/cli.md): 0 ok, 2 bad input, 3 non-convergence / failed
// comparison, 4 out of memory; main() maps every exception to one of them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNotConverged = 3;
inline constexpr int kExitOutOfMemory = 4;

// Thrown by commands to end the program with a message on stderr and an exit code. (An
// icl::InvalidParams from a library needs no wrapping: main() prints it and exits 2.)
struct ExitError : std::runtime_error {
  ExitError(int code, const std::string& message) : std::runtime_error(message), code(code) {}
  int code;
};

// Shared parameter flags: --alpha --alpha-test --tau|--gamma --kappa --rho --sigma
// --sigma-test --lambda with range checks (a bad value is exit 2 naming the flag and range).
struct ParamFlags {
  theory::Params params;
  double gamma = -1;        // set when --gamma is given
  double alpha_test = -1;   // set when --alpha-test is given
  std::string task_spectrum;  // --task-spectrum (beyond the paper), see add_to()
  std::optional<double> test_overlap;  // --test-overlap C (beyond the paper)
  std::vector<double> test_levels;     // --test-levels t1,t2,... (with --task-spectrum)
  void add_to(CLI::App& app);
  // The Params after the flags are parsed, by theory::ParamInput::resolve() (gamma -> tau,
  // alpha_test, the task spectrum text, an explicit --rho next to a spectrum that does not use
  // it): an invalid input throws icl::InvalidParams naming the field (main(): exit 2).
  theory::Params resolve() const;

 private:
  std::vector<const CLI::Option*> rho_options_;  // --rho of every subcommand sharing the flags
  bool rho_given() const;
};


// ---- Flags shared by several subcommands, each declared once here (name, range, help) --------
// Readable range validators (CLI11's PositiveNumber prints DBL_MAX in full).
CLI::Validator int_range(long lo, long hi);
CLI::Validator real_range(double lo, double hi, bool lo_open, bool hi_open);
inline constexpr int kMinDim = 2, kMaxDim = 2000;  // --dim, the same range for every command
CLI::Option* add_dim_flag(CLI::App& app, int& dim, const std::string& help = "token dimension D");
CLI::Option* add_seeds_flag(CLI::App& app, int& seeds);           // --seeds S, 1..100000
CLI::Option* add_seed_flag(CLI::App& app, std::uint64_t& seed);   // --seed S (base seed)
// --threads N, 1..256 (0..256 with zero_means_all_cores)
CLI::Option* add_threads_flag(CLI::App& app, int& threads, bool zero_means_all_cores = false);
CLI::Option* add_json_flag(CLI::App& app, bool& json);            // --json
CLI::Option* add_quiet_flag(CLI::App& app, bool& quiet);          // --quiet (no progress)
// --out FILE: the command's result (`what`: "the JSON", "the TSV table (+ JSON sidecar)")
// written atomically to FILE instead of stdout. Every --out is a file except `icl figs`'s.
// What --out receives: JSON (a .csv or .tsv name is refused while parsing: a table was meant),
// a table (TSV, or CSV for a .csv name, numerics::table_separator), or either as other flags
// decide (the command calls check_json_output_name before its work when it writes JSON).
enum class OutFormat { Json, Table, JsonOrTable };
CLI::Option* add_out_flag(CLI::App& app, std::string& path, const std::string& what,
                          OutFormat format);
// Exit 2 for a --out name that says table (.csv, .tsv) where JSON is written.
void check_json_output_name(const std::string& path);
// The check of every output-file flag (--out, --save): numerics::prepare_output_file.
CLI::Validator output_file_check();
// --out DIR: the one folder-valued --out (`icl figs`: one TSV + sidecar, PDF and PNG per
// figure); created when missing.
CLI::Option* add_out_dir_flag(CLI::App& app, std::string& dir, const std::string& what);

// An option whose value is one of `values`, spelled as the library spells them (to_string of
// the enumeration, found by argument-dependent lookup: the library's one name table), written
// into `field` as it is parsed; the help lists the names and the current value of `field`.
template <class E>
CLI::Option* add_choice(CLI::App& app, const std::string& flag, E& field,
                        const std::vector<E>& values, const std::string& help) {
  std::vector<std::string> names;
  for (const E value : values) names.push_back(to_string(value));
  return app
      .add_option_function<std::string>(
          flag,
          [&field, values](const std::string& s) {
            for (const E value : values)
              if (s == to_string(value)) field = value;
          },
          help)
      ->check(CLI::IsMember(names))
      ->type_name("NAME")
      ->default_str(to_string(field));
}

// The finite-D switches (theory/finite_d_switches.hpp, docs/simulation.md §13.7): one flag per
// switch of theory::visit_switches (--sphere-queries, --fixed-norm-tasks, --assignment
// random|balanced, --gaussian-context), writing into `switches`; `scope` is appended to the
// help (e.g. " in every simulation"). Returns the options, for "was it given".
std::vector<const CLI::Option*> add_switch_flags(CLI::App& app, theory::FiniteDSwitches& switches,
                                                 const std::string& scope = "");

// --finite-dim D (2..kMaxFiniteDim) and the switches: the finite-D prediction of
// docs/finite_dim.md §21 (theory::solve_finite_dim) next to a theory result.
inline constexpr int kMaxFiniteDim = 1000000;  // beyond, the corrections are below 1e-6 x slope
struct FiniteDimFlags {
  int dim = 0;
  theory::FiniteDSwitches switches;
  // `other`: a flag the switches may come with instead of --finite-dim (icl sweep: --simulate,
  // where they also apply to the simulation); empty: the switches need --finite-dim.
  void add_to(CLI::App& app, const std::string& other = "");
  // theory::finite_dim_request: the options when --finite-dim is given, else nullopt; a switch
  // without --finite-dim (nor `other` when `other_given`) is refused by the library.
  std::optional<theory::FiniteDimOptions> options(bool other_given = false) const;
  // solve_finite_dim, with its refusal of the point (the interpolation peak lambda = 0, tau = 1
  // at the sizes of D) as an ExitError(2) naming --finite-dim and the field.
  static theory::FiniteDimResult solve(const theory::Params& p,
                                       const theory::FiniteDimOptions& options);

 private:
  const CLI::Option* dim_option_ = nullptr;
  std::string other_;
};

// START:STOP:COUNT, inclusive, COUNT in [1, 1000000]; the one range syntax of every command.
struct RangeSpec {
  double start = 0, stop = 0;
  int count = 0;
};
RangeSpec parse_range(const std::string& text, const std::string& flag);
// NAME=START:STOP:COUNT, NAME with dashes for underscores (whether it is a parameter is the
// library's check, naming its own field).
struct NamedRange {
  std::string name;
  RangeSpec range;
};
NamedRange parse_named_range(const std::string& text, const std::string& flag);
// A:B with two finite numbers (icl optimize --range; A < B is the library's check).
std::pair<double, double> parse_interval(const std::string& text, const std::string& flag);
// NAME=A:B, NAME as in parse_named_range (icl boundary --x).
struct NamedInterval {
  std::string name;
  double lo = 0, hi = 0;
};
NamedInterval parse_named_interval(const std::string& text, const std::string& flag);
// The grid of a range: linear, or geometric (`log`, needs START, STOP > 0).
std::vector<double> range_values(const RangeSpec& r, bool log, const std::string& flag);

// Full-precision numbers and the one table type live in numerics/table.hpp.
using numerics::format_number;
using numerics::Table;

// Write `content` to `path` atomically (temp file in the same folder + rename); a failed
// write leaves any earlier file untouched. Throws ExitError(2) on failure.
void write_file_atomically(const std::string& path, const std::string& content);

// Either to stdout (path empty or "-") or atomically to a file; for a TSV file also writes the
// JSON sidecar `path.json` with version, command line and `meta`.
void emit_tsv(const Table& table, const std::string& path, const nlohmann::json& meta);

// A table written as its rows complete (icl phase), so that memory does not grow with it: to
// stdout when path is "" or "-", else to `path` through numerics::AtomicFileWriter (the target
// appears, with its sidecar, only at finish(); a run that stops leaves the earlier file as it
// was). TSV, or CSV for a name ending in .csv (numerics::table_separator), as emit_tsv.
class TableStream {
 public:
  TableStream(const std::string& path, const std::vector<std::string>& columns);
  // Appends the rows; with threads != 1 their text is formatted on that many threads (0: every
  // core; numerics::parallel_for), the same text in the same order: the numbers of a large grid
  // cost about as much to format as to solve.
  void write(const std::vector<std::vector<double>>& rows, int threads = 1);
  void finish(const nlohmann::json& meta);

 private:
  std::string path_;
  std::vector<std::string> columns_;
  char separator_;
  std::optional<numerics::AtomicFileWriter> file_;
};
void emit_json(const nlohmann::json& j, const std::string& path);
// Keys in insertion order (the documented order of `icl solve --json`).
void emit_json(const nlohmann::ordered_json& j, const std::string& path);

// Progress line on stderr ("[name] i/n ...") for long runs.
void progress(const std::string& what, std::size_t done, std::size_t total);

// The command line as typed, less --resume (for sidecars).
const std::string& command_line();
void set_command_line(int argc, char** argv);
// The command that continues this run from its checkpoint: the arguments as given (each quoted
// for a POSIX shell where needed), without --resume, then --resume.
std::string resume_command();

}  // namespace icl::cli
