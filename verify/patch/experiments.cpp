// run(DynamicsOptions), run(ThoughtOptions), run(AlignOptions), run(TrainRunOptions) and the
// pieces the experiments share (docs/patch.md §9-§11, §13). run(CheckOptions) is in check.cpp.
#include "verify/patch/experiments.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "numerics/error.hpp"
#include "numerics/format.hpp"
#include "numerics/seed.hpp"
#include "verify/patch/detail/experiment_common.hpp"
#include "verify/patch/detail/names.hpp"

namespace icl::verify::patch {

TrainOptions default_pretraining() {
  TrainOptions t;
  t.steps = 0;
  t.n_ctx = 0;
  t.track_patch = false;
  return t;
}

namespace {
constexpr detail::Names<Precision, 2> kPrecisions{
    "precision", {{{Precision::Double, "double"}, {Precision::Float, "float"}}}};
}  // namespace

std::string to_string(Precision p) { return kPrecisions.name(p); }
Precision precision_from_string(const std::string& s) { return kPrecisions.parse(s); }

std::optional<TrainResult> pretrain(Weights<double>& w, TrainOptions o, std::uint64_t base_seed,
                                    int context, const numerics::Progress& progress) {
  if (o.steps <= 0) return std::nullopt;
  o.d = w.config.token_dim - 1;
  o.base_seed = numerics::derive_seed(base_seed, "training");
  if (o.n_ctx == 0) o.n_ctx = context;
  return train(w, o, progress);
}

void validate_pretraining(const TrainOptions& t) {
  if (t.steps < 0) throw InvalidParams("train_steps", "must be >= 0");
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
Weights<double> one_block_model(ModelSource src, std::uint64_t base_seed, const char* what) {
  src.spec.layers = 1;
  Weights<double> w = make_model(src, numerics::derive_seed(base_seed, "weights"));
  if (w.config.layers != 1)
    throw InvalidParams("weights", std::string(what) + " needs a one-block model, '" +
                                       src.weights + "' has " + std::to_string(w.config.layers));
  return w;
}

// An experiment on a one-block model built from its options (random or loaded, then trained
// when options.training.steps > 0): `run` on that model, with the training it had.
template <class Options>
auto on_one_block(const Options& o, const char* what, const numerics::Progress& progress) {
  o.validate();
  Weights<double> w = one_block_model(o.model, o.base_seed, what);
  std::optional<TrainResult> training = pretrain(w, o.training, o.base_seed, o.context, progress);
  auto r = run(w, o, progress);
  r.training = std::move(training);
  return r;
}

// The experiment's evaluation prompts for model `w` (stream "prompts").
template <class Options>
std::vector<Prompt> prompts_of(const Weights<double>& w, const Options& o) {
  return make_prompts(w.config.token_dim - 1, o.context, o.prompts,
                      numerics::derive_seed(o.base_seed, "prompts"));
}

// The start of a run on a given model: validated options, a one-block model
// (InvalidParams("layers")), the result holding both.
template <class Result, class Options>
Result on_given(const Weights<double>& w, const Options& o, const char* what) {
  o.validate();
  if (w.config.layers != 1) throw InvalidParams("layers", std::string(what) + " needs a one-block model");
  Result r;
  r.options = o;
  r.model = w;
  return r;
}

}  // namespace

// ---- dynamics --------------------------------------------------------------------------------

void DynamicsOptions::validate() const {
  detail::validate_common(model, context, 2, prompts, training);
  if (model.spec.block.kind != BlockKind::Plain)
    throw InvalidParams("block", "the implicit dynamics are those of one plain block (docs/patch.md §9)");
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

DynamicsResult run(const DynamicsOptions& o, const numerics::Progress& progress) {
  o.validate();
  ModelSource src = o.model;  // one plain block (docs/patch.md §9)
  src.spec.layers = 1;
  const std::uint64_t init = numerics::derive_seed(o.base_seed, "weights");
  Weights<double> wa = make_model(src, init);
  ModelSource rsrc = src;
  rsrc.spec.kind = LayerKind::Rnn;
  rsrc.weights = o.rnn_weights;
  Weights<double> wr = make_model(rsrc, init);
  if (wa.config.token_dim != wr.config.token_dim)
    throw InvalidParams("rnn_weights", "the attention and RNN models have different token_dim");
  const auto prompts = prompts_of(wa, o);
  DynamicsResult r;
  r.options = o;
  auto model = [&](DynamicsModel& m, Weights<double>& w) {
    m.config = w.config;
    // Each prompt's prefix patches take O(context) block evaluations: progress per prompt.
    const std::string kind = w.config.kind == LayerKind::Rnn ? "rnn" : "attention";
    const auto per_prompt = [&](const std::string& stage) -> numerics::Progress {
      if (!progress) return {};
      return [&progress, stage](std::size_t d, std::size_t n, const std::string& what) {
        progress(d, n, stage + " " + what);
      };
    };
    m.initial = measure_dynamics(w, prompts, per_prompt(kind));
    m.training = pretrain(w, o.training, o.base_seed, o.context, progress);
    if (m.training) m.trained = measure_dynamics(w, prompts, per_prompt(kind + " trained"));
  };
  model(r.attention, wa);
  model(r.rnn, wr);
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

ThoughtResult run(const ThoughtOptions& o, const numerics::Progress& progress) {
  return on_one_block(o, "the thought patch", progress);
}

ThoughtResult run(const Weights<double>& w, const ThoughtOptions& o,
                  const numerics::Progress& progress) {
  ThoughtResult r = on_given<ThoughtResult>(w, o, "the thought patch");
  const auto prompts = prompts_of(w, o);
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    r.per_prompt.push_back(thought_patch(w, Mat<double>(prompts[k].tokens.leftCols(o.context)), o,
                                         numerics::derive_seed(o.base_seed, "calibration", k)));
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

AlignResult run(const AlignOptions& o, const numerics::Progress& progress) {
  AlignResult r = on_one_block(o, "alignment", progress);
  r.trained = r.training.has_value() || !o.model.weights.empty();
  return r;
}

AlignResult run(const Weights<double>& w, const AlignOptions& o,
                const numerics::Progress& progress) {
  AlignResult r = on_given<AlignResult>(w, o, "alignment");
  const auto prompts = prompts_of(w, o);
  // The random-weight control: the same shape, fresh weights (docs/patch.md §11, §14.1).
  const Weights<double> random =
      init_weights(w.config, {.seed = numerics::derive_seed(o.base_seed, "random-weights")});
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

TrainRunResult run(const TrainRunOptions& o, const numerics::Progress& progress) {
  o.validate();
  TrainRunResult r;
  r.options = o;
  r.initial = make_model(o.model, numerics::derive_seed(o.base_seed, "weights"));
  r.weights = r.initial;
  TrainOptions t = o.training;
  t.d = r.weights.config.token_dim - 1;
  t.base_seed = numerics::derive_seed(o.base_seed, "training");
  r.training = train(r.weights, t, progress);
  return r;
}

}  // namespace icl::verify::patch
