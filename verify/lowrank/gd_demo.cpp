#include "verify/lowrank/gd_demo.hpp"

#include <algorithm>
#include <cmath>

#include "numerics/dense_decompositions.hpp"
#include "numerics/error.hpp"
#include "numerics/seed.hpp"
#include "numerics/normal_sampler.hpp"
#include "verify/lowrank/detail/normal_operator.hpp"
#include "verify/lowrank/measure.hpp"

namespace icl::verify::lowrank {

GdDemoOptions GdDemoOptions::on_data_of(const SimOptions& s) const {
  GdDemoOptions g = *this;
  g.dim = s.dim;
  g.base_seed = s.base_seed;
  g.odg = s.odg;
  return g;
}

void GdDemoOptions::validate() const {
  if (dim < 2 || dim > 2000)
    throw InvalidParams("dim", "must be in [2, 2000], got " + std::to_string(dim));
  if (steps < 1) throw InvalidParams("steps", "must be >= 1, got " + std::to_string(steps));
  if (init_scales.empty()) throw InvalidParams("init_scales", "needs at least one scale");
  for (double s : init_scales)
    if (!(s >= 0 && std::isfinite(s)))
      throw InvalidParams("init_scales", "must be finite and >= 0, got " + std::to_string(s));
  reference.validate();
}

GdDemoResult run(const theory::Params& p, const GdDemoOptions& o,
                 const numerics::Progress& progress) {
  o.validate();
  p.validate();
  check_odg_kind(p, o.odg);
  Rng rng(numerics::derive_seed(o.base_seed, std::uint64_t(0)));
  const Dataset d = generate(p, o.dim, rng, Sampler::Factorized);
  const auto& n = d.n;
  const double D = n.D;
  GdDemoResult out;
  out.options = o;
  const RidgeFit ref = train_cg(d, p.lambda, o.reference);
  out.status = ref.status;
  out.message = ref.message.empty() ? "" : "CG reference: " + ref.message;
  out.residual_norm = ref.residual_norm;
  const PerProtocol<MatrixXd> C = test_task_moments(d, o.odg, rng);
  const numerics::SymmetricEigen es = numerics::symmetric_eigen(C.tm);
  const double cut = 1e-9 * std::max(1.0, es.values.maxCoeff());
  VectorXd in_span(n.D);
  for (int i = 0; i < n.D; ++i) in_span(i) = es.values(i) > cut ? 1.0 : 0.0;
  const MatrixXd PS = es.vectors * in_span.asDiagonal() * es.vectors.transpose();
  const MatrixXd P0 = MatrixXd::Identity(n.D, n.D) - PS;
  const int Lt = n.Lt;
  const double st = p.sigma_test;

  const PerProtocol<double> cg_err = test_errors(ref.Gamma, C, Lt, st);
  out.cg_odg = cg_err.odg;
  out.cg_idg = cg_err.idg;
  out.cg_tm = cg_err.tm;
  out.cg_null_norm2 = (ref.Gamma * P0).squaredNorm() / D;
  out.cg_loss = training_loss(d, ref.Gamma, p.lambda);

  // Step 1/lambda_max of the normalized operator (power iteration).
  detail::NormalOperator op(d, p.lambda);
  MatrixXd V = MatrixXd::Ones(n.D, n.D) / D, AV(n.D, n.D);
  double lmax = 0;
  for (int it = 0; it < 50; ++it) {
    op.apply(V, AV);
    lmax = AV.norm() / V.norm();
    V = AV / AV.norm();
  }
  const double eta = 1.0 / (1.05 * lmax);
  const MatrixXd B = normal_rhs(d);
  numerics::NormalSampler nd(rng);
  for (double scale : o.init_scales) {
    MatrixXd G(n.D, n.D);
    nd.fill(G.data(), G.size(), scale / std::sqrt(D));
    MatrixXd AG(n.D, n.D);
    for (int t = 0; t < o.steps; ++t) {
      op.apply(G, AG);
      G -= eta * (AG - B);
    }
    GdRun r;
    r.init_scale = scale;
    r.steps = o.steps;
    r.loss = training_loss(d, G, p.lambda);
    const PerProtocol<double> err = test_errors(G, C, Lt, st);
    r.odg = err.odg;
    r.idg = err.idg;
    r.tm = err.tm;
    r.null_norm2 = (G * P0).squaredNorm() / D;
    r.null_dist2 = ((G - ref.Gamma) * P0).squaredNorm() / D;
    r.span_dist2 = ((G - ref.Gamma) * PS).squaredNorm() / D;
    out.runs.push_back(r);
    if (progress) progress(out.runs.size(), o.init_scales.size(), "initialization");
  }
  auto spread = [&](auto get) {
    double m = 0, m2 = 0;
    for (const auto& r : out.runs) m += get(r);
    m /= out.runs.size();
    for (const auto& r : out.runs) m2 += (get(r) - m) * (get(r) - m);
    return out.runs.size() > 1 ? std::sqrt(m2 / (out.runs.size() - 1)) : 0.0;
  };
  out.odg_spread = spread([](const GdRun& r) { return r.odg; });
  out.null_spread = spread([](const GdRun& r) { return r.null_norm2; });
  return out;
}

}  // namespace icl::verify::lowrank
