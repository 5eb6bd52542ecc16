#include "verify/patch/train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "numerics/error.hpp"
#include "numerics/memory.hpp"
#include "numerics/parallel.hpp"
#include "numerics/seed.hpp"
#include "verify/patch/patch.hpp"

namespace icl::verify::patch {

namespace {

void add_into(Weights<double>& acc, Weights<double>& g) {
  auto pa = parameters(acc);
  auto pg = parameters(g);
  for (std::size_t i = 0; i < pa.size(); ++i) *pa[i].second += *pg[i].second;
}

// loss sum over [b, e); gradient of (1/scale) * sum added into grad.
double loss_range(const Weights<double>& w, const std::vector<Prompt>& batch, std::size_t b,
                  std::size_t e, Weights<double>* grad, double scale) {
  double s = 0;
  const int T = w.config.token_dim;
  ForwardCache<double> cache;
  for (std::size_t i = b; i < e; ++i) {
    const Prompt& p = batch[i];
    const Eigen::Index q = p.tokens.cols() - 1;
    const Mat<double> out = forward(w, p.tokens, grad ? &cache : nullptr);
    const double r = out(T - 1, q) - p.target;
    s += r * r;
    if (grad) {
      // d/dpred (r^2 / scale) = 2 r / scale at (last coordinate, query)
      Mat<double> d_out = Mat<double>::Zero(out.rows(), out.cols());
      d_out(T - 1, q) = 2 * r / scale;
      backward(w, cache, d_out, *grad);
    }
  }
  return s;
}

}  // namespace

// The batch is cut into a fixed number of chunks (independent of `threads`); each chunk's loss
// and gradient are accumulated separately and the chunks are summed in order, so the result is
// bit-identical for every thread count.
double batch_loss(const Weights<double>& w, const std::vector<Prompt>& batch,
                  Weights<double>* grad, int threads) {
  constexpr std::size_t kChunks = 8;
  const std::size_t B = batch.size();
  if (B == 0) return 0;
  // The forward caches of each prompt (about 170 kB for the paper's model) are allocated and
  // freed thousands of times per step: keep freed heap instead of returning it each time
  // (docs/patch.md §13: a third of the training's time was the kernel regrowing the heap).
  numerics::keep_freed_heap(std::size_t(64) << 20);
  const double scale = static_cast<double>(B);
  const std::size_t chunks = std::min(kChunks, B);
  std::vector<double> sums(chunks, 0.0);
  std::vector<Weights<double>> grads;
  if (grad)
    for (std::size_t c = 0; c < chunks; ++c) grads.push_back(zeros_like(w));
  auto run_chunk = [&](std::size_t c) {
    const std::size_t b = B * c / chunks, e = B * (c + 1) / chunks;
    sums[c] = loss_range(w, batch, b, e, grad ? &grads[c] : nullptr, scale);
  };
  const std::size_t workers = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(1, threads)), 1, chunks);
  if (workers == 1) {
    for (std::size_t c = 0; c < chunks; ++c) run_chunk(c);
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < workers; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t c = t; c < chunks; c += workers) run_chunk(c);
      });
    for (auto& th : pool) th.join();
  }
  double s = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    s += sums[c];
    if (grad) add_into(*grad, grads[c]);
  }
  return s / scale;
}

double patched_loss(const Weights<double>& w, const std::vector<Prompt>& batch, double* max_rel) {
  double s = 0, mr = 0;
  const int T = w.config.token_dim;
  for (const Prompt& p : batch) {
    const int q = static_cast<int>(p.tokens.cols()) - 1;
    StackCheck<double> r = stack_check(w, p.tokens, q, PatchMode::Full);
    const double e = r.y_patched(T - 1, 0) - p.target;
    s += e * e;
    mr = std::max(mr, r.diff.max_rel);
  }
  if (max_rel) *max_rel = mr;
  return s / static_cast<double>(batch.size());
}

Adam::Adam(const Weights<double>& shape, const AdamOptions& p)
    : p_(p), m_(zeros_like(shape)), v_(zeros_like(shape)) {}

void Adam::step(Weights<double>& w, Weights<double>& grad) {
  ++t_;
  auto pw = parameters(w), pg = parameters(grad), pm = parameters(m_), pv = parameters(v_);
  const double c1 = 1 - std::pow(p_.beta1, t_), c2 = 1 - std::pow(p_.beta2, t_);
  for (std::size_t i = 0; i < pw.size(); ++i) {
    auto& g = *pg[i].second;
    auto& m = *pm[i].second;
    auto& v = *pv[i].second;
    m = p_.beta1 * m + (1 - p_.beta1) * g;
    v = p_.beta2 * v + (1 - p_.beta2) * g.cwiseProduct(g);
    pw[i].second->array() -=
        p_.lr * (m.array() / c1) / ((v.array() / c2).sqrt() + p_.eps);
  }
}

void TrainOptions::validate() const {
  auto fail = [](const char* f, const std::string& m) { throw InvalidParams(f, m); };
  if (d < 1) fail("d", "must be >= 1");
  if (n_ctx < 1) fail("n_ctx", "must be >= 1");
  if (batch < 1) fail("batch", "must be >= 1");
  if (steps < 0) fail("steps", "must be >= 0");
  if (!(adam.lr > 0) || !std::isfinite(adam.lr)) fail("lr", "must be > 0 and finite");
  if (!(clip >= 0)) fail("clip", "must be >= 0");
  if (eval_every < 1) fail("eval_every", "must be >= 1");
  if (eval_prompts < 1) fail("eval_prompts", "must be >= 1");
  numerics::check_threads(threads, false);
}

TrainResult train(Weights<double>& w, const TrainOptions& p, const numerics::Progress& progress) {
  p.validate();
  if (w.config.token_dim != p.d + 1)
    throw InvalidParams("d", "the model's token_dim must be d + 1");
  TrainResult res;
  res.options = p;
  const auto eval =
      make_prompts(p.d, p.n_ctx, p.eval_prompts, numerics::derive_seed(p.base_seed, "eval"));
  for (const auto& e : eval) res.zero_loss += e.target * e.target;
  res.zero_loss /= static_cast<double>(eval.size());
  std::mt19937_64 rng(numerics::derive_seed(p.base_seed, "batches"));
  Adam adam(w, p.adam);
  const auto t0 = std::chrono::steady_clock::now();
  double run = 0;
  int run_n = 0;
  auto log_row = [&](int step) {
    TrainLogRow row;
    row.step = step;
    row.train_loss = run_n ? run / run_n : std::nan("");
    row.eval_loss = batch_loss(w, eval, nullptr, p.threads);
    if (p.track_patch) row.eval_loss_patched = patched_loss(w, eval, &row.patch_max_rel);
    else row.eval_loss_patched = row.patch_max_rel = std::nan("");
    res.log.push_back(row);
    if (!std::isfinite(row.eval_loss) && res.status == numerics::Status::Converged) {
      res.status = numerics::Status::NumericalFailure;
      res.message = "non-finite evaluation loss at step " + std::to_string(step);
    }
    if (progress) progress(static_cast<std::size_t>(step), static_cast<std::size_t>(p.steps), "step");
    run = 0;
    run_n = 0;
  };
  log_row(0);
  double train_seconds = 0;
  for (int s = 1; s <= p.steps; ++s) {
    const auto ts = std::chrono::steady_clock::now();
    std::vector<Prompt> batch;
    batch.reserve(static_cast<std::size_t>(p.batch));
    for (int i = 0; i < p.batch; ++i) batch.push_back(make_prompt(p.d, p.n_ctx, rng));
    Weights<double> g = zeros_like(w);
    run += batch_loss(w, batch, &g, p.threads);
    ++run_n;
    if (p.clip > 0) {
      double n2 = 0;
      for (auto& [name, m] : parameters(g)) n2 += m->squaredNorm();
      const double n = std::sqrt(n2);
      if (n > p.clip)
        for (auto& [name, m] : parameters(g)) *m *= p.clip / n;
    }
    adam.step(w, g);
    train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
    if (s % p.eval_every == 0 || s == p.steps) log_row(s);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.final_eval_loss = res.log.back().eval_loss;
  res.tokens_per_second = train_seconds > 0 ? double(p.steps) * p.batch * (p.n_ctx + 1) / train_seconds : 0;
  return res;
}

}  // namespace icl::verify::patch
