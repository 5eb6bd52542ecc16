#include "verify/lowrank/serialize.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "numerics/format.hpp"
#include "theory/serialize.hpp"

namespace icl::verify::lowrank {

using nlohmann::ordered_json;

namespace {

// Every scalar estimate of a simulation with its path in the JSON layout ("error", "tm"),
// ("decomposition", "measured", "idg", "algo"), ("distribution", "tm", "var_ratio"), in the
// order of the flat names. Histograms are left to the callers (their layouts differ).
template <class F>
void visit_estimates(const SimulationResult& r, F f) {
  for (int k = 0; k < 3; ++k) f({"error", kProtocols[k]}, r.error[k]);
  if (r.shift) f({"error", "shift"}, *r.shift);
  if (r.bayes_tm) f({"bayes_optimal", "tm"}, *r.bayes_tm);
  f({"order", "m"}, r.order.m);
  f({"order", "q"}, r.order.q);
  f({"order", "mbar"}, r.order.mbar);
  f({"order", "qbar"}, r.order.qbar);
  f({"order", "m0"}, r.order.m0);
  f({"order", "q0"}, r.order.q0);
  if (const auto& d = r.decomposition) {
    for (int k = 0; k < 3; ++k) {
      const char* p = kProtocols[k];
      f({"decomposition", "measured", p, "algo"}, d->protocol[k].algo);
      f({"decomposition", "measured", p, "excess"}, d->protocol[k].excess);
      f({"decomposition", "measured", p, "span"}, d->protocol[k].span);
      f({"decomposition", "measured", p, "null"}, d->protocol[k].null);
      f({"decomposition", "measured", p, "cross"}, d->protocol[k].cross);
    }
    f({"decomposition", "measured", "fit", "e"}, d->fit_e);
    f({"decomposition", "measured", "fit", "e_nu"}, d->fit_e_nu);
    if (d->fit_e_nu_null) f({"decomposition", "measured", "fit", "e_nu_null"}, *d->fit_e_nu_null);
    f({"decomposition", "measured", "rank_S"}, d->rank_S);
  }
  if (const auto& dist = r.distribution)
    for (int k = 0; k < 3; ++k) {
      f({"distribution", kProtocols[k], "var_ratio"}, (*dist)[k].var_ratio);
      f({"distribution", kProtocols[k], "std_mean"}, (*dist)[k].std_mean);
      f({"distribution", kProtocols[k], "std_var"}, (*dist)[k].std_var);
    }
  f({"cg", "iterations"}, r.cg_iterations);
  f({"cg", "relative_residual"}, r.cg_relative_residual);
  f({"timing", "data_seconds"}, r.data_seconds);
  f({"timing", "train_seconds"}, r.train_seconds);
  f({"timing", "seed_seconds"}, r.seed_seconds);
}

using Path = std::initializer_list<const char*>;

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::string fmt(double v, int prec = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

}  // namespace

ordered_json to_json(const Sizes& n) {
  return {{"D", n.D}, {"r", n.r}, {"M0", n.M0}, {"N", n.N}, {"L", n.L}, {"L_test", n.Lt}};
}

ordered_json to_json(const numerics::Estimate& e) { return {{"mean", e.mean}, {"sem", e.sem}}; }

ordered_json to_json(const Extrapolation& e) {
  return {{"value", e.value}, {"se", e.se},     {"slope", e.slope},
          {"slope_se", e.slope_se}, {"chi2", e.chi2}, {"dof", e.dof}};
}

std::vector<std::pair<std::string, numerics::Estimate>> named_estimates(const SimulationResult& r) {
  std::vector<std::pair<std::string, numerics::Estimate>> out;
  visit_estimates(r, [&](Path path, const numerics::Estimate& e) {
    std::string name;
    auto it = path.begin();
    if (std::string(*it) == "decomposition") {
      name = "decomp";
      ++it;  // "measured"
    } else if (std::string(*it) == "distribution") {
      name = "dist";
    } else {
      name = *it;
    }
    for (++it; it != path.end(); ++it) name += std::string(".") + *it;
    out.emplace_back(name, e);
    // The histogram after the last scalar of its protocol's distribution.
    if (path.size() == 3 && std::string(*path.begin()) == "distribution" &&
        std::string(*(path.begin() + 2)) == "std_var") {
      const std::string p = *(path.begin() + 1);
      const int k = p == "tm" ? 0 : (p == "idg" ? 1 : 2);
      const auto& h = (*r.distribution)[k].histogram;
      for (std::size_t b = 0; b < h.size(); ++b)
        out.emplace_back("hist." + p + "." + std::to_string(b), h[b]);
    }
  });
  return out;
}

ordered_json to_json(const SimulationResult& r) {
  const SimOptions& o = r.options;
  ordered_json j;
  j["params"] = theory::to_json(r.params);
  j["dim"] = o.dim;
  j["seeds"] = o.seeds;
  if (r.status == numerics::Status::Interrupted) j["seeds_finished"] = r.per_seed.size();
  j["base_seed"] = o.base_seed;
  j["status"] = numerics::to_string(r.status);
  if (!r.message.empty()) j["message"] = r.message;
  j["residual_norm"] = r.residual_norm;
  visit_estimates(r, [&](Path path, const numerics::Estimate& e) {
    ordered_json* cur = &j;
    for (const char* key : path) cur = &(*cur)[key];
    *cur = to_json(e);
  });
  if (r.distribution)
    for (int k = 0; k < 3; ++k) {
      const auto& hist = (*r.distribution)[k].histogram;
      std::vector<double> frac, sem, normal;
      for (std::size_t b = 0; b < hist.size(); ++b) {
        frac.push_back(hist[b].mean);
        sem.push_back(hist[b].sem);
        normal.push_back(normal_cdf(r.histogram_edges[b + 1]) - normal_cdf(r.histogram_edges[b]));
      }
      j["distribution"][kProtocols[k]]["histogram_standardized_residual"] = {
          {"edges", r.histogram_edges},
          {"fraction", frac},
          {"fraction_sem", sem},
          {"standard_normal", normal}};
    }
  j["sizes"] = to_json(r.sizes);
  j["simulated_params"] = theory::to_json(r.simulated);
  j["sizing"] = ordered_json::array();
  for (const SizedRatio& s : r.sizing)
    j["sizing"].push_back({{"name", s.name}, {"nominal", s.nominal}, {"simulated", s.simulated},
                           {"relative_change", s.relative_change()}});
  j["notes"] = r.notes;
  j["memory"] = {{"estimate_bytes", r.memory_estimate_bytes},
                 {"peak_resident_bytes", r.peak_resident_bytes}};
  j["odg_kind"] = to_string(o.odg);
  j["sampler"] = to_string(o.sampler);
  j["solver"] = to_string(o.solver);
  j["finite_d_switches"] = theory::to_json(o.switches);
  if (r.theory) {
    j["theory"] = theory::to_json(*r.theory);
    if (r.theory->converged()) j["decomposition"]["theory"] = j["theory"]["decomposition"];
  }
  if (r.finite_dim) j["finite_dim"] = theory::to_json(*r.finite_dim);
  j["comparison"] = ordered_json::array();
  for (const SimulationComparison& c : comparison(r))
    j["comparison"].push_back({{"quantity", c.quantity}, {"mean", c.mean}, {"sem", c.sem},
                               {"theory", c.theory}, {"z", c.z}, {"finite_dim", c.finite_dim},
                               {"z_finite_dim", c.z_finite_dim},
                               {"bayes_optimal", c.bayes_optimal}});
  return j;
}

std::string to_text(const SimulationResult& r) {
  const Sizes& n = r.sizes;
  const auto& th = r.theory;
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "D = %d (r %d, M0 %d, N %d, L %d, L_test %d), %d seeds\n",
                n.D, n.r, n.M0, n.N, n.L, n.Lt, r.options.seeds);
  os << line;
  if (!r.params.task_spectrum.empty()) {
    // The finite-D task covariance actually simulated (data.hpp task_eigenvalues).
    std::snprintf(line, sizeof line,
                  "%s (finite D: %d eigenvalues, rounded multiplicities, mean rescaled to 1)\n",
                  theory::task_description(r.params).c_str(), n.D);
    os << line;
  }
  os << theory::to_text(r.options.switches);
  if (!r.converged()) os << "status " << numerics::to_string(r.status) << ": " << r.message << "\n";
  // The ratios of the integer sizes, when they are not the ones given (docs/simulation.md §13.1).
  std::string moved;
  for (const SizedRatio& s : r.sizing)
    if (s.simulated != s.nominal)
      moved += " " + s.name + " " + numerics::format_significant(s.simulated) + " (given " +
               numerics::format_significant(s.nominal) + ")";
  if (!moved.empty()) os << "simulated ratios (theory compared there):" << moved << "\n";
  std::snprintf(line, sizeof line, "%-12s %12s %10s %20s %20s\n", "quantity", "simulation",
                "s.e.", "theory (z)", "finite-D (z)");
  os << line;
  const auto rows = comparison(r);
  if (rows.empty()) {
    for (const auto& q : compared_quantities(r.shift.has_value())) {
      const numerics::Estimate& st = *q.simulated(r);
      std::snprintf(line, sizeof line, "%-12s %12s %10s %20s %20s\n", q.name,
                    fmt(st.mean, 5).c_str(), fmt(st.sem, 5).c_str(), "-", "-");
      os << line;
    }
  }
  const auto with_z = [](double value, double z) {
    if (std::isnan(value)) return std::string("-");
    char b[64];
    std::snprintf(b, sizeof b, "%s (%+.1f)", fmt(value, 5).c_str(), z);
    return std::string(b);
  };
  for (const SimulationComparison& c : rows) {
    std::snprintf(line, sizeof line, "%-12s %12s %10s %20s %20s\n", c.quantity.c_str(),
                  fmt(c.mean, 5).c_str(), fmt(c.sem, 5).c_str(), with_z(c.theory, c.z).c_str(),
                  with_z(c.finite_dim, c.z_finite_dim).c_str());
    os << line;
  }
  if (r.bayes_tm) {
    std::snprintf(line, sizeof line,
                  "Bayes-optimal TM (posterior mean over the M0 tasks, %d prompts per seed): %s "
                  "+- %s\n",
                  r.options.bayes_prompts, fmt(r.bayes_tm->mean, 5).c_str(),
                  fmt(r.bayes_tm->sem, 5).c_str());
    os << line;
  }
  if (r.decomposition && th) {
    os << "decomposition (measured algo / excess = mem+struct;  theory algo / mem+struct)\n";
    const theory::Components* tc[3] = {&th->decomposition.tm, &th->decomposition.idg,
                                        &th->decomposition.odg};
    for (int k = 0; k < 3; ++k) {
      const auto& m = r.decomposition->protocol[k];
      std::snprintf(line, sizeof line, "  %-4s %8s / %8s   theory %8s / %8s (mem %s, struct %s)\n",
                    kProtocols[k], fmt(m.algo.mean).c_str(), fmt(m.excess.mean).c_str(),
                    fmt(tc[k]->algo).c_str(), fmt(tc[k]->mem + tc[k]->structural).c_str(),
                    fmt(tc[k]->mem).c_str(), fmt(tc[k]->structural).c_str());
      os << line;
    }
  }
  std::snprintf(line, sizeof line, "CG iterations %.1f, time per seed %.3f s (train %.3f s)\n",
                r.cg_iterations.mean, r.seed_seconds.mean, r.train_seconds.mean);
  os << line;
  return os.str();
}

ordered_json to_json(const GdDemoResult& r) {
  ordered_json g;
  g["steps"] = r.options.steps;
  g["status"] = numerics::to_string(r.status);
  if (!r.message.empty()) g["message"] = r.message;
  g["residual_norm"] = r.residual_norm;
  g["ridge_solution"] = {{"odg", r.cg_odg}, {"idg", r.cg_idg}, {"tm", r.cg_tm},
                         {"null_norm2", r.cg_null_norm2}, {"loss", r.cg_loss}};
  g["runs"] = ordered_json::array();
  for (const auto& x : r.runs)
    g["runs"].push_back({{"init_scale", x.init_scale}, {"loss", x.loss}, {"odg", x.odg},
                         {"idg", x.idg}, {"tm", x.tm}, {"null_norm2", x.null_norm2},
                         {"null_dist2", x.null_dist2}, {"span_dist2", x.span_dist2}});
  g["odg_spread"] = r.odg_spread;
  g["null_norm2_spread"] = r.null_spread;
  return g;
}

namespace {

ordered_json to_json(const ComparisonRow& row) {
  ordered_json rj;
  rj["quantity"] = row.quantity;
  rj["theory"] = row.theory;
  rj["enforced"] = row.enforced;
  rj["pass"] = row.passed();
  rj["status"] = numerics::to_string(row.status);
  rj["per_dim"] = ordered_json::array();
  for (const auto& d : row.dims)
    rj["per_dim"].push_back({{"dim", d.dim}, {"seeds", d.seeds}, {"mean", d.mean},
                             {"sem", d.sem}, {"z", d.z}, {"rel", d.rel}});
  rj["extrapolated"] = to_json(row.extrapolated);
  rj["rel_dev"] = row.rel_dev;
  rj["tolerance"] = row.tolerance;
  return rj;
}

// The finite-D report (docs/simulation.md §14.5): {available, [status], [message], [omitted],
// [rows]}; status, omitted and rows only when a prediction exists. Rows: dim, quantity,
// prediction, limit, mean, sem, z, z_limit, uncertainty (null but for TM, IDG, ODG).
ordered_json to_json(const FiniteDimReport& f) {
  ordered_json fj;
  fj["available"] = f.available;
  if (f.available) fj["status"] = numerics::to_string(f.status);
  if (!f.message.empty()) fj["message"] = f.message;
  if (!f.available) return fj;
  fj["omitted"] = f.omitted;
  fj["rows"] = ordered_json::array();
  for (const auto& row : f.rows)
    fj["rows"].push_back({{"dim", row.dim}, {"quantity", row.quantity},
                          {"prediction", row.prediction}, {"limit", row.limit}, {"mean", row.mean}, {"sem", row.sem},
                          {"z", row.z}, {"z_limit", row.z_limit}, {"uncertainty", row.uncertainty}});
  return fj;
}

// The text table of the finite-D report: the errors only (the order parameters are in the JSON),
// one line per D and error.
void finite_dim_text(std::ostringstream& text, const PointResult& pr) {
  const FiniteDimReport& f = pr.finite_dim;
  if (!f.available) {
    text << "   finite D: " << f.message << "\n";
    return;
  }
  text << "   finite D (informational, docs/simulation.md §14.5; order parameters in --json)\n";
  if (!f.message.empty()) text << "   " << f.message << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "   %4s  %-10s %-22s %-20s %s\n", "D", "quantity",
                "sim mean +- se", "D->inf theory (z)", "finite-D prediction (z)");
  text << line;
  auto cell = [](double value, double z) {
    if (std::isnan(value)) return std::string("-");
    char c[64];
    std::snprintf(c, sizeof c, "%.4f (%+.1f)", value, z);
    return std::string(c);
  };
  for (const auto& row : f.rows) {
    if (row.quantity.rfind("error.", 0) != 0) continue;
    char sim[64];
    std::snprintf(sim, sizeof sim, "%.4f +- %.4f", row.mean, row.sem);
    std::snprintf(line, sizeof line, "   %4d  %-10s %-22s %-20s %s\n", row.dim,
                  row.quantity.c_str(), sim, cell(row.limit, row.z_limit).c_str(),
                  cell(row.prediction, row.z).c_str());
    text << line;
  }
  if (!f.omitted.empty()) {
    text << "   not in the prediction:";
    for (std::size_t i = 0; i < f.omitted.size(); ++i) text << (i ? ", " : " ") << f.omitted[i];
    text << "\n";
  }
}

ordered_json to_json(const PointResult& r) {
  ordered_json pj;
  pj["label"] = r.point.label;
  pj["params"] = theory::to_json(r.point.params);
  pj["theory"] = theory::to_json(r.theory);
  pj["pass"] = r.passed();
  pj["status"] = numerics::to_string(r.status);
  pj["seconds_per_dim"] = r.seconds_per_dim;
  if (!r.message.empty()) pj["message"] = r.message;
  for (const auto& row : r.rows) pj["rows"].push_back(to_json(row));
  pj["finite_dim"] = to_json(r.finite_dim);
  return pj;
}

}  // namespace

ordered_json to_json(const VerifyResult& r) {
  const VerifyOptions& o = r.options;
  ordered_json j;
  j["quick"] = o.quick_mode;
  j["dims"] = o.dims;
  j["seeds"] = o.seeds;
  j["base_seed"] = o.base_seed;
  j["finite_d_switches"] = theory::to_json(o.switches);
  j["tolerance"] = {{"rule", "|extrapolated - theory| <= k_se * se + rel_tol * |theory| + abs_tol"},
                    {"k_se", o.k_se}, {"rel_tol", o.rel_tol}, {"abs_tol", o.abs_tol}};
  for (const auto& p : r.points) j["points"].push_back(to_json(p));
  j["pass"] = r.passed();
  j["status"] = numerics::to_string(r.status);
  if (!r.message.empty()) j["message"] = r.message;
  return j;
}

std::string to_text(const VerifyResult& r) {
  const VerifyOptions& o = r.options;
  std::ostringstream text;
  text << "Theory vs simulation (D = ";
  for (std::size_t k = 0; k < o.dims.size(); ++k)
    text << (k ? ", " : "") << o.dims[k] << " x " << o.seeds[k] << " seeds";
  text << "); extrapolation: weighted least squares mean(D) = a + b/D.\n"
       << "Tolerance: |a - theory| <= " << o.k_se << " se(a) + " << o.rel_tol << " |theory| + "
       << o.abs_tol << "\n" << theory::to_text(o.switches);
  for (const auto& pr : r.points) {
    const auto& gp = pr.point;
    text << "\n== " << gp.label << "  (alpha " << gp.params.alpha << ", alpha_test "
         << gp.params.effective_alpha_test() << ", tau " << gp.params.tau << ", kappa "
         << gp.params.kappa << ", " << theory::task_description(gp.params) << ", sigma " << gp.params.sigma
         << ", sigma_test " << gp.params.sigma_test << ", lambda " << gp.params.lambda << ")"
         << (pr.passed() ? "" : "  ** FAIL **") << "\n";
    if (!pr.message.empty()) text << "   " << pr.message << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "   %-18s %9s | %-26s | %-20s %8s %8s %s\n", "quantity",
                  "theory", ("D=" + std::to_string(o.dims.back()) + " mean (rel, z)").c_str(),
                  "extrapolated +- se", "rel", "tol", "");
    text << line;
    for (const auto& row : pr.rows) {
      const auto& last = row.dims.back();
      const auto& ex = row.extrapolated;
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.4f (%+.1f%%, %+.1f)", last.mean, 100 * last.rel, last.z);
      char ext[64];
      std::snprintf(ext, sizeof ext, "%.4f +- %.4f", ex.value, ex.se);
      std::snprintf(line, sizeof line, "   %-18s %9.4f | %-26s | %-20s %+7.2f%% %8.4f %s\n",
                    row.quantity.c_str(), row.theory, cell, ext, 100 * row.rel_dev, row.tolerance,
                    !row.enforced ? "(info)" : (row.passed() ? "ok" : "FAIL"));
      text << line;
    }
    finite_dim_text(text, pr);
  }
  return text.str();
}

std::vector<std::string> simulation_columns() {
  std::vector<std::string> c;
  for (const auto& q : compared_quantities()) {
    c.push_back("sim_" + q.short_name());
    c.push_back("sim_" + q.short_name() + "_sem");
  }
  return c;
}

std::vector<double> simulation_row(const SimulationResult& r) {
  std::vector<double> row;
  for (const auto& q : compared_quantities()) {
    const numerics::Estimate& e = *q.simulated(r);
    row.push_back(e.mean);
    row.push_back(e.sem);
  }
  return row;
}

nlohmann::json to_json(const SweepOptions& o) {
  nlohmann::json j = {{"params", theory::to_json(o.base)},
                      {"method", theory::to_string(o.theory.solve.method)},
                      {"grid_points", o.values.size()},
                      {"shard", {{"index", o.shard.index}, {"count", o.shard.count}}}};
  if (o.simulation)
    j["simulation"] = {{"dim", o.simulation->dim},
                       {"seeds", o.simulation->seeds},
                       {"seed", o.simulation->base_seed},
                       {"finite_d_switches", theory::to_json(o.simulation->switches)}};
  if (o.finite_dim)
    j["finite_dim"] = {{"dim", o.finite_dim->dim},
                       {"finite_d_switches", theory::to_json(o.finite_dim->switches)}};
  return j;
}

nlohmann::json to_json(const SweepResult& r) {
  nlohmann::json j = to_json(r.options);
  if (r.options.simulation) j["simulation"]["failed_points"] = r.simulation_failed;
  if (r.options.finite_dim) {
    j["finite_dim"]["failed_points"] = r.finite_dim_failed;
    j["finite_dim"]["not_covered_points"] = r.finite_dim_not_covered;
  }
  j["failed_points"] = r.failed_points;
  return j;
}

numerics::Table to_table(const SweepResult& r) {
  const SweepOptions& o = r.options;
  bool shift = false;
  for (const SweepPoint& pt : r.points) shift = shift || pt.solution.params.has_test_shift();
  numerics::Table t;
  t.columns = {"index", o.name};
  for (const auto& c : theory::solution_columns(shift)) t.columns.push_back(c);
  // With SolveOptions::gradient: d_<E>_d_<x> and el_<E>_<x> (docs/sensitivity.md §22).
  std::vector<std::string> gradient;
  if (o.theory.solve.gradient && !r.points.empty())
    gradient = theory::gradient_columns(r.points.front().solution.params, o.theory.solve.method);
  t.columns.insert(t.columns.end(), gradient.begin(), gradient.end());
  if (o.finite_dim)
    for (const auto& c : theory::finite_dim_columns(shift)) t.columns.push_back(c);
  if (o.simulation)
    for (const auto& c : simulation_columns()) t.columns.push_back(c);
  for (const SweepPoint& pt : r.points) {
    std::vector<double> row = {static_cast<double>(pt.index), pt.value};
    const auto cells = theory::solution_row(pt.solution, shift);
    row.insert(row.end(), cells.begin(), cells.end());
    if (!gradient.empty()) {
      const auto g = theory::gradient_row(pt.solution, gradient);
      row.insert(row.end(), g.begin(), g.end());
    }
    if (o.finite_dim) {
      const auto& fd = pt.finite_dim->result;
      const auto fd_cells = theory::finite_dim_row(fd ? &*fd : nullptr, shift);
      row.insert(row.end(), fd_cells.begin(), fd_cells.end());
    }
    if (o.simulation) row.insert(row.end(), pt.simulation.begin(), pt.simulation.end());
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace icl::verify::lowrank
