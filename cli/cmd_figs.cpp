// icl figs: the paper figures. For each figure, the data step (paper_figs/figures*.cpp, in
// process) writes DIR/<stem>.tsv + sidecars, then the plot step runs
// /usr/bin/python3 paper_figs/plot_<name>.py DIR, which writes DIR/<name>.pdf and .png.
// `--out DIR` is the one folder-valued --out of the program.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/checkpoint.hpp"
#include "cli/common.hpp"
#include "paper_figs/figures.hpp"

namespace icl::cli {
namespace {

namespace pf = icl::paperfigs;
namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print_list() {
  std::printf("%-3s %-14s %-18s %s\n", "#", "name", "paper", "description");
  for (const auto& f : pf::registry())
    std::printf("%-3d %-14s %-18s %s\n", f.number, f.name.c_str(), f.paper.c_str(),
                f.description.c_str());
}

// Top-level "D" and "seeds" in each sidecar (from the simulation part of the meta, if any). A
// low-rank table without a simulation is the D -> infinity theory; the implicit-dynamics
// figures have no D at all.
void add_dimension_keys(nlohmann::json& meta, const std::string& paper) {
  for (const char* key : {"simulation", "gd"})
    if (meta.contains(key) && meta[key].is_object() && meta[key].contains("dim")) {
      meta["D"] = meta[key]["dim"];
      if (meta[key].contains("seeds")) meta["seeds"] = meta[key]["seeds"];
      return;
    }
  if (paper != "implicit-dynamics") meta["D"] = "infinity (theory)";
}

// A kept figure is reused only while the files it wrote are still there.
bool kept_files_exist(const nlohmann::json& kept) {
  if (!kept.contains("files") || !kept["files"].is_array()) return false;
  for (const auto& file : kept["files"])
    if (!file.is_string() || !fs::is_regular_file(file.get<std::string>())) return false;
  return kept.contains("data_seconds") && kept.contains("plot_seconds") &&
         kept.contains("failed_theory_points");
}

struct Outcome {
  std::string name;
  bool data_ok = false, plot_ok = false;
  double data_seconds = 0, plot_seconds = 0;
  std::size_t failed_theory_points = 0;
  std::vector<std::string> files;
  std::string message;
};

// The options of `icl figs` (the defaults of the data steps are pf::Settings's).
struct FigsOptions {
  std::vector<std::string> names;
  bool list = false, quick = false, no_plot = false, plot_only = false, quiet = false,
       resume = false;
  std::string out = "figures";
  int threads = pf::Settings{}.threads;
  std::uint64_t seed = pf::Settings{}.base_seed;
  bool ok(const Outcome& oc) const { return oc.data_ok && (no_plot || oc.plot_ok); }
};

// The figures named on the command line (names, numbers or 'all'), each once, in the order given.
std::vector<const pf::Figure*> select_figures(const std::vector<std::string>& names) {
  std::vector<const pf::Figure*> todo;
  const auto add = [&](const pf::Figure* f) {
    if (std::find(todo.begin(), todo.end(), f) == todo.end()) todo.push_back(f);
  };
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& f : pf::registry()) add(&f);
      continue;
    }
    const pf::Figure* f = pf::find_figure(n);
    if (!f) {
      std::string known;
      for (const auto& g : pf::registry()) known += (known.empty() ? "" : ", ") + g.name;
      throw ExitError(kExitBadInput, "figs: unknown figure '" + n + "' (one of " + known +
                                         ", a number 1-" +
                                         std::to_string(pf::registry().size()) + ", or all)");
    }
    add(f);
  }
  return todo;
}

// The figure's settings: the command line's, and the canonical command recorded in its sidecars.
pf::Settings settings_for(const pf::Figure& f, const FigsOptions& opt) {
  pf::Settings s;
  s.quick = opt.quick;
  s.threads = opt.threads;
  s.base_seed = opt.seed;
  s.command = "icl figs " + f.name + (opt.quick ? " --quick" : "") +
              (opt.seed != pf::Settings{}.base_seed ? " --seed " + std::to_string(opt.seed) : "");
  return s;
}

// A figure kept by an earlier run (--resume), while the files it wrote are still there.
std::optional<Outcome> kept_outcome(const pf::Figure& f, const Checkpoint& checkpoint) {
  const auto kept = checkpoint.load(f.name);
  if (!kept || !kept_files_exist(*kept)) return std::nullopt;
  Outcome oc;
  oc.name = f.name;
  oc.data_ok = oc.plot_ok = true;
  oc.data_seconds = kept->at("data_seconds").get<double>();
  oc.plot_seconds = kept->at("plot_seconds").get<double>();
  oc.failed_theory_points = kept->at("failed_theory_points").get<std::size_t>();
  oc.files = kept->at("files").get<std::vector<std::string>>();
  return oc;
}

// The data step: DIR/<stem>.tsv + sidecar per table. A failing step is reported in the outcome.
void data_step(const pf::Figure& f, const FigsOptions& opt, Outcome& oc) {
  const auto t0 = std::chrono::steady_clock::now();
  numerics::Progress report;
  if (!opt.quiet)
    report = [name = f.name](std::size_t d, std::size_t n, const std::string& what) {
      progress(what.rfind(name, 0) == 0 ? what : name + ": " + what, d, n);
    };
  try {
    const pf::FigureData data = f.data(settings_for(f, opt), report);
    for (const auto& t : data.tables) {
      nlohmann::json meta = t.meta;
      add_dimension_keys(meta, f.paper);
      const std::string path = (fs::path(opt.out) / (t.stem + ".tsv")).string();
      emit_tsv(t.table, path, meta);
      oc.files.push_back(path);
    }
    oc.failed_theory_points = data.failed_theory_points;
    oc.data_ok = true;
  } catch (const ExitError&) {
    throw;
  } catch (const std::exception& e) {
    oc.message = std::string("data step failed: ") + e.what();
  }
  oc.data_seconds = seconds_since(t0);
  if (oc.failed_theory_points)
    std::fprintf(stderr,
                 "[figs] %s: %zu theory points did not converge (nan, converged = 0; "
                 "marked in the plot)\n",
                 f.name.c_str(), oc.failed_theory_points);
}

// The plot step: plot_<name>.py DIR writes DIR/<name>.pdf and .png.
void plot_step(const pf::Figure& f, const std::string& out, Outcome& oc) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string dir = pf::locate_script(f.script());
  if (dir.empty()) {
    std::string path;
    for (const auto& d : pf::script_search_path()) path += (path.empty() ? "" : ", ") + d;
    oc.message = "plot script " + f.script() + " not found (searched: " + path +
                 "; set ICL_FIGS_SCRIPTS)";
  } else {
    const std::string script = (fs::path(dir) / f.script()).string();
    const int rc = pf::run_plot_script(script, out);
    const fs::path pdf = fs::path(out) / (f.name + ".pdf");
    const fs::path png = fs::path(out) / (f.name + ".png");
    if (rc != 0) {
      oc.message = pf::plot_python() + " " + script + " exited with status " + std::to_string(rc);
    } else if (!fs::is_regular_file(pdf) || !fs::is_regular_file(png)) {
      oc.message = script + " did not write " + pdf.string() + " and " + png.string();
    } else {
      oc.plot_ok = true;
      oc.files.push_back(pdf.string());
      oc.files.push_back(png.string());
    }
  }
  oc.plot_seconds = seconds_since(t0);
}

// One figure: kept from an earlier run, or its data and plot steps (kept in the checkpoint when
// they succeed).
Outcome make_figure(const pf::Figure& f, const FigsOptions& opt, const Checkpoint& checkpoint) {
  if (auto kept = kept_outcome(f, checkpoint)) {
    if (!opt.quiet)
      std::fprintf(stderr, "[figs] %s: done earlier (kept in %s)\n", f.name.c_str(),
                   checkpoint.folder().c_str());
    return std::move(*kept);
  }
  if (!opt.quiet)
    std::fprintf(stderr, "[figs] %d %s (%s): %s\n", f.number, f.name.c_str(),
                 opt.quick ? "quick" : "full", f.description.c_str());
  Outcome oc;
  oc.name = f.name;
  if (opt.plot_only) oc.data_ok = true;
  else data_step(f, opt, oc);
  if (oc.data_ok && !opt.no_plot) plot_step(f, opt.out, oc);
  const bool ok = opt.ok(oc);
  if (!ok || !opt.quiet)
    std::fprintf(stderr, "[figs] %s: %s (data %.1f s, plot %.1f s)%s%s\n", f.name.c_str(),
                 ok ? "done" : "FAILED", oc.data_seconds, oc.plot_seconds,
                 oc.message.empty() ? "" : ": ", oc.message.c_str());
  if (ok)
    checkpoint.save(f.name, {{"data_seconds", oc.data_seconds},
                             {"plot_seconds", oc.plot_seconds},
                             {"failed_theory_points", oc.failed_theory_points},
                             {"files", oc.files}});
  return oc;
}

// DIR/figs_run.json: the run summary next to the figures (timings, failures).
void write_summary(const FigsOptions& opt, const std::vector<Outcome>& outcomes, double seconds) {
  nlohmann::ordered_json summary;
  summary["command"] = command_line();
  summary["mode"] = opt.quick ? "quick" : "full";
  summary["threads"] = opt.threads;
  summary["seconds"] = seconds;
  summary["figures"] = nlohmann::ordered_json::array();
  for (const auto& oc : outcomes)
    summary["figures"].push_back({{"name", oc.name},
                                  {"ok", opt.ok(oc)},
                                  {"data_seconds", oc.data_seconds},
                                  {"plot_seconds", oc.plot_seconds},
                                  {"failed_theory_points", oc.failed_theory_points},
                                  {"files", oc.files},
                                  {"message", oc.message}});
  write_file_atomically((fs::path(opt.out) / "figs_run.json").string(), summary.dump(2) + "\n");
}

void run_figs(const FigsOptions& opt) {
  if (opt.list) {
    print_list();
    return;
  }
  if (opt.names.empty())
    throw ExitError(kExitBadInput,
                    "figs: name figures (e.g. decomposition or 1), 'all', or --list");
  if (opt.no_plot && opt.plot_only)
    throw ExitError(kExitBadInput, "figs: --no-plot and --plot-only exclude each other");
  const std::vector<const pf::Figure*> todo = select_figures(opt.names);
  std::error_code ec;
  fs::create_directories(opt.out, ec);
  if (ec || !fs::is_directory(opt.out))
    throw ExitError(kExitBadInput, "figs: cannot create output folder " + opt.out +
                                       (ec ? ": " + ec.message() : ""));

  // Each finished figure is kept in DIR.partial/ (--resume skips it); a figure depends only on
  // these options and its name (its simulations draw seeds derived from --seed).
  const Checkpoint checkpoint(opt.out,
                              {{"quick", opt.quick}, {"seed", opt.seed},
                               {"no_plot", opt.no_plot}, {"plot_only", opt.plot_only}},
                              opt.resume);
  std::vector<Outcome> outcomes;
  const auto t_all = std::chrono::steady_clock::now();
  for (const pf::Figure* f : todo) outcomes.push_back(make_figure(*f, opt, checkpoint));
  write_summary(opt, outcomes, seconds_since(t_all));
  checkpoint.remove();  // the run is complete (failed figures are rerun by name)
  for (const auto& oc : outcomes)
    for (const auto& file : oc.files) std::printf("%s\n", file.c_str());
  const auto failed = std::count_if(outcomes.begin(), outcomes.end(),
                                    [&](const Outcome& oc) { return !opt.ok(oc); });
  if (failed > 0)
    throw ExitError(1, "figs: " + std::to_string(failed) + " of " +
                           std::to_string(outcomes.size()) + " figures failed (see above)");
}

}  // namespace

void register_figs(CLI::App& app) {
  auto opt = std::make_shared<FigsOptions>();
  auto* figs = app.add_subcommand(
      "figs", "Paper figures: data (TSV + JSON sidecar) and plot (PDF + PNG) per figure");
  figs->add_option("names", opt->names, "figure names or numbers, or 'all' (see --list)");
  figs->add_flag("--list", opt->list, "list the figures (number, name, paper, description)");
  figs->add_flag("--quick", opt->quick, "small D, 2 seeds, coarse grids (CI; a few minutes for all)");
  add_out_dir_flag(*figs, opt->out, "the figures: per figure TSVs + sidecars, PDF and PNG");
  add_threads_flag(*figs, opt->threads);
  add_seed_flag(*figs, opt->seed);
  figs->add_flag("--no-plot", opt->no_plot, "data step only (TSV + sidecars)");
  figs->add_flag("--plot-only", opt->plot_only, "plot step only, from the TSVs already in --out");
  add_quiet_flag(*figs, opt->quiet);
  add_resume_flag(*figs, opt->resume);
  figs->callback([opt] { run_figs(*opt); });
}

}  // namespace icl::cli
