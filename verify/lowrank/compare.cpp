#include "verify/lowrank/compare.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <Eigen/Dense>

#include "numerics/error.hpp"
#include "numerics/parallel.hpp"
#include "numerics/timing.hpp"
#include "theory/quantity.hpp"

namespace icl::verify::lowrank {

std::string Quantity::short_name() const {
  const std::string n = name;
  return n.substr(n.find('.') + 1);
}

const std::vector<Quantity>& compared_quantities() {
  using R = SimulationResult;
  // The theory's side is the quantity of the same short name (theory/quantity.hpp).
  const auto th = [](const char* name) { return theory::find_quantity(name).of; };
  static const std::vector<Quantity> q = {
      {"error.tm", [](const R& r) { return &r.error.tm; }, th("tm")},
      {"error.idg", [](const R& r) { return &r.error.idg; }, th("idg")},
      {"error.odg", [](const R& r) { return &r.error.odg; }, th("odg")},
      {"order.m", [](const R& r) { return &r.order.m; }, th("m")},
      {"order.q", [](const R& r) { return &r.order.q; }, th("q")},
      {"order.mbar", [](const R& r) { return &r.order.mbar; }, th("mbar")},
      {"order.qbar", [](const R& r) { return &r.order.qbar; }, th("qbar")},
      {"order.m0", [](const R& r) { return &r.order.m0; }, th("m0")},
      {"order.q0", [](const R& r) { return &r.order.q0; }, th("q0")},
  };
  return q;
}

Quantity shift_quantity() {
  return {"error.shift",
          [](const SimulationResult& r) { return r.shift ? &*r.shift : nullptr; },
          theory::find_quantity("shift").of};
}

namespace {
// The measured decomposition's piece of protocol K (nullptr without a decomposition).
template <int K>
const numerics::Estimate* algo(const SimulationResult& r) {
  return r.decomposition ? &r.decomposition->protocol[K].algo : nullptr;
}
template <int K>
const numerics::Estimate* excess(const SimulationResult& r) {
  return r.decomposition ? &r.decomposition->protocol[K].excess : nullptr;
}
}  // namespace

std::vector<Quantity> compared_quantities(bool shift) {
  std::vector<Quantity> q = compared_quantities();
  if (shift) q.insert(q.begin() + 3, shift_quantity());
  return q;
}

const std::vector<Quantity>& decomposition_quantities() {
  using S = theory::Solution;
  static const std::vector<Quantity> q = {
      {"decomp.tm.algo", algo<0>, [](const S& s) { return s.decomposition.tm.algo; }},
      {"decomp.idg.algo", algo<1>, [](const S& s) { return s.decomposition.idg.algo; }},
      {"decomp.odg.algo", algo<2>, [](const S& s) { return s.decomposition.odg.algo; }},
      {"decomp.tm.excess", excess<0>,
       [](const S& s) { return s.error.tm - s.decomposition.tm.algo; }},
      {"decomp.idg.excess", excess<1>,
       [](const S& s) { return s.error.idg - s.decomposition.idg.algo; }},
      {"decomp.odg.excess", excess<2>,
       [](const S& s) { return s.error.odg - s.decomposition.odg.algo; }},
  };
  return q;
}

const std::vector<Quantity>& informational_quantities() {
  using R = SimulationResult;
  using S = theory::Solution;
  static const std::vector<Quantity> q = [] {
    std::vector<Quantity> v = decomposition_quantities();
    v.push_back({"decomp.fit.e",
                 [](const R& r) { return r.decomposition ? &r.decomposition->fit_e : nullptr; },
                 [](const S& s) { return s.e; }});
    v.push_back({"decomp.fit.e_nu",
                 [](const R& r) { return r.decomposition ? &r.decomposition->fit_e_nu : nullptr; },
                 [](const S& s) { return s.e * s.nu; }});
    return v;
  }();
  return q;
}

Extrapolation extrapolate_inverse_d(const std::vector<double>& dims,
                                    const std::vector<double>& means,
                                    const std::vector<double>& sems) {
  const int n = int(dims.size());
  if (n < 2) throw InvalidParams("dims", "the extrapolation needs at least two dimensions");
  Eigen::Matrix2d JtWJ = Eigen::Matrix2d::Zero();
  Eigen::Vector2d JtWy = Eigen::Vector2d::Zero();
  // Guard against a zero standard error (e.g. a deterministic quantity): floor at 1e-12.
  for (int i = 0; i < n; ++i) {
    const double x = 1.0 / dims[i];
    const double w = 1.0 / std::max(sems[i] * sems[i], 1e-24);
    Eigen::Vector2d j(1.0, x);
    JtWJ += w * j * j.transpose();
    JtWy += w * j * means[i];
  }
  const Eigen::Matrix2d cov = JtWJ.inverse();
  const Eigen::Vector2d c = cov * JtWy;
  Extrapolation e;
  e.value = c(0);
  e.slope = c(1);
  e.dof = n - 2;
  for (int i = 0; i < n; ++i) {
    const double r = (means[i] - c(0) - c(1) / dims[i]) / std::max(sems[i], 1e-12);
    e.chi2 += r * r;
  }
  const double inflate = (e.dof > 0 && e.chi2 / e.dof > 1.0) ? std::sqrt(e.chi2 / e.dof) : 1.0;
  e.se = std::sqrt(cov(0, 0)) * inflate;
  e.slope_se = std::sqrt(cov(1, 1)) * inflate;
  return e;
}

std::vector<GridPoint> verify_grid(bool quick) {
  using theory::Params;
  auto make = [](double alpha, double alpha_test, double tau, double kappa, double rho,
                 double sigma, double sigma_test, double lambda) {
    return Params{.alpha = alpha, .alpha_test = alpha_test, .tau = tau, .kappa = kappa,
                  .rho = rho, .sigma = sigma, .sigma_test = sigma_test, .lambda = lambda};
  };
  // label: regime / tau side / lambda / test context and noise / shifted test tasks
  std::vector<GridPoint> g = {
      {"paper: rich, tau>1, lambda=0; overlap C=0.3", make(2, -1, 2.25, 1.5, 0.9, 0.3, 0, 0)},
      {"poor, tau>1, lambda=0", make(2, -1, 2.25, 0.5, 0.9, 0.3, 0, 0)},
      {"rich, tau<1, lambda>0", make(2, -1, 0.6, 1.5, 0.5, 0.3, 0, 0.1)},
      {"rich, tau>1, lambda>0, alpha_test/sigma_test", make(2, 4, 1.5, 1.0, 0.6, 0.3, 0.2, 0.05)},
      {"poor, tau<1, lambda>0, alpha_test/sigma_test; overlap C=0",
       make(1.5, 1, 0.8, 0.4, 0.8, 0.2, 0.1, 0.02)},
  };
  // The shifted test protocol (docs/general_covariance.md §20) is measured on the same trained
  // Gamma, so it costs no extra training: C = 0.3 (mostly off the learned subspace, beyond ODG's
  // rho = 0.9) and C = 0 (entirely off it).
  g[0].params.test_overlap = 0.3;
  g[4].params.test_overlap = 0.0;
  if (quick) return {g[0], g[4]};
  // Beyond the paper: a general task covariance, eigenvalue a on 40% of the directions and a/5
  // on the rest (full rank, so S is singular at kappa < 1). 0.4 D is an integer for the default
  // dims, so the finite-D spectrum equals the population one (data.hpp task_eigenvalues).
  Params gen = make(2, -1, 2.25, 0.8, 1.0, 0.3, 0, 0.1);
  gen.task_spectrum = theory::low_rank_plus_complement_spectrum(0.4, 0.2);
  // Shifted test tasks in the same eigenbasis: eigenvalue 0.5 on the strong 40% and 4/3 on the
  // weak 60% (weighted mean 0.4 * 0.5 + 0.6 * 4/3 = 1): mostly off the strong directions.
  gen.test_levels = {0.5, 4.0 / 3.0};
  g.push_back({"general: low rank + complement tasks, kappa<1, lambda>0; test levels", gen});
  // Ridgeless interpolation branch: lambda = 0 below tau = 1, the minimum-norm Gamma against
  // the Letey/Lu theory (ridgeless_point()), with the Letey/Lu shifted error at C = 0.5.
  Params ridgeless = make(2, -1, 0.6, 1.5, 0.9, 0.3, 0, 0);
  ridgeless.test_overlap = 0.5;
  g.push_back({"ridgeless min-norm, tau<1, lambda=0; overlap C=0.5", ridgeless});
  return g;
}

VerifyOptions VerifyOptions::quick() {
  VerifyOptions o;
  o.dims = {16, 24, 32, 40};
  o.seeds = {288, 144, 72, 48};
  o.points = verify_grid(true);
  o.quick_mode = true;
  return o;
}

void VerifyOptions::validate() const {
  switches.validate();
  if (dims.size() < 2) throw InvalidParams("dims", "the 1/D extrapolation needs at least two");
  if (seeds.size() != dims.size())
    throw InvalidParams("seeds", "needs one count per dim (" + std::to_string(dims.size()) + ")");
  for (int d : dims)
    if (d < 2 || d > 2000) throw InvalidParams("dims", "each must be in [2, 2000]");
  for (int s : seeds)
    if (s < 2) throw InvalidParams("seeds", "each must be >= 2 (a standard error needs two)");
  numerics::check_threads(threads, false);
  if (!(k_se >= 0)) throw InvalidParams("k_se", "must be >= 0");
  if (!(rel_tol >= 0)) throw InvalidParams("rel_tol", "must be >= 0");
  if (!(abs_tol >= 0)) throw InvalidParams("abs_tol", "must be >= 0");
  if (points.empty()) throw InvalidParams("points", "needs at least one grid point");
}

namespace {

// Every quantity a comparison can use of one simulation: the compared ones, the shifted
// protocol's error, the informational ones.
const std::vector<Quantity>& summarized_quantities() {
  static const std::vector<Quantity> all = [] {
    std::vector<Quantity> v = compared_quantities();
    v.push_back(shift_quantity());
    for (const auto& q : informational_quantities()) v.push_back(q);
    return v;
  }();
  return all;
}

std::size_t index_of(const Quantity& q) {
  const auto& all = summarized_quantities();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (std::string(all[i].name) == q.name) return i;
  throw std::logic_error(std::string("verify: no summary slot for ") + q.name);
}

// What a comparison uses of the simulation at one D: the estimates of summarized_quantities()
// (absent when the simulation did not measure one: no decomposition, no shifted protocol) and
// its wall time. A numerics::UnitStore keeps it as numbers: [seconds, then per quantity
// present, mean, sem, count], restored bit for bit.
struct DimSummary {
  std::vector<std::optional<numerics::Estimate>> estimates;
  double seconds = 0;
  const numerics::Estimate* of(const Quantity& q) const {
    const auto& e = estimates[index_of(q)];
    return e ? &*e : nullptr;
  }
};

DimSummary summarize(const SimulationResult& r, double seconds) {
  DimSummary d;
  d.seconds = seconds;
  for (const auto& q : summarized_quantities()) {
    const numerics::Estimate* e = q.simulated(r);
    d.estimates.push_back(e ? std::optional<numerics::Estimate>(*e) : std::nullopt);
  }
  return d;
}

std::vector<double> encode(const DimSummary& d) {
  std::vector<double> v{d.seconds};
  for (const auto& e : d.estimates) {
    v.push_back(e ? 1.0 : 0.0);
    v.push_back(e ? e->mean : 0.0);
    v.push_back(e ? e->sem : 0.0);
    v.push_back(e ? static_cast<double>(e->count) : 0.0);
  }
  return v;
}

// nullopt when the numbers are not a summary of this layout (the unit is then recomputed).
std::optional<DimSummary> decode(const std::vector<double>& v) {
  if (v.size() != 1 + 4 * summarized_quantities().size()) return std::nullopt;
  DimSummary d;
  d.seconds = v[0];
  for (std::size_t i = 1; i < v.size(); i += 4) {
    if (v[i] == 0.0) {
      d.estimates.push_back(std::nullopt);
      continue;
    }
    numerics::Estimate e;
    e.mean = v[i + 1];
    e.sem = v[i + 2];
    e.count = static_cast<int>(v[i + 3]);
    d.estimates.push_back(e);
  }
  return d;
}

// (mean - reference) / se, the z-score of every comparison: 0 when se = 0 (a deterministic
// quantity), NaN when the reference is (a prediction that did not converge).
double z_score(const numerics::Estimate& e, double reference) {
  if (std::isnan(reference)) return reference;
  return e.sem > 0 ? (e.mean - reference) / e.sem : 0.0;
}

// The finite-D prediction as a Solution, so that each quantity reads it as it reads the theory.
theory::Solution as_solution(const theory::FiniteDimResult& fd) {
  theory::Solution predicted = fd.limit;
  predicted.error = fd.error;
  predicted.order = fd.order;
  predicted.test_shift = fd.test_shift;  // docs/finite_dim.md §21.11
  predicted.decomposition = fd.decomposition;  // algo at D (§21.17)
  return predicted;
}

ComparisonRow compare_row(const Quantity& q, bool enforced, const theory::Solution& th,
                          const std::vector<DimSummary>& sims, const VerifyOptions& o) {
  ComparisonRow row;
  row.quantity = q.name;
  row.enforced = enforced;
  row.theory = q.theory(th);
  std::vector<double> dims, means, sems;
  for (std::size_t k = 0; k < o.dims.size(); ++k) {
    const numerics::Estimate& st = *sims[k].of(q);
    PerDim pd;
    pd.dim = o.dims[k];
    pd.seeds = o.seeds[k];
    pd.mean = st.mean;
    pd.sem = st.sem;
    pd.z = z_score(st, row.theory);
    pd.rel = (st.mean - row.theory) / std::max(std::abs(row.theory), 1e-12);
    row.dims.push_back(pd);
    dims.push_back(o.dims[k]);
    means.push_back(st.mean);
    sems.push_back(st.sem);
  }
  row.extrapolated = extrapolate_inverse_d(dims, means, sems);
  const double dev = row.extrapolated.value - row.theory;
  row.rel_dev = dev / std::max(std::abs(row.theory), 1e-12);
  row.tolerance = o.k_se * row.extrapolated.se + o.rel_tol * std::abs(row.theory) + o.abs_tol;
  const bool holds = !enforced || std::abs(dev) <= row.tolerance;
  row.status = holds ? numerics::Status::Converged : numerics::Status::CheckFailed;
  return row;
}

// The simulation of a grid point at dims[k]. Its seeds derive from (base_seed, D) alone, so a
// kept summary is the one this run would compute.
SimOptions sim_options(const VerifyOptions& o, std::size_t k, const theory::Solution& th,
                       bool ridgeless) {
  SimOptions so;
  so.dim = o.dims[k];
  so.seeds = o.seeds[k];
  so.threads = o.threads;
  so.base_seed = numerics::derive_seed(o.base_seed, std::uint64_t(o.dims[k]));
  so.theory = theory_ref(th);
  so.min_norm = ridgeless;
  so.switches = o.switches;
  return so;
}

// The simulations against the finite-D prediction at each D (docs/simulation.md §14.5). The
// prediction is theory, recomputed on every run (never a checkpoint unit), with the switches of
// the simulation it is compared with.
FiniteDimReport finite_dim_report(const GridPoint& gp, const VerifyOptions& o,
                                  const theory::Solution& th, bool ridgeless,
                                  const std::vector<DimSummary>& sims) {
  FiniteDimReport rep;
  rep.available = true;
  rep.status = numerics::Status::Converged;
  for (std::size_t k = 0; k < sims.size(); ++k) {
    const std::string at = "D = " + std::to_string(o.dims[k]);
    theory::FiniteDimResult fd;
    try {
      fd = theory::solve_finite_dim(gp.params, finite_dim_options(sim_options(o, k, th, ridgeless)));
    } catch (const InvalidParams& e) {
      // The point is outside the finite-D theory (the interpolation peak, tau = 1 at the sizes
      // of D with lambda = 0): no rows.
      FiniteDimReport none;
      none.message = "no finite-D prediction at " + at + ": " + e.what();
      return none;
    }
    if (k == 0) rep.omitted = fd.omitted;
    if (!fd.converged() && rep.status == numerics::Status::Converged) {
      rep.status = fd.status;
      rep.message = "the finite-D prediction at " + at + " did not converge: " + fd.message;
    }
    const theory::Solution predicted = as_solution(fd);
    std::vector<Quantity> shown =
        compared_quantities(sims[k].of(shift_quantity()) && fd.test_shift);
    // The decomposition's algo and excess rows (docs/finite_dim.md §21.17).
    for (const auto& q : decomposition_quantities()) shown.push_back(q);
    for (const auto& q : shown) {
      if (sims[k].of(q) == nullptr) continue;
      const numerics::Estimate& st = *sims[k].of(q);
      FiniteDimRow row;
      row.dim = o.dims[k];
      row.quantity = q.name;
      row.prediction = q.theory(predicted);
      row.mean = st.mean;
      row.sem = st.sem;
      row.z = z_score(st, row.prediction);
      row.limit = q.theory(th);
      row.z_limit = z_score(st, row.limit);
      const theory::Errors& u = fd.validity.remainder;
      if (row.quantity == "error.tm") row.uncertainty = u.tm;
      if (row.quantity == "error.idg") row.uncertainty = u.idg;
      if (row.quantity == "error.odg") row.uncertainty = u.odg;
      rep.rows.push_back(std::move(row));
    }
  }
  return rep;
}

}  // namespace

std::vector<SimulationComparison> comparison(const SimulationResult& r) {
  std::vector<SimulationComparison> rows;
  if (!r.has_estimates() || !r.theory || !r.theory->converged()) return rows;
  std::optional<theory::Solution> predicted;
  if (r.finite_dim && r.finite_dim->converged()) predicted = as_solution(*r.finite_dim);
  const theory::BayesOptimal& bayes = r.theory->bayes_optimal;
  for (const Quantity& q : compared_quantities(r.shift.has_value())) {
    const numerics::Estimate* st = q.simulated(r);
    if (st == nullptr) continue;
    SimulationComparison c;
    c.quantity = q.name;
    c.mean = st->mean;
    c.sem = st->sem;
    c.theory = q.theory(*r.theory);
    c.z = z_score(*st, c.theory);
    if (predicted && (q.name != std::string("error.shift") || predicted->test_shift)) {
      c.finite_dim = q.theory(*predicted);
      c.z_finite_dim = z_score(*st, c.finite_dim);
    }
    const std::string name = q.name;
    if (name == "error.idg") c.bayes_optimal = bayes.idg;
    if (name == "error.odg") c.bayes_optimal = bayes.odg;
    if (name == "error.shift") c.bayes_optimal = bayes.shift;
    if (name == "error.tm" && r.bayes_tm) c.bayes_optimal = r.bayes_tm->mean;
    rows.push_back(std::move(c));
  }
  return rows;
}

PointResult verify_point(const GridPoint& gp, const VerifyOptions& o,
                         const numerics::Progress& progress, const numerics::UnitStore& store) {
  o.validate();
  PointResult res;
  res.point = gp;
  // Replaced once every simulation has converged (finite_dim_report).
  res.finite_dim.message = "not compared: the point's theory or a simulation did not converge";
  // lambda = 0 below tau = 1: the ridge solution tends to the minimum-norm one as lambda -> 0+,
  // whose D -> infinity limit is the ridgeless Letey/Lu branch (TM and order parameters from the
  // ridgeless limit of the replica solution, theory/lowrank.cpp).
  const bool ridgeless = ridgeless_point(gp.params);
  res.theory = theory::solve(gp.params, {.method = ridgeless ? theory::Method::Letey
                                                               : theory::Method::Saddle});
  if (!res.theory.converged()) {
    res.status = numerics::Status::NotConverged;
    res.message = "theory did not converge (residual " +
                  std::to_string(res.theory.residual_norm) + "): " + res.theory.message;
    return res;
  }
  std::vector<DimSummary> sims;
  for (std::size_t k = 0; k < o.dims.size(); ++k) {
    // A kept summary is the one this run would compute (sim_options); only converged
    // simulations are kept.
    const std::string key = "D" + std::to_string(o.dims[k]);
    std::optional<std::vector<double>> kept;
    if (store.load) kept = store.load(key);
    std::optional<DimSummary> summary = kept ? decode(*kept) : std::nullopt;
    if (!summary) {
      const SimOptions so = sim_options(o, k, res.theory, ridgeless);
      const auto t0 = numerics::Clock::now();
      const SimulationResult sim = run(gp.params, so);
      if (!sim.converged()) {
        res.status = sim.status;
        res.message = "simulation at D = " + std::to_string(o.dims[k]) + " did not converge: " +
                      sim.message;
        if (progress) progress(k + 1, o.dims.size(), gp.label + ": D = " + std::to_string(o.dims[k]));
        return res;
      }
      summary = summarize(sim, numerics::seconds_since(t0));
      if (store.save) store.save(key, encode(*summary));
    }
    res.seconds_per_dim.push_back(summary->seconds);
    sims.push_back(std::move(*summary));
    if (progress) progress(k + 1, o.dims.size(), gp.label + ": D = " + std::to_string(o.dims[k]));
  }
  for (const auto& q : compared_quantities(gp.params.has_test_shift())) {
    res.rows.push_back(compare_row(q, true, res.theory, sims, o));
    if (!res.rows.back().passed()) res.status = numerics::Status::CheckFailed;
  }
  for (const auto& q : informational_quantities())
    if (sims.front().of(q)) res.rows.push_back(compare_row(q, false, res.theory, sims, o));
  if (!res.passed()) res.message = "theory and extrapolated simulation disagree beyond tolerance";
  res.finite_dim = finite_dim_report(gp, o, res.theory, ridgeless, sims);
  return res;
}

VerifyResult run(const VerifyOptions& o, const numerics::Progress& progress,
                 const numerics::UnitStore& store) {
  o.validate();
  VerifyResult res;
  res.options = o;
  const std::size_t total = o.points.size() * o.dims.size();
  std::size_t done = 0;
  for (std::size_t i = 0; i < o.points.size(); ++i) {
    const GridPoint& gp = o.points[i];
    // Unit keys "p<i>_D<dim>": grid point i's simulation at one D.
    numerics::UnitStore point_store;
    std::string prefix = "p";  // (not "p" + ...: GCC 12 warns falsely on it, -Wrestrict)
    prefix += std::to_string(i) + "_";
    if (store.load)
      point_store.load = [&](const std::string& key) { return store.load(prefix + key); };
    if (store.save)
      point_store.save = [&](const std::string& key, const std::vector<double>& v) {
        store.save(prefix + key, v);
      };
    const auto on_progress = [&](std::size_t, std::size_t, const std::string& what) {
      if (progress) progress(++done, total, what);
    };
    res.points.push_back(verify_point(gp, o, on_progress, point_store));
    const PointResult& r = res.points.back();
    if (!r.passed() && res.passed()) {
      res.status = r.status;
      res.message = gp.label + ": " + r.message;
    }
  }
  return res;
}

}  // namespace icl::verify::lowrank
