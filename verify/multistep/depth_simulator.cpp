// The depth simulator (verify/multistep/depth_simulator.hpp, docs/multistep_depth.md §7).
#include "verify/multistep/depth_simulator.hpp"

#include <cmath>
#include <random>

#include <Eigen/Core>

#include "numerics/dense_decompositions.hpp"
#include "numerics/error.hpp"
#include "numerics/normal_sampler.hpp"
#include "numerics/parallel.hpp"
#include "numerics/seed.hpp"

namespace icl::verify::multistep {

const char* to_string(DepthEstimator e) {
  return e == DepthEstimator::Conditional ? "conditional" : "literal";
}

void DepthSimOptions::validate() const {
  if (dim < 2 || dim > 2000)
    throw InvalidParams("dim", "must be an integer in [2, 2000], got " + std::to_string(dim));
  if (seeds < 2 || seeds > 1000000)
    throw InvalidParams("seeds",
                        "must be an integer in [2, 1000000], got " + std::to_string(seeds));
  numerics::check_threads(threads, false);
}

namespace {
int context_length(const theory::DepthParams& p, int dim) {
  return static_cast<int>(std::lround(p.alpha * dim));
}
}  // namespace

void DepthSimOptions::validate(const theory::DepthParams& p) const {
  p.validate();
  validate();
  const double n = std::round(p.alpha * dim);
  if (n < 1)
    throw InvalidParams("dim", "alpha D rounds to no context token; use a larger dim");
  if (n * dim > 5e7)
    throw InvalidParams("dim", "the context X (D x N = " + std::to_string(dim) + " x " +
                                   std::to_string(static_cast<long>(n)) +
                                   ") exceeds 5e7 entries; use a smaller dim");
}

namespace {

// One sample: X (D x N, entries N(0, 1/D)) from its own stream, then either estimator.
double one_sample(const theory::DepthParams& p, double g, const DepthSimOptions& o, int N,
                  std::size_t k) {
  const int D = o.dim, L = p.layers;
  const double sigma2 = p.sigma * p.sigma, scale = double(D) / double(N);
  std::mt19937_64 rng_x(numerics::derive_seed(o.seed, "X", k));
  numerics::NormalSampler nx(rng_x);
  Eigen::MatrixXd X(D, N);
  nx.fill(X.data(), X.size(), 1.0 / std::sqrt(double(D)));
  if (o.estimator == DepthEstimator::Conditional) {
    const Eigen::MatrixXd S = scale * (X * X.transpose());
    const Eigen::VectorXd s = numerics::symmetric_eigenvalues(S);
    double sum = 0;
    for (Eigen::Index i = 0; i < s.size(); ++i) {
      const double u = 1.0 - g * s(i);
      double power = 1.0, q = 0.0;  // u^l, sum_{l<L} u^l
      for (int l = 0; l < L; ++l) {
        q += power;
        power *= u;
      }
      q *= g;
      sum += power * power + sigma2 * scale * s(i) * q * q;
    }
    return sigma2 + sum / D;
  }
  std::mt19937_64 rng_w(numerics::derive_seed(o.seed, "w_eps", k));
  numerics::NormalSampler nw(rng_w);
  Eigen::VectorXd w(D), eps(N);
  nw.fill(w.data(), D, 1.0);
  nw.fill(eps.data(), N, 1.0);
  const Eigen::VectorXd y = X.transpose() * w + p.sigma * eps;
  Eigen::VectorXd wl = Eigen::VectorXd::Zero(D);
  for (int l = 0; l < L; ++l) wl += g * scale * (X * (y - X.transpose() * wl));
  return sigma2 + (w - wl).squaredNorm() / D;
}

}  // namespace

DepthSimResult simulate(const theory::DepthParams& params, double g,
                        const DepthSimOptions& options, const numerics::Progress& progress) {
  options.validate(params);
  if (!std::isfinite(g)) throw InvalidParams("step", "must be finite");
  DepthSimResult r;
  r.params = params;
  r.step = g;
  r.options = options;
  r.context = context_length(params, options.dim);
  r.alpha_simulated = double(r.context) / options.dim;
  r.per_sample.assign(static_cast<std::size_t>(options.seeds), 0.0);
  numerics::parallel_for(
      r.per_sample.size(), options.threads,
      [&](std::size_t k) { r.per_sample[k] = one_sample(params, g, options, r.context, k); },
      progress, "sample");
  r.error = numerics::estimate(r.per_sample);
  const bool ok = std::isfinite(r.error.mean);
  r.status = ok ? numerics::Status::Converged : numerics::Status::NumericalFailure;
  r.message = ok ? std::string(to_string(options.estimator)) + " estimator over " +
                       std::to_string(options.seeds) + " contexts at D = " +
                       std::to_string(options.dim) + ", N = " + std::to_string(r.context)
                 : "a non-finite sample (the step diverges at this size)";
  return r;
}

nlohmann::ordered_json to_json(const DepthSimResult& r) {
  nlohmann::ordered_json j;
  j["mean"] = r.error.mean;
  j["sem"] = r.error.sem;
  j["dim"] = r.options.dim;
  j["seeds"] = r.options.seeds;
  j["context"] = r.context;
  j["alpha_simulated"] = r.alpha_simulated;
  j["step"] = r.step;
  j["gamma"] = r.step * r.params.layers;
  j["estimator"] = to_string(r.options.estimator);
  j["seed"] = r.options.seed;
  j["status"] = numerics::to_string(r.status);
  j["message"] = r.message;
  return j;
}

}  // namespace icl::verify::multistep
