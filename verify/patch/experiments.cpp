// run_dynamics, run_thought, run_align, run_train and the pieces the experiments share
// (docs/patch.md §9-§11, §13). run_check is in check.cpp.
#include "verify/patch/experiments.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/seed.hpp"
#include "verify/patch/detail/experiment_common.hpp"

namespace icl::verify::patch {

TrainOptions default_pretraining() {
  TrainOptions t;
  t.steps = 0;
  t.n_ctx = 0;
  return t;
}

std::string to_string(Precision p) { return p == Precision::Double ? "double" : "float"; }
Precision precision_from_string(const std::string& s) {
  if (s == "double") return Precision::Double;
  if (s == "float") return Precision::Float;
  throw InvalidParams("precision", "must be double or float (got '" + s + "')");
}

std::optional<TrainResult> pretrain(Weights<double>& w, TrainOptions o, std::uint64_t seed,
                                    int context, const numerics::Progress& progress) {
  if (o.steps <= 0) return std::nullopt;
  o.d = w.config.token_dim - 1;
  o.seed = numerics::derive_seed(seed, "training");
  if (o.n_ctx == 0) o.n_ctx = context;
  return train(w, o, progress);
}

void validate_pretraining(const TrainOptions& t) {
  if (t.steps < 0) throw InvalidParams("train_steps", "must be >= 0");
  if (t.steps == 0) return;
  TrainOptions c = t;
  if (c.n_ctx == 0) c.n_ctx = 1;  // 0: the experiment's context
  c.validate();
}

namespace detail {

std::string short_number(double v) { return numerics::format_significant(v, 3); }

void validate_common(const ModelSource& model, int context, int min_context, int prompts,
                     const TrainOptions& training) {
  model.spec.validate();
  if (context < min_context)
    throw InvalidParams("context", "must be >= " + std::to_string(min_context));
  if (prompts < 1) throw InvalidParams("prompts", "must be >= 1");
  validate_pretraining(training);
}

}  // namespace detail

namespace {

// A one-block model: random from `src` with layers 1, or loaded (then it must have one block).
Weights<double> one_block_model(ModelSource src, std::uint64_t seed, const char* what) {
  src.spec.layers = 1;
  Weights<double> w = make_model(src, numerics::derive_seed(seed, "weights"));
  if (w.config.layers != 1)
    throw InvalidParams("weights", std::string(what) + " needs a one-block model, '" +
                                       src.weights + "' has " + std::to_string(w.config.layers));
  return w;
}

// An experiment on a one-block model built from its options (random or loaded, then trained
// when options.training.steps > 0): `run` on that model, plus where the model came from.
template <class Result, class Options>
Result on_one_block(const Options& o, const char* what, const numerics::Progress& progress,
                    Result (*run)(const Weights<double>&, const Options&, const numerics::Progress&)) {
  o.validate();
  Weights<double> w = one_block_model(o.model, o.seed, what);
  std::optional<TrainResult> training = pretrain(w, o.training, o.seed, o.context, progress);
  Result r = run(w, o, progress);
  r.weights = o.model.weights;
  r.training = std::move(training);
  return r;
}

}  // namespace

// ---- dynamics --------------------------------------------------------------------------------

void DynamicsOptions::validate() const {
  detail::validate_common(model, context, 2, prompts, training);
  if (!(tol > 0)) throw InvalidParams("tol", "must be > 0");
}

DynamicsMeasure measure_dynamics(const Weights<double>& w, const std::vector<Prompt>& prompts,
                                 const numerics::Progress& progress) {
  DynamicsMeasure m;
  if (prompts.empty()) return m;
  std::size_t done = 0;
  const int n = static_cast<int>(prompts[0].tokens.cols()) - 1;
  m.fit_from = std::max(2, n / 8);
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(n));
  double slope = 0;
  for (const Prompt& p : prompts) {
    const ImplicitDynamics r = implicit_dynamics(w, p.tokens, m.fit_from);
    for (std::size_t i = 0; i < samples.size(); ++i) samples[i].push_back(r.steps[i]);
    m.prefix_max_rel = std::max(m.prefix_max_rel, r.prefix_max_rel);
    m.gd_max_rel = std::max(m.gd_max_rel, r.gd_max_rel);
    m.slopes.push_back(r.slope);
    slope += r.slope;
    if (progress) progress(++done, prompts.size(), "prompt");
  }
  m.slope_mean_over_prompts = slope / static_cast<double>(prompts.size());
  std::vector<double> xs, ys;
  for (int i = 1; i <= n; ++i) {
    m.steps.push_back(numerics::estimate(samples[static_cast<std::size_t>(i) - 1]));
    if (i >= m.fit_from) {
      xs.push_back(i);
      ys.push_back(m.steps.back().mean);
    }
  }
  std::tie(m.slope_of_mean_curve, m.intercept_of_mean_curve) = loglog_fit(xs, ys);
  return m;
}

DynamicsResult run_dynamics(const DynamicsOptions& o, const numerics::Progress& progress) {
  o.validate();
  ModelSource src = o.model;  // one plain block (docs/patch.md §9)
  src.spec.layers = 1;
  src.spec.residual = src.spec.pre_ln = false;
  const std::uint64_t init = numerics::derive_seed(o.seed, "weights");
  Weights<double> wa = make_model(src, init);
  ModelSource rsrc = src;
  rsrc.spec.kind = LayerKind::Rnn;
  rsrc.weights = o.rnn_weights;
  Weights<double> wr = make_model(rsrc, init);
  if (wa.config.token_dim != wr.config.token_dim)
    throw InvalidParams("rnn_weights", "the attention and RNN models have different token_dim");
  const auto prompts = make_prompts(wa.config.token_dim - 1, o.context, o.prompts,
                                    numerics::derive_seed(o.seed, "prompts"));
  DynamicsResult r;
  r.context = o.context;
  r.prompts = o.prompts;
  r.tolerance = o.tol;
  auto model = [&](DynamicsModel& m, Weights<double>& w, const std::string& file) {
    m.config = w.config;
    m.label = file.empty() ? "random" : "loaded";
    m.weights = file;
    // Each prompt's prefix patches take O(context) block evaluations: progress per prompt.
    const std::string kind = w.config.kind == LayerKind::Rnn ? "rnn" : "attention";
    const auto per_prompt = [&](const std::string& stage) -> numerics::Progress {
      if (!progress) return {};
      return [&progress, stage](std::size_t d, std::size_t n, const std::string& what) {
        progress(d, n, stage + " " + what);
      };
    };
    m.initial = measure_dynamics(w, prompts, per_prompt(kind));
    m.training = pretrain(w, o.training, o.seed, o.context, progress);
    if (m.training) m.trained = measure_dynamics(w, prompts, per_prompt(kind + " trained"));
  };
  model(r.attention, wa, o.model.weights);
  model(r.rnn, wr, o.rnn_weights);
  double worst = 0;
  for (const DynamicsModel* m : {&r.attention, &r.rnn}) {
    worst = std::max({worst, m->initial.prefix_max_rel, m->initial.gd_max_rel});
    if (m->trained) worst = std::max({worst, m->trained->prefix_max_rel, m->trained->gd_max_rel});
  }
  const bool ok = worst <= o.tol;
  r.status = ok ? numerics::Status::Converged : numerics::Status::CheckFailed;
  r.message = std::string(ok ? "prefix and online-GD identities hold" : "identity failed") +
              ": max rel diff " + detail::short_number(worst) + (ok ? " <= tol " : " > tol ") +
              detail::short_number(o.tol);
  return r;
}

// ---- thought ---------------------------------------------------------------------------------

void ThoughtOptions::validate() const {
  detail::validate_common(model, context, 1, prompts, training);
  if (m_values.empty()) throw InvalidParams("m", "needs at least one calibration size");
  for (int m : m_values)
    if (m < 1) throw InvalidParams("m", "calibration sizes must be >= 1");
  if (heldout < 1) throw InvalidParams("heldout", "must be >= 1");
  if (!(ridge > 0) || !std::isfinite(ridge)) throw InvalidParams("ridge", "must be > 0");
}

ThoughtResult run_thought(const ThoughtOptions& o, const numerics::Progress& progress) {
  return on_one_block<ThoughtResult, ThoughtOptions>(o, "the thought patch", progress, &run_thought);
}

ThoughtResult run_thought(const Weights<double>& w, const ThoughtOptions& o,
                          const numerics::Progress& progress) {
  o.validate();
  if (w.config.layers != 1) throw InvalidParams("layers", "the thought patch needs a one-block model");
  ThoughtResult r;
  r.model = w;
  r.config = w.config;
  r.context = o.context;
  r.prompts = o.prompts;
  r.heldout = o.heldout;
  r.ridge = o.ridge;
  const auto prompts = make_prompts(w.config.token_dim - 1, o.context, o.prompts,
                                    numerics::derive_seed(o.seed, "prompts"));
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    r.per_prompt.push_back(thought_patch(w, Mat<double>(prompts[k].tokens.leftCols(o.context)), o,
                                         numerics::derive_seed(o.seed, "calibration", k)));
    if (progress) progress(k + 1, prompts.size(), "context");
  }
  for (std::size_t i = 0; i < o.m_values.size(); ++i) {
    ThoughtSummary s;
    s.m = o.m_values[i];
    auto est = [&](double ThoughtRow::*f) {
      std::vector<double> v;
      for (const auto& rows : r.per_prompt) v.push_back(rows[i].*f);
      return numerics::estimate(v);
    };
    s.train_err = est(&ThoughtRow::train_err);
    s.heldout_err = est(&ThoughtRow::heldout_err);
    s.train_avg = est(&ThoughtRow::train_avg);
    s.heldout_avg = est(&ThoughtRow::heldout_avg);
    s.heldout_none = est(&ThoughtRow::heldout_none);
    s.train_no_db2 = est(&ThoughtRow::train_no_db2);
    s.heldout_no_db2 = est(&ThoughtRow::heldout_no_db2);
    s.db2_norm = est(&ThoughtRow::db2_norm);
    if (!std::isfinite(s.heldout_err.mean) || !std::isfinite(s.train_err.mean)) {
      r.status = numerics::Status::NumericalFailure;
      r.message = "non-finite thought-patch error at m = " + std::to_string(s.m);
    }
    r.summary.push_back(s);
  }
  return r;
}

// ---- align -----------------------------------------------------------------------------------

void AlignOptions::validate() const {
  detail::validate_common(model, context, 1, prompts, training);
  if (protocols.empty()) throw InvalidParams("protocol", "needs at least one protocol");
  for (std::size_t i = 0; i < protocols.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (protocols[k] == protocols[i])
        throw InvalidParams("protocol", "'" + to_string(protocols[i]) + "' given twice");
  if (steps.empty()) throw InvalidParams("sgd_steps", "needs at least one step count");
  for (int s : steps)
    if (s < 1) throw InvalidParams("sgd_steps", "step counts must be >= 1");
  if (!(lr > 0) || !std::isfinite(lr)) throw InvalidParams("sgd_lr", "must be > 0");
}

AlignResult run_align(const AlignOptions& o, const numerics::Progress& progress) {
  AlignResult r = on_one_block<AlignResult, AlignOptions>(o, "alignment", progress, &run_align);
  r.trained = r.training.has_value() || !o.model.weights.empty();
  return r;
}

AlignResult run_align(const Weights<double>& w, const AlignOptions& o,
                      const numerics::Progress& progress) {
  o.validate();
  if (w.config.layers != 1) throw InvalidParams("layers", "alignment needs a one-block model");
  AlignResult r;
  r.model = w;
  r.config = w.config;
  r.context = o.context;
  r.prompts = o.prompts;
  r.lr = o.lr;
  r.random_control = o.random_control;
  const auto prompts = make_prompts(w.config.token_dim - 1, o.context, o.prompts,
                                    numerics::derive_seed(o.seed, "prompts"));
  // The random-weight control: the same shape, fresh weights (docs/patch.md §11, §14.1).
  const Weights<double> random =
      init_weights(w.config, {.seed = numerics::derive_seed(o.seed, "random-weights")});
  const std::size_t total = o.protocols.size() * (o.random_control ? 2 : 1);
  std::size_t done = 0;
  for (AlignProtocol p : o.protocols) {
    AlignCurve c = align_curve(w, prompts, p, o.steps, o.lr);
    if (progress) progress(++done, total, to_string(p));
    if (o.random_control) {
      const AlignCurve rc = align_curve(random, prompts, p, o.steps, o.lr);
      c.random = rc.same;
      c.summary_random = rc.summary;
      if (progress) progress(++done, total, to_string(p) + " (random weights)");
    }
    if (!std::isfinite(c.summary.mean) && r.status == numerics::Status::Converged) {
      r.status = numerics::Status::NumericalFailure;
      r.message = "non-finite cos_F (" + to_string(p) + ")";
    }
    r.curves.push_back(std::move(c));
  }
  return r;
}

// ---- train -----------------------------------------------------------------------------------

void TrainRunOptions::validate() const {
  model.spec.validate();
  training.validate();
}

TrainRunResult run_train(const TrainRunOptions& o, const numerics::Progress& progress) {
  o.validate();
  TrainRunResult r;
  r.seed = o.seed;
  r.initial = make_model(o.model, numerics::derive_seed(o.seed, "weights"));
  r.weights = r.initial;
  r.config = r.weights.config;
  TrainOptions t = o.training;
  t.d = r.config.token_dim - 1;
  t.seed = numerics::derive_seed(o.seed, "training");
  r.training = train(r.weights, t, progress);
  return r;
}

}  // namespace icl::verify::patch
