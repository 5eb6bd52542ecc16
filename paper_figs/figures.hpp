// Paper figures: one registry entry per figure (name, description, data step, plot script).
//
// The data step is in-process C++ calling the library (theory sweeps, phase grids, the finite-D
// simulator); it returns tables that the caller writes as DIR/<stem>.tsv with a JSON sidecar.
// The plot step is paper_figs/plot_<name>.py run by Debian's /usr/bin/python3 (matplotlib),
// reading those TSVs and writing DIR/<name>.pdf and DIR/<name>.png.
//
// Adding a figure = adding one entry to the table in figures.cpp (and its plot script); the
// figures, numbered 1-18 (13-16 and 18: beyond the papers; 17: the patch on modern blocks), are
// described in paper_figs/README.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numerics/progress.hpp"
#include "numerics/table.hpp"

namespace icl::paperfigs {

// One TSV file: DIR/<stem>.tsv with exactly one header line (`table`); `meta` goes to the
// sidecar (parameters, dimension D, seeds, grids, what failed). A failed theory point keeps its
// row with nan values and converged = 0.
struct DataTable {
  std::string stem;
  numerics::Table table;
  nlohmann::json meta = nlohmann::json::object();
};

struct Settings {
  bool quick = false;               // small D, few seeds, coarse grids (CI)
  int threads = 2;                  // simulator seeds / phase grid workers
  std::uint64_t base_seed = 20251;  // every simulated point derives its own seed from it
  std::string command;              // canonical command for this figure ("icl figs NAME ...")
};

struct FigureData {
  std::vector<DataTable> tables;
  std::size_t failed_theory_points = 0;  // converged = 0 rows over all tables (reported, not fatal)
};

// progress(done, total, what) of the long steps; may be empty.
using DataStep = std::function<FigureData(const Settings&, const numerics::Progress& progress)>;

struct Figure {
  int number = 0;            // figure number (paper_figs/README.md)
  std::string name;          // DIR/<name>.pdf, plot_<name>.py
  std::string paper;         // "low-rank" | "softmax" | "implicit-dynamics" | "beyond-the-papers"
  std::string description;   // one line
  DataStep data;             // every figure has one
  std::string script() const { return "plot_" + name + ".py"; }
};

// All figures in number order.
const std::vector<Figure>& registry();
// By name or by number ("3"); nullptr when unknown.
const Figure* find_figure(const std::string& name_or_number);

}  // namespace icl::paperfigs

namespace icl::paperfigs {

// Where the plot scripts live, in search order: $ICL_FIGS_SCRIPTS, the source tree this program
// was built from (paper_figs/), the installed copy (<prefix>/share/icl/paper_figs). Returns the
// first folder holding `script`, or "" when none does.
std::string locate_script(const std::string& script);
std::vector<std::string> script_search_path();

// The Python that has matplotlib: $ICL_FIGS_PYTHON, else /usr/bin/python3 (Debian's
// python3-matplotlib; a python3 first on PATH may lack it).
std::string plot_python();

// Runs `python script_dir/script out_dir`; returns the exit status (non-zero on failure,
// 127 when the interpreter cannot be started).
int run_plot_script(const std::string& script_path, const std::string& out_dir);

}  // namespace icl::paperfigs
