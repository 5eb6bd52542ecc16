// The softmax-attention check (verify/softmax): data conventions, gradient vs central finite
// differences, a small training run and its convergence status, reproducibility and
// thread-count independence, option validation, the typed results and their serializers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "numerics/error.hpp"
#include "numerics/seed.hpp"
#include "verify/lowrank/simulator.hpp"
#include "verify/softmax/experiment.hpp"
#include "verify/softmax/serialize.hpp"
#include "verify/softmax/softmax.hpp"

using namespace icl::verify::softmax;
using icl::numerics::Status;
using icl::theory::Params;

namespace {

Params small_params() {
  return Params{.alpha = 2, .tau = 1.5, .kappa = 0.5, .rho = 0.5, .sigma = 0.01, .lambda = 0};
}

// Every parameter of the model as one list of references.
std::vector<double*> coordinates(Model& m) {
  std::vector<double*> c;
  for (Eigen::Index i = 0; i < m.WQ.size(); ++i) c.push_back(m.WQ.data() + i);
  for (Eigen::Index i = 0; i < m.WK.size(); ++i) c.push_back(m.WK.data() + i);
  for (Eigen::Index i = 0; i < m.v.size(); ++i) c.push_back(m.v.data() + i);
  return c;
}
std::vector<double> flatten(const Gradient& g) {
  std::vector<double> f(g.WQ.data(), g.WQ.data() + g.WQ.size());
  f.insert(f.end(), g.WK.data(), g.WK.data() + g.WK.size());
  f.insert(f.end(), g.v.data(), g.v.data() + g.v.size());
  return f;
}

// A small, fast run: D = 6, no linear comparisons.
SoftmaxOptions tiny_options(int seeds, int max_epochs, int test_prompts) {
  SoftmaxOptions o;
  o.dim = 6;
  o.seeds = seeds;
  o.train.max_epochs = max_epochs;
  o.test_prompts = test_prompts;
  o.compare_linear = false;
  return o;
}

// Every seed's measurements except timings.
std::vector<std::vector<double>> strip(const PointResult& r) {
  std::vector<std::vector<double>> out;
  for (const SeedResult& s : r.seeds)
    out.push_back({double(s.seed), s.error.tm, s.error.idg, s.error.odg, s.zero.tm, s.zero.idg,
                   s.zero.odg, double(s.training.epochs), double(int(s.training.status)),
                   s.training.initial_loss, s.training.final_loss});
  return out;
}

}  // namespace

TEST_CASE("softmax data: the same A, tasks and assignment as the linear simulator's generator") {
  const Params p = small_params();
  for (auto as : {icl::verify::lowrank::Assignment::Random, icl::verify::lowrank::Assignment::Balanced}) {
    Rng r1(123), r2(123);
    const TrainingData d = generate(p, 12, r1, as);
    const icl::verify::lowrank::Dataset lin =
        icl::verify::lowrank::generate(p, 12, r2, icl::verify::lowrank::Sampler::Factorized,
                                       {.assignment = as});
    CHECK(d.n.r == 6);
    CHECK(d.n.M0 == 6);
    CHECK(d.n.N == 216);
    CHECK(d.n.L == 24);
    CHECK((d.A - lin.A).cwiseAbs().maxCoeff() == 0.0);
    CHECK((d.W - lin.W).cwiseAbs().maxCoeff() == 0.0);
    CHECK(d.task == lin.task);
    // Prompt layout: T = L + 1 tokens, labels in the last row, the query's label is 0 and the
    // target is the noisy label w.x_q + sigma eps.
    const Prompts& P = d.prompts;
    CHECK(P.T == 25);
    CHECK(P.Z.rows() == 13);
    CHECK(P.Z.cols() == 216 * 25);
    double max_resid = 0;
    for (int n = 0; n < P.count(); ++n) {
      const Eigen::VectorXd w = d.W.col(d.task[n]);
      CHECK(P.Z(12, n * 25 + 24) == 0.0);
      max_resid = std::max(max_resid, std::abs(P.y(n) - w.dot(P.Z.col(n * 25 + 24).head(12))));
      for (int l = 0; l < 24; ++l) {
        const double e = P.Z(12, n * 25 + l) - w.dot(P.Z.col(n * 25 + l).head(12));
        max_resid = std::max(max_resid, std::abs(e));
      }
    }
    CHECK(max_resid < 0.01 * 6);  // noise std 0.01
    CHECK(max_resid > 0.0);
  }
}

TEST_CASE("softmax data: token scale x ~ N(0, I/D) and |w|^2/D ~ 1") {
  Params p = small_params();
  Rng rng(5);
  const TrainingData d = generate(p, 20, rng);
  const auto X = d.prompts.Z.topRows(20);
  const double mean_sq = X.squaredNorm() / double(X.cols());  // E|x|^2 = 1
  CHECK(mean_sq == doctest::Approx(1.0).epsilon(0.02));
  CHECK(d.W.colwise().squaredNorm().mean() / 20.0 == doctest::Approx(1.0).epsilon(0.5));
  CHECK((d.W - d.A * (d.A.transpose() * d.W)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("softmax init: Flux glorot_uniform (the authors') and PyTorch nn.Linear bounds, seeded") {
  Rng r1(9), r2(9);
  const Model a = init_model(15, 4, r1), b = init_model(15, 4, r2);
  CHECK(a.WQ.rows() == 4);
  CHECK(a.WQ.cols() == 16);
  CHECK(a.WK.rows() == 4);
  CHECK(a.v.size() == 16);
  CHECK((a.WQ - b.WQ).norm() == 0.0);
  CHECK((a.v - b.v).norm() == 0.0);
  const double bqk = std::sqrt(6.0 / 20.0), bv = std::sqrt(6.0 / 32.0);
  CHECK(a.WQ.cwiseAbs().maxCoeff() <= bqk);
  CHECK(a.WK.cwiseAbs().maxCoeff() <= bqk);
  CHECK(a.v.cwiseAbs().maxCoeff() <= bv);
  CHECK(a.WQ.cwiseAbs().maxCoeff() > 0.25);  // beyond the PyTorch bound: glorot is wider
  Rng r3(9);
  const Model t = init_model(15, 4, r3, Init::Torch);
  CHECK(t.WQ.cwiseAbs().maxCoeff() <= 0.25);
  CHECK(t.v.cwiseAbs().maxCoeff() <= 0.25);
  CHECK((t.WQ / 0.25 - a.WQ / bqk).cwiseAbs().maxCoeff() < 1e-15);  // same draws, rescaled
  // Roughly uniform: mean square bound^2 / 3.
  Rng r4(10);
  const Model big = init_model(15, 400, r4, Init::Torch);
  CHECK(big.WQ.squaredNorm() / big.WQ.size() == doctest::Approx(0.25 * 0.25 / 3).epsilon(0.05));
  Rng r5(10);
  const Model bigg = init_model(15, 400, r5);
  CHECK(bigg.WQ.squaredNorm() / bigg.WQ.size() == doctest::Approx(6.0 / 416 / 3).epsilon(0.05));
  CHECK(to_string(init_from_string("torch")) == std::string("torch"));
  CHECK_THROWS_AS(init_from_string("he"), icl::InvalidParams);
}

TEST_CASE("softmax gradient matches central finite differences (relative error < 1e-6)") {
  for (int attn : {1, 4}) {
    Params p = small_params();
    p.sigma = 0.3;
    Rng rng(77 + attn);
    TrainingData d = generate(p, 6, rng);
    Model m = init_model(6, attn, rng);
    // Larger weights than at initialization so that the softmax is far from uniform.
    m.WQ *= 3.0;
    m.WK *= 3.0;
    m.v *= 2.0;
    Gradient g;
    const double L0 = loss_and_gradient(m, d.prompts, g);
    CHECK(L0 == doctest::Approx(loss(m, d.prompts)).epsilon(1e-14));
    const std::vector<double> an = flatten(g);
    auto coords = coordinates(m);
    REQUIRE(coords.size() == an.size());
    double diff2 = 0, norm2 = 0, worst = 0;
    const double h = 1e-5;
    for (std::size_t i = 0; i < coords.size(); ++i) {
      const double x0 = *coords[i];
      *coords[i] = x0 + h;
      const double lp = loss(m, d.prompts);
      *coords[i] = x0 - h;
      const double lm = loss(m, d.prompts);
      *coords[i] = x0;
      const double fd = (lp - lm) / (2 * h);
      diff2 += (fd - an[i]) * (fd - an[i]);
      norm2 += an[i] * an[i];
      worst = std::max(worst, std::abs(fd - an[i]) / std::max(1e-3, std::abs(an[i])));
    }
    const double rel = std::sqrt(diff2 / norm2);
    INFO("attn " << attn << ": relative error " << rel << ", worst coordinate " << worst);
    CHECK(norm2 > 0);
    CHECK(rel < 1e-6);
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("softmax forward: prediction is the attention average of v . t_i") {
  Params p = small_params();
  Rng rng(3);
  TrainingData d = generate(p, 5, rng);
  Model m = init_model(5, 2, rng);
  const Eigen::VectorXd pred = predict(m, d.prompts);
  const int T = d.prompts.T;
  for (int n : {0, 7}) {
    const auto Zn = d.prompts.Z.middleCols(n * T, T);
    const Eigen::VectorXd u = m.WK.transpose() * (m.WQ * Zn.col(T - 1));
    Eigen::VectorXd s = Zn.transpose() * u / std::sqrt(2.0);
    s = (s.array() - s.maxCoeff()).exp();
    s /= s.sum();
    // Full W_V: only its last row enters.
    const double ref = (m.v.transpose() * Zn * s)(0);
    CHECK(pred(n) == doctest::Approx(ref).epsilon(1e-13));
  }
}

TEST_CASE("softmax small training run: loss decreases, IDG beats the zero predictor") {
  // D = 8 with the paper's tau = 1.5, kappa = 0.5 (N = 96 sequences, M0 = 4 tasks) overfits
  // (training loss ~0.1, IDG worse than predicting 0); a data-richer small setting learns:
  // N = 256 sequences, M0 = 16 tasks, rank-1 task subspace, lr 1e-2, 400 epochs, 3 seeds.
  Params p = small_params();
  p.tau = 4;
  p.kappa = 2;
  p.rho = 0.125;
  SoftmaxOptions o;
  o.dim = 8;
  o.seeds = 3;
  o.threads = 2;
  o.train.max_epochs = 400;
  o.train.lr = 1e-2;
  o.test_prompts = 1000;
  o.compare_linear = false;
  const PointResult e = run(p, o).point;
  const double l0 = e.training.initial_loss.mean, l1 = e.training.final_loss.mean;
  const double idg = e.error.idg.mean, zero = e.zero.idg.mean;
  INFO("loss " << l0 << " -> " << l1 << ", IDG " << idg << " vs zero " << zero << ", TM "
               << e.error.tm.mean << " vs zero " << e.zero.tm.mean);
  CHECK(l1 < 0.6 * l0);
  CHECK(idg < 0.7 * zero);
  CHECK(e.error.tm.mean < 0.7 * e.zero.tm.mean);
  REQUIRE(e.seeds.size() == 3);
  for (const SeedResult& s : e.seeds) CHECK(s.error.idg < s.zero.idg);

  // The default protocol (lr 1e-3) also decreases the loss monotonically at the start.
  Rng rng(4);
  TrainingData d = generate(p, 8, rng);
  Model m = init_model(8, 4, rng);
  TrainOptions t;
  t.max_epochs = 100;
  t.keep_history = true;
  const TrainLog log = train_adam(m, d.prompts, t);
  REQUIRE(log.history.size() == 100);
  CHECK(log.epochs == 100);
  CHECK_FALSE(log.converged());
  // The epoch cap stopped it: NotConverged with the last loss change as the residual.
  CHECK(log.status == Status::NotConverged);
  CHECK(log.residual_norm == std::abs(log.history[99] - log.history[98]));
  CHECK(log.residual_norm >= t.tol);
  CHECK(log.history.back() < log.history.front());
  CHECK(log.final_loss < log.history.back());
}

TEST_CASE("softmax stopping criterion: |loss change| < tol ends training") {
  Params p = small_params();
  Rng rng(8);
  TrainingData d = generate(p, 6, rng);
  Model m = init_model(6, 4, rng);
  TrainOptions t;
  t.max_epochs = 5000;
  t.tol = 1e-4;
  t.keep_history = true;
  const TrainLog log = train_adam(m, d.prompts, t);
  REQUIRE(log.converged());
  REQUIRE(log.status == Status::Converged);
  REQUIRE(log.epochs >= 2);
  CHECK(log.epochs < 5000);
  const auto& h = log.history;
  CHECK(std::abs(h[h.size() - 1] - h[h.size() - 2]) < 1e-4);
  CHECK(log.residual_norm == std::abs(h[h.size() - 1] - h[h.size() - 2]));
  for (std::size_t i = 1; i + 1 < h.size(); ++i) CHECK(std::abs(h[i] - h[i - 1]) >= 1e-4);
}

TEST_CASE("softmax runs are reproducible and independent of the thread count") {
  Params p = small_params();
  SoftmaxOptions o = tiny_options(3, 60, 200);
  std::vector<Params> pts{p, p};
  pts[1].rho = 1.0;
  o.threads = 1;
  const auto a = run(pts, o);
  const auto b = run(pts, o);
  o.threads = 3;
  const auto c = run(pts, o);
  const auto single = run(pts[1], o).point;
  REQUIRE(a.size() == 2);
  for (int i = 0; i < 2; ++i) {
    CHECK(strip(a[i]) == strip(b[i]));
    CHECK(strip(a[i]) == strip(c[i]));
  }
  CHECK(strip(single) == strip(a[1]));
  CHECK(strip(a[0]) != strip(a[1]));
  CHECK(a[0].error.idg.count == 3);
  CHECK(a[0].error.idg.sem > 0);
  // Seed k of every point is derive_seed(base, k).
  for (int k = 0; k < 3; ++k)
    CHECK(a[0].seeds[k].seed == icl::numerics::derive_seed(o.base_seed, std::uint64_t(k)));
  // A different base seed changes the numbers.
  o.base_seed += 1;
  CHECK(strip(run(std::vector<Params>{p}, o)[0]) != strip(a[0]));
}

TEST_CASE("softmax options are validated naming the field") {
  Params p = small_params();
  SoftmaxOptions o;
  o.attn_dim = 0;
  CHECK_THROWS_AS(validate(p, o), icl::InvalidParams);
  o = SoftmaxOptions{};
  o.train.max_epochs = 0;
  try {
    validate(p, o);
    FAIL("no throw");
  } catch (const icl::InvalidParams& e) {
    CHECK(e.field() == "epochs");
  }
  p.task_spectrum = icl::theory::power_law_spectrum(1.0, 4);
  CHECK_THROWS_AS(validate(p, SoftmaxOptions{}), icl::InvalidParams);
}

TEST_CASE("SoftmaxOptions::validate names each out-of-range field, and the defaults are valid") {
  CHECK_NOTHROW(SoftmaxOptions{}.validate());
  auto field_of = [](const SoftmaxOptions& o) -> std::string {
    try {
      o.validate();
    } catch (const icl::InvalidParams& e) {
      return e.field();
    }
    return "(none)";
  };
  auto with = [](auto change) {
    SoftmaxOptions o;
    change(o);
    return o;
  };
  CHECK(field_of(with([](SoftmaxOptions& o) { o.dim = 1; })) == "dim");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.seeds = 0; })) == "seeds");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.threads = 0; })) == "threads");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.attn_dim = 0; })) == "attn_dim");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.test_prompts = 0; })) == "prompts");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.lr = 0; })) == "lr");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.lr = std::nan(""); })) == "lr");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.max_epochs = 0; })) == "epochs");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.tol = -1; })) == "tol");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.beta1 = 1; })) == "betas");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.beta2 = -0.1; })) == "betas");
  CHECK(field_of(with([](SoftmaxOptions& o) { o.train.eps = 0; })) == "eps");
  // The entries validate too, before any work.
  SoftmaxOptions bad;
  bad.seeds = 0;
  CHECK_THROWS_AS(run(small_params(), bad), icl::InvalidParams);
  CHECK_THROWS_AS(run(small_params(), {0.5, 1.5}, SoftmaxOptions{}), icl::InvalidParams);
  CHECK_THROWS_AS(run(small_params(), {}, SoftmaxOptions{}), icl::InvalidParams);
}

TEST_CASE("softmax typed result: per-protocol estimates and training facts match the seeds") {
  Params p = small_params();
  SoftmaxOptions o = tiny_options(3, 40, 100);
  const PointResult r = run(p, o).point;
  REQUIRE(r.seeds.size() == 3);
  for (std::size_t k = 0; k < kProtocols.size(); ++k) {
    std::vector<double> err, zero;
    for (const SeedResult& s : r.seeds) {
      err.push_back(s.error[k]);
      zero.push_back(s.zero[k]);
    }
    const icl::numerics::Estimate e = icl::numerics::estimate(err), z = icl::numerics::estimate(zero);
    INFO("protocol " << kProtocols[k]);
    CHECK(r.error[k].mean == e.mean);
    CHECK(r.error[k].sem == e.sem);
    CHECK(r.error[k].count == 3);
    CHECK(r.zero[k].mean == z.mean);
    CHECK(r.zero[k].sem == z.sem);
  }
  // The named members are the indexed ones, in the order tm, idg, odg.
  CHECK(&r.error[0] == &r.error.tm);
  CHECK(&r.error[1] == &r.error.idg);
  CHECK(&r.error[2] == &r.error.odg);
  CHECK(r.error.tm.mean != r.error.idg.mean);
  // 40 epochs with tol 1e-5: every seed reached the cap; the errors are still reported.
  CHECK(r.training.converged == 0);
  CHECK(r.training.not_converged == 3);
  CHECK(r.training.epochs_min == 40);
  CHECK(r.training.epochs_max == 40);
  CHECK(r.training.epochs.mean == 40);
  CHECK(r.status == Status::NotConverged);
  double worst = 0;
  for (const SeedResult& s : r.seeds) {
    CHECK(s.training.status == Status::NotConverged);
    CHECK(std::isfinite(s.error.idg));
    worst = std::max(worst, s.training.residual_norm);
  }
  CHECK(r.residual_norm == worst);
  CHECK(std::isfinite(r.error.idg.mean));
  std::vector<double> fl;
  for (const SeedResult& s : r.seeds) fl.push_back(s.training.final_loss);
  CHECK(r.training.final_loss.mean == icl::numerics::estimate(fl).mean);
  // A loose tolerance: every seed meets the rule, the point is Converged.
  o.train.tol = 0.5;
  const PointResult c = run(p, o).point;
  CHECK(c.training.converged == 3);
  CHECK(c.training.not_converged == 0);
  CHECK(c.status == Status::Converged);
}

TEST_CASE("softmax serializers: JSON keys of icl softmax, one TSV cell per column") {
  Params p = small_params();
  SoftmaxOptions o = tiny_options(2, 20, 50);
  o.compare_linear = true;
  const SoftmaxResult r = run(p, o);
  REQUIRE(r.point.linear.theory.has_value());
  REQUIRE(r.point.linear.simulation.has_value());
  const auto j = to_json(r);
  for (const char* key : {"params", "dim", "seeds", "base_seed", "sizes", "test_prompts",
                          "odg_kind", "assignment", "model", "error", "zero_predictor",
                          "training", "linear_theory", "linear_simulation", "timing"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["error"]["idg"]["mean"].get<double>() == r.point.error.idg.mean);
  CHECK(j["linear_simulation"]["error"]["odg"]["sem"].get<double>() ==
        r.point.linear.simulation->odg.sem);
  CHECK(j["training"]["converged"].get<int>() == r.point.training.converged);
  CHECK(j["training"]["status"].get<std::string>() == "not_converged");
  CHECK(to_text(r).find("softmax attention, D = 6, 2 seeds") == 0);
  const auto cols = sweep_columns();
  CHECK(cols.front() == "rho");
  CHECK(sweep_row(r.point).size() == cols.size());
  // Without the linear comparisons: null in JSON.
  o.compare_linear = false;
  const auto j2 = to_json(run(p, o));
  CHECK(j2["linear_theory"].is_null());
  CHECK(j2["linear_simulation"].is_null());
}
