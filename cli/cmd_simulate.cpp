// icl simulate: the finite-D simulator at one point (mean and standard error over seeds), next
// to the theory's decomposition and the distribution of predictions.
// icl verify: theory vs simulation over a fixed grid with a 1/D extrapolation (exit 3 on failure).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "theory/serialize.hpp"
#include "numerics/error.hpp"
#include "theory/lowrank.hpp"
#include "verify/lowrank/compare.hpp"
#include "verify/lowrank/simulator.hpp"

namespace icl::cli {
namespace {

using nlohmann::json;
namespace vf = icl::verify::lowrank;

json stat_json(const vf::Stat& s) { return json{{"mean", s.mean}, {"sem", s.sem}}; }

// Put {mean, sem} at the dotted path "a.b.c" of j.
void nest(json& j, const std::string& dotted, const json& value) {
  json* cur = &j;
  std::stringstream ss(dotted);
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) cur = &(*cur)[parts[i]];
  (*cur)[parts.back()] = value;
}

// The theory next to the simulation: the same object as `icl solve --json`.
json theory_json(const theory::Solution& s) { return json::parse(theory::to_json(s).dump()); }

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

json estimate_json(const vf::Estimate& est, int bins) {
  json j;
  const char* protocols[3] = {"tm", "idg", "odg"};
  for (std::size_t i = 0; i < est.names.size(); ++i) {
    const std::string& n = est.names[i];
    if (n.rfind("hist.", 0) == 0) continue;
    std::string path = n;
    if (n.rfind("decomp.", 0) == 0) path = "decomposition.measured." + n.substr(7);
    if (n.rfind("dist.", 0) == 0) path = "distribution." + n.substr(5);
    nest(j, path, stat_json(est.stats[i]));
  }
  if (!est.histogram_edges.empty() && est.has("hist.tm.0")) {
    for (const char* p : protocols) {
      json h;
      h["edges"] = est.histogram_edges;
      std::vector<double> frac, sem, normal;
      for (int b = 0; b < bins; ++b) {
        const auto st = est.get(std::string("hist.") + p + "." + std::to_string(b));
        frac.push_back(st.mean);
        sem.push_back(st.sem);
        normal.push_back(normal_cdf(est.histogram_edges[b + 1]) -
                         normal_cdf(est.histogram_edges[b]));
      }
      h["fraction"] = frac;
      h["fraction_sem"] = sem;
      h["standard_normal"] = normal;
      j["distribution"][p]["histogram_standardized_residual"] = h;
    }
  }
  return j;
}

std::string fmt(double v, int prec = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

// "rho 0.9" for the paper's low-rank tasks, else the population task spectrum "t:w,...".
std::string task_description(const theory::Params& p) {
  std::ostringstream os;
  if (p.task_spectrum.empty()) {
    os << "rho " << p.rho;
  } else {
    os << "task spectrum ";
    for (std::size_t k = 0; k < p.task_spectrum.size(); ++k)
      os << (k ? "," : "") << p.task_spectrum[k].position << ":" << p.task_spectrum[k].mass;
  }
  return os.str();
}

}  // namespace

void register_simulate(CLI::App& app) {
  // ------------------------------------------------------------------------------- simulate
  struct SimFlags {
    ParamFlags flags;
    int dim = 0, seeds = 0, threads = 2, prompts = 2000;
    std::uint64_t seed = 20251;
    std::string odg = "isotropic", assignment = "random", sampler = "factorized", solver = "cg";
    double cg_tol = 1e-6;
    bool min_norm = false, no_theory = false, json = false, gd = false;
    int gd_steps = 300;
    std::vector<double> gd_inits{0.0, 1.0, 2.0, 4.0};
    std::string out;
  };
  auto sf = std::make_shared<SimFlags>();
  auto* sim = app.add_subcommand(
      "simulate", "Finite-D simulation at one point: TM/IDG/ODG errors and order parameters "
                  "(mean and standard error over seeds), measured decomposition");
  sf->flags.add_to(*sim);
  sim->add_option("--dim", sf->dim, "token dimension D")->required()->check(CLI::Range(4, 400));
  sim->add_option("--seeds", sf->seeds, "independent runs")->required()->check(CLI::Range(1, 100000));
  sim->add_option("--odg", sf->odg, "ODG test tasks: isotropic N(0, I) | subspace (independent Haar subspace)")
      ->check(CLI::IsMember({"isotropic", "subspace"}))->capture_default_str();
  sim->add_option("--seed", sf->seed, "base seed (seed k is derived from it and k)")->capture_default_str();
  sim->add_option("--threads", sf->threads, "worker threads over seeds (results do not depend on it)")
      ->check(CLI::Range(1, 256))->capture_default_str();
  sim->add_option("--assignment", sf->assignment, "task of each sequence: random (uniform with replacement) | balanced")
      ->check(CLI::IsMember({"random", "balanced"}))->capture_default_str();
  sim->add_option("--sampler", sf->sampler, "context estimate: factorized (exact, 2L+D normals) | direct (L x D tokens)")
      ->check(CLI::IsMember({"factorized", "direct"}))->capture_default_str();
  sim->add_option("--solver", sf->solver, "cg (matrix-free PCG) | direct (dense D^2 x D^2, D <= 40)")
      ->check(CLI::IsMember({"cg", "direct"}))->capture_default_str();
  sim->add_option("--cg-tol", sf->cg_tol, "relative residual of the normal equations")
      ->check(CLI::Range(1e-15, 1e-2))->capture_default_str();
  sim->add_flag("--min-norm", sf->min_norm, "lambda = 0 with N < D^2: take the minimum-norm Gamma");
  sim->add_option("--prompts", sf->prompts, "fresh prompts per protocol for the distribution of predictions (0: off)")
      ->check(CLI::Range(0, 10000000))->capture_default_str();
  sim->add_flag("--no-theory", sf->no_theory, "do not solve the theory (no decomposition / distribution)");
  sim->add_flag("--gd-demo", sf->gd, "ill-posedness demo: gradient descent from several initializations (first seed)");
  sim->add_option("--gd-steps", sf->gd_steps, "gradient-descent steps")->check(CLI::Range(1, 1000000))->capture_default_str();
  sim->add_option("--gd-inits", sf->gd_inits, "initialization scales (Gamma0 = scale Z, Z iid N(0,1/D))")->capture_default_str();
  sim->add_flag("--json", sf->json, "print one JSON object");
  sim->add_option("--out", sf->out, "write the JSON to this file (atomically)");
  sim->callback([sf] {
    const theory::Params p = sf->flags.resolve();
    vf::SimOptions o;
    o.dim = sf->dim;
    o.seeds = sf->seeds;
    o.base_seed = sf->seed;
    o.threads = sf->threads;
    o.odg = vf::odg_kind_from_string(sf->odg);
    o.assignment = sf->assignment == "balanced" ? vf::Assignment::Balanced : vf::Assignment::Random;
    o.sampler = sf->sampler == "direct" ? vf::Sampler::Direct : vf::Sampler::Factorized;
    o.solver = sf->solver == "direct" ? vf::Solver::Direct : vf::Solver::CG;
    o.cg_tolerance = sf->cg_tol;
    o.min_norm = sf->min_norm;
    o.prediction_prompts = sf->prompts;
    if (o.solver == vf::Solver::Direct && o.dim > 40)
      throw ExitError(kExitBadInput, "--solver direct needs --dim <= 40");
    std::optional<theory::Solution> th;
    if (!sf->no_theory) {
      try {
        // lambda = 0 below tau = 1 (with --min-norm): the ridgeless Letey/Lu branch.
        const bool ridgeless = vf::ridgeless_point(p);
        if (!ridgeless) p.validate_for_saddle_point();
        th = theory::solve(p, {.method = ridgeless ? theory::Method::Letey : theory::Method::Saddle});
        if (!th->converged()) {
          std::fprintf(stderr, "icl simulate: warning: theory did not converge (residual %.3g); "
                               "no decomposition\n", th->residual_norm);
        } else {
          o.theory = vf::theory_ref(*th);
        }
      } catch (const InvalidParams& e) {
        std::fprintf(stderr, "icl simulate: note: no theory at this point (%s)\n", e.what());
      }
    }
    vf::Estimate est;
    try {
      est = vf::LowRankSimulator(p, o).run();
    } catch (const InvalidParams& e) {
      throw ExitError(kExitBadInput, std::string("invalid parameter ") + e.what());
    }
    const vf::Sizes n = vf::sizes(p, o.dim);
    json j;
    j["params"] = theory::to_json(p);
    j["dim"] = o.dim;
    j["seeds"] = o.seeds;
    j["base_seed"] = o.base_seed;
    j.update(estimate_json(est, o.histogram_bins));
    j["sizes"] = {{"D", n.D}, {"r", n.r}, {"M0", n.M0}, {"N", n.N}, {"L", n.L}, {"L_test", n.Lt}};
    j["odg_kind"] = sf->odg;
    j["assignment"] = sf->assignment;
    j["sampler"] = sf->sampler;
    j["solver"] = sf->solver;
    if (th) {
      j["theory"] = theory_json(*th);
      if (th->converged()) j["decomposition"]["theory"] = j["theory"]["decomposition"];
    }
    if (sf->gd) {
      const auto demo = vf::gd_demo(p, o.dim, numerics::derive_seed(o.base_seed, 0), sf->gd_inits,
                                    sf->gd_steps, o.odg);
      json g;
      g["steps"] = sf->gd_steps;
      g["ridge_solution"] = {{"odg", demo.cg_odg}, {"idg", demo.cg_idg}, {"tm", demo.cg_tm},
                             {"null_norm2", demo.cg_null_norm2}, {"loss", demo.cg_loss}};
      for (const auto& r : demo.runs)
        g["runs"].push_back({{"init_scale", r.init_scale}, {"loss", r.loss}, {"odg", r.odg},
                             {"idg", r.idg}, {"tm", r.tm}, {"null_norm2", r.null_norm2},
                             {"null_dist2", r.null_dist2}, {"span_dist2", r.span_dist2}});
      g["odg_spread"] = demo.odg_spread;
      g["null_norm2_spread"] = demo.null_spread;
      j["gd_demo"] = g;
    }
    if (sf->json || !sf->out.empty()) {
      emit_json(j, sf->out);
      return;
    }
    std::printf("D = %d (r %d, M0 %d, N %d, L %d, L_test %d), %d seeds\n", n.D, n.r, n.M0, n.N,
                n.L, n.Lt, o.seeds);
    if (!p.task_spectrum.empty()) {
      // The finite-D task covariance actually simulated (simulator.hpp task_eigenvalues).
      const auto t = vf::task_eigenvalues(p, o.dim);
      std::printf("%s (finite D: %d eigenvalues, rounded multiplicities, mean rescaled to 1)\n",
                  task_description(p).c_str(), int(t.size()));
    }
    std::printf("%-12s %12s %10s %12s\n", "quantity", "simulation", "s.e.", "theory");
    for (const char* q : {"error.tm", "error.idg", "error.odg", "order.m", "order.q",
                          "order.mbar", "order.qbar", "order.m0", "order.q0"}) {
      const auto st = est.get(q);
      std::string t = "-";
      if (th && th->converged()) t = fmt(vf::theory_value(*th, q), 5);
      std::printf("%-12s %12s %10s %12s\n", q, fmt(st.mean, 5).c_str(), fmt(st.sem, 5).c_str(),
                  t.c_str());
    }
    if (est.has("decomp.tm.algo") && th) {
      std::printf("decomposition (measured algo / excess = mem+struct;  theory algo / mem+struct)\n");
      const char* ps[3] = {"tm", "idg", "odg"};
      const theory::Components* tc[3] = {&th->decomposition.tm, &th->decomposition.idg,
                                          &th->decomposition.odg};
      for (int k = 0; k < 3; ++k) {
        const std::string pre = std::string("decomp.") + ps[k] + ".";
        std::printf("  %-4s %8s / %8s   theory %8s / %8s (mem %s, struct %s)\n", ps[k],
                    fmt(est.get(pre + "algo").mean).c_str(), fmt(est.get(pre + "excess").mean).c_str(),
                    fmt(tc[k]->algo).c_str(), fmt(tc[k]->mem + tc[k]->structural).c_str(),
                    fmt(tc[k]->mem).c_str(), fmt(tc[k]->structural).c_str());
      }
    }
    std::printf("CG iterations %.1f, time per seed %.3f s (train %.3f s)\n",
                est.get("cg.iterations").mean, est.get("timing.seed_seconds").mean,
                est.get("timing.train_seconds").mean);
  });

  // --------------------------------------------------------------------------------- verify
  struct VerFlags {
    bool quick = false, json = false;
    int threads = 2;
    std::uint64_t seed = 7;
    std::string out;
  };
  auto vfl = std::make_shared<VerFlags>();
  auto* ver = app.add_subcommand(
      "verify", "Theory vs simulation over a fixed grid: z-scores at fixed D and a 1/D "
                "extrapolation; exit 3 when they disagree beyond the stated tolerance");
  ver->add_flag("--quick", vfl->quick, "small D and two points (CI, under 2 minutes on 2 cores)");
  ver->add_flag("--json", vfl->json, "print one JSON object with every number");
  ver->add_option("--out", vfl->out, "write the JSON to this file (atomically)");
  ver->add_option("--threads", vfl->threads, "worker threads")->check(CLI::Range(1, 256))->capture_default_str();
  ver->add_option("--seed", vfl->seed, "base seed")->capture_default_str();
  ver->callback([vfl] {
    vf::VerifyOptions o = vfl->quick ? vf::VerifyOptions::quick() : vf::VerifyOptions{};
    o.threads = vfl->threads;
    o.base_seed = vfl->seed;
    const auto grid = vf::verify_grid(vfl->quick);
    json j;
    j["quick"] = vfl->quick;
    j["dims"] = o.dims;
    j["seeds"] = o.seeds;
    j["base_seed"] = o.base_seed;
    j["tolerance"] = {{"rule", "|extrapolated - theory| <= k_se * se + rel_tol * |theory| + abs_tol"},
                      {"k_se", o.k_se}, {"rel_tol", o.rel_tol}, {"abs_tol", o.abs_tol}};
    bool all_pass = true;
    std::size_t done = 0;
    const std::size_t total = grid.size() * o.dims.size();
    std::ostringstream text;
    for (const auto& gp : grid) {
      const vf::PointResult r = vf::verify_point(gp, o, [&](const std::string&) {
        progress("verify", ++done, total);
      });
      json pj;
      pj["label"] = gp.label;
      pj["params"] = theory::to_json(gp.params);
      pj["theory"] = theory_json(r.theory);
      pj["pass"] = r.pass;
      pj["seconds_per_dim"] = r.seconds_per_dim;
      if (!r.message.empty()) pj["message"] = r.message;
      text << "\n== " << gp.label << "  (alpha " << gp.params.alpha << ", alpha_test "
           << gp.params.effective_alpha_test() << ", tau " << gp.params.tau << ", kappa "
           << gp.params.kappa << ", " << task_description(gp.params) << ", sigma " << gp.params.sigma
           << ", sigma_test " << gp.params.sigma_test << ", lambda " << gp.params.lambda << ")"
           << (r.pass ? "" : "  ** FAIL **") << "\n";
      if (!r.message.empty()) text << "   " << r.message << "\n";
      char line[512];
      std::snprintf(line, sizeof line, "   %-18s %9s | %-26s | %-20s %8s %8s %s\n", "quantity",
                    "theory", ("D=" + std::to_string(o.dims.back()) + " mean (rel, z)").c_str(),
                    "extrapolated +- se", "rel", "tol", "");
      text << line;
      for (const auto& row : r.rows) {
        json rj;
        rj["quantity"] = row.quantity;
        rj["theory"] = row.theory;
        rj["enforced"] = row.enforced;
        rj["pass"] = row.pass;
        for (const auto& d : row.dims)
          rj["per_dim"].push_back({{"dim", d.dim}, {"seeds", d.seeds}, {"mean", d.mean},
                                   {"sem", d.sem}, {"z", d.z}, {"rel", d.rel}});
        const auto& ex = row.extrapolated;
        rj["extrapolated"] = {{"value", ex.value}, {"se", ex.se}, {"slope", ex.slope},
                              {"slope_se", ex.slope_se}, {"chi2", ex.chi2}, {"dof", ex.dof}};
        rj["rel_dev"] = row.rel_dev;
        rj["tolerance"] = row.tolerance;
        pj["rows"].push_back(rj);
        const auto& last = row.dims.back();
        char cell[64];
        std::snprintf(cell, sizeof cell, "%.4f (%+.1f%%, %+.1f)", last.mean, 100 * last.rel, last.z);
        char ext[64];
        std::snprintf(ext, sizeof ext, "%.4f +- %.4f", ex.value, ex.se);
        std::snprintf(line, sizeof line, "   %-18s %9.4f | %-26s | %-20s %+7.2f%% %8.4f %s\n",
                      row.quantity.c_str(), row.theory, cell, ext, 100 * row.rel_dev,
                      row.tolerance,
                      !row.enforced ? "(info)" : (row.pass ? "ok" : "FAIL"));
        text << line;
      }
      all_pass = all_pass && r.pass;
      j["points"].push_back(pj);
    }
    j["pass"] = all_pass;
    if (vfl->json || !vfl->out.empty()) {
      emit_json(j, vfl->out);
    } else {
      std::cout << "Theory vs simulation (D = ";
      for (std::size_t k = 0; k < o.dims.size(); ++k)
        std::cout << (k ? ", " : "") << o.dims[k] << " x " << o.seeds[k] << " seeds";
      std::cout << "); extrapolation: weighted least squares mean(D) = a + b/D.\n"
                << "Tolerance: |a - theory| <= " << o.k_se << " se(a) + " << o.rel_tol
                << " |theory| + " << o.abs_tol << "\n"
                << text.str();
    }
    if (!all_pass)
      throw ExitError(kExitNotConverged,
                      "verify: theory and extrapolated simulation disagree beyond tolerance "
                      "(see the FAIL rows)");
  });
}

}  // namespace icl::cli
