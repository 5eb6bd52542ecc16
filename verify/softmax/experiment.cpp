// The softmax-attention check: one seed, the thread pool over (point, seed), the summary over
// seeds and the linear comparisons (see experiment.hpp).
#include "verify/softmax/experiment.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include "numerics/error.hpp"
#include "numerics/parallel.hpp"
#include "numerics/seed.hpp"
#include "verify/lowrank/simulator.hpp"
#include "numerics/timing.hpp"

namespace icl::verify::softmax {

namespace {

using numerics::Clock;
using numerics::seconds_since;

// The linear simulator at the same dimension, seeds, base seed, threads, task assignment and
// ODG kind, no prediction-distribution prompts: its TM/IDG/ODG test errors. The one place that
// reads verify::lowrank simulation results.
ByProtocol<numerics::Estimate> linear_simulation_errors(const theory::Params& p,
                                                        const SoftmaxOptions& o) {
  verify::lowrank::SimOptions so;
  so.dim = o.dim;
  so.seeds = o.seeds;
  so.base_seed = o.base_seed;
  so.threads = o.threads;
  so.odg = o.odg;
  so.switches.assignment = o.assignment;
  so.prediction_prompts = 0;
  const verify::lowrank::SimulationResult r = verify::lowrank::run(p, so);
  if (!r.converged()) throw NumericalError(r.message, r.residual_norm);
  return r.error;
}

// The linear theory and simulator at p. A point where either does not apply (InvalidParams) or
// fails (NumericalError) gets a note instead.
LinearComparison compare_linear(const theory::Params& p, const SoftmaxOptions& o) {
  LinearComparison c;
  try {
    p.validate_for_saddle_point();
    c.theory = theory::solve(p);
    if (!c.theory->converged())
      c.theory_note = "linear theory did not converge (residual " +
                      std::to_string(c.theory->residual_norm) + ")";
  } catch (const InvalidParams& e) {
    c.theory_note = std::string("no linear theory (") + e.what() + ")";
  }
  try {
    c.simulation = linear_simulation_errors(p, o);
  } catch (const InvalidParams& e) {
    c.simulation_note = std::string("no linear simulation (") + e.what() + ")";
  } catch (const NumericalError& e) {
    c.simulation_note = std::string("linear simulation failed (") + e.what() + ")";
  }
  return c;
}

void add_linear_comparisons(const std::vector<theory::Params>& points, const SoftmaxOptions& o,
                            const numerics::Progress& progress, std::vector<PointResult>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].linear = compare_linear(points[i], o);
    if (progress) progress(i + 1, out.size(), "linear");
  }
}

// Summary over seeds and the point's status.
PointResult summarize(const theory::Params& p, std::vector<SeedResult> seeds) {
  PointResult r;
  r.params = p;
  r.seeds = std::move(seeds);
  auto over_seeds = [&](auto get) {
    std::vector<double> v;
    v.reserve(r.seeds.size());
    for (const SeedResult& s : r.seeds) v.push_back(get(s));
    return numerics::estimate(v);
  };
  for (std::size_t k = 0; k < kProtocols.size(); ++k) {
    r.error[k] = over_seeds([&](const SeedResult& s) { return s.error[k]; });
    r.zero[k] = over_seeds([&](const SeedResult& s) { return s.zero[k]; });
  }
  TrainingSummary& t = r.training;
  t.epochs = over_seeds([](const SeedResult& s) { return double(s.training.epochs); });
  t.initial_loss = over_seeds([](const SeedResult& s) { return s.training.initial_loss; });
  t.final_loss = over_seeds([](const SeedResult& s) { return s.training.final_loss; });
  r.seed_seconds = over_seeds([](const SeedResult& s) { return s.seconds; });
  t.epochs_min = r.seeds.empty() ? 0 : r.seeds.front().training.epochs;
  r.residual_norm = 0;
  for (const SeedResult& s : r.seeds) {
    t.epochs_min = std::min(t.epochs_min, s.training.epochs);
    t.epochs_max = std::max(t.epochs_max, s.training.epochs);
    if (s.training.residual_norm > r.residual_norm) r.residual_norm = s.training.residual_norm;
    switch (s.training.status) {
      case numerics::Status::Converged: ++t.converged; break;
      case numerics::Status::NotConverged: ++t.not_converged; break;
      default: ++t.failed; break;
    }
  }
  const int S = int(r.seeds.size());
  if (t.failed > 0) {
    r.status = numerics::Status::NumericalFailure;
    r.message = std::to_string(t.failed) + " of " + std::to_string(S) +
                " seeds: training loss not finite";
  } else if (t.not_converged > 0) {
    r.status = numerics::Status::NotConverged;
    r.message = std::to_string(t.not_converged) + " of " + std::to_string(S) +
                " seeds reached the epoch cap before |loss change| < tol (the authors' "
                "protocol: their test errors are reported)";
  } else {
    r.status = numerics::Status::Converged;
    r.message = "every seed met |loss change| < tol";
  }
  return r;
}

}  // namespace

void SoftmaxOptions::validate() const {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2");
  if (seeds < 1) throw InvalidParams("seeds", "must be >= 1");
  numerics::check_threads(threads, false);
  if (attn_dim < 1 || attn_dim > 1000) throw InvalidParams("attn_dim", "must be in [1, 1000]");
  if (test_prompts < 1 || test_prompts > 10000000)
    throw InvalidParams("prompts", "must be in [1, 10000000]");
  const TrainOptions& t = train;
  if (!(t.lr >= 1e-12 && t.lr <= 10)) throw InvalidParams("lr", "must be in [1e-12, 10]");
  if (t.max_epochs < 1 || t.max_epochs > 10000000)
    throw InvalidParams("epochs", "must be in [1, 10000000]");
  if (!(t.tol >= 0 && t.tol <= 1)) throw InvalidParams("tol", "must be in [0, 1]");
  if (!(t.beta1 >= 0 && t.beta1 < 1) || !(t.beta2 >= 0 && t.beta2 < 1))
    throw InvalidParams("betas", "must be in [0, 1)");
  if (!(t.eps > 0)) throw InvalidParams("eps", "must be > 0");
}

void validate(const theory::Params& p, const SoftmaxOptions& o) {
  p.validate();
  if (!p.task_spectrum.empty())
    throw InvalidParams("task_spectrum", "the softmax check uses the paper's low-rank tasks only");
  o.validate();
  verify::lowrank::check_odg_kind(p, o.odg);
}

SeedResult run_seed(const theory::Params& p, const SoftmaxOptions& o, std::uint64_t seed) {
  const auto t0 = Clock::now();
  SeedResult out;
  out.seed = seed;
  Rng rng(seed);
  verify::lowrank::Sizes n;
  MatrixXd A, W;
  Model model;
  {
    TrainingData d = generate(p, o.dim, rng, o.assignment);
    n = d.n;
    A = std::move(d.A);
    W = std::move(d.W);
    model = init_model(n.D, o.attn_dim, rng, o.init);
    TrainOptions t = o.train;
    t.keep_history = false;
    out.training = train_adam(model, d.prompts, t);
  }
  const double D = n.D;
  MatrixXd B;  // ODG subspace
  if (o.odg == verify::lowrank::OdgKind::Subspace) B = verify::lowrank::haar_orthonormal(n.D, n.r, rng);

  const int chunk = 256;
  for (int k = 0; k < 3; ++k) {
    double err = 0, zero = 0;
    std::uniform_int_distribution<int> pick(0, n.M0 - 1);
    for (int start = 0; start < o.test_prompts; start += chunk) {
      const int cnt = std::min(chunk, o.test_prompts - start);
      MatrixXd tasks(n.D, cnt);
      if (k == 0) {
        for (int j = 0; j < cnt; ++j) tasks.col(j) = W.col(pick(rng));
      } else if (k == 1 || o.odg == verify::lowrank::OdgKind::Subspace) {
        NormalSampler nd(rng);
        MatrixXd V(n.r, cnt);
        nd.fill(V.data(), V.size(), 1.0);
        tasks = std::sqrt(D / n.r) * ((k == 1 ? A : B) * V);
      } else {
        NormalSampler nd(rng);
        nd.fill(tasks.data(), tasks.size(), 1.0);
      }
      const Prompts P = draw_prompts(tasks, n.Lt, p.sigma_test, rng);
      const VectorXd pred = predict(model, P);
      err += (pred - P.y).squaredNorm();
      zero += P.y.squaredNorm();
    }
    out.error[std::size_t(k)] = err / o.test_prompts;
    out.zero[std::size_t(k)] = zero / o.test_prompts;
  }
  out.seconds = seconds_since(t0);
  return out;
}

std::vector<PointResult> run(const std::vector<theory::Params>& points,
                                    const SoftmaxOptions& o, const numerics::Progress& progress) {
  for (const auto& p : points) validate(p, o);
  const std::size_t S = std::size_t(o.seeds);
  const std::size_t jobs = points.size() * S;
  std::vector<std::vector<SeedResult>> results(points.size(), std::vector<SeedResult>(S));
  std::vector<std::exception_ptr> errors(jobs);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::size_t done = 0;
  auto worker = [&] {
    for (std::size_t j; (j = next.fetch_add(1)) < jobs;) {
      const std::size_t pt = j / S, k = j % S;
      try {
        results[pt][k] = run_seed(points[pt], o, numerics::derive_seed(o.base_seed, k));
      } catch (...) {
        errors[j] = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (progress) progress(done, jobs, "softmax seed");
    }
  };
  const std::size_t nt = std::min<std::size_t>(std::size_t(o.threads), jobs);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < nt; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<PointResult> out;
  out.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    out.push_back(summarize(points[i], std::move(results[i])));
  if (o.compare_linear) add_linear_comparisons(points, o, progress, out);
  return out;
}

namespace {
// run(points) with the wall times of its two stages.
std::vector<PointResult> run_timed(const std::vector<theory::Params>& points,
                                   const SoftmaxOptions& o, const numerics::Progress& progress,
                                   double& softmax_seconds, double& linear_seconds) {
  SoftmaxOptions softmax_only = o;
  softmax_only.compare_linear = false;
  const auto t0 = Clock::now();
  std::vector<PointResult> out = run(points, softmax_only, progress);
  softmax_seconds = seconds_since(t0);
  const auto t1 = Clock::now();
  if (o.compare_linear) add_linear_comparisons(points, o, progress, out);
  linear_seconds = seconds_since(t1);
  return out;
}
}  // namespace

SoftmaxResult run(const theory::Params& p, const SoftmaxOptions& o,
                  const numerics::Progress& progress) {
  SoftmaxResult r;
  r.options = o;
  r.point = std::move(run_timed({p}, o, progress, r.softmax_seconds, r.linear_seconds).front());
  return r;
}

SweepResult run(const theory::Params& base, const std::vector<double>& rhos,
                const SoftmaxOptions& o, const numerics::Progress& progress) {
  if (rhos.empty()) throw InvalidParams("rho", "the sweep needs at least one value");
  std::vector<theory::Params> pts;
  for (double rho : rhos) {
    if (!(rho > 0 && rho <= 1))
      throw InvalidParams("rho", "sweep values must be in (0, 1], got " + std::to_string(rho));
    theory::Params q = base;
    q.rho = rho;
    pts.push_back(q);
  }
  SweepResult r;
  r.options = o;
  r.base = base;
  r.rhos = rhos;
  r.points = run_timed(pts, o, progress, r.softmax_seconds, r.linear_seconds);
  return r;
}

}  // namespace icl::verify::softmax
