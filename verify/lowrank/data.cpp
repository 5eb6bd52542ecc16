#include "verify/lowrank/data.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/QR>

#include "numerics/error.hpp"
#include "numerics/normal_sampler.hpp"
#include "theory/finite_dim.hpp"

namespace icl::verify::lowrank {

using Normal = numerics::NormalSampler;

const char* to_string(OdgKind k) { return k == OdgKind::Isotropic ? "isotropic" : "subspace"; }
OdgKind odg_kind_from_string(const std::string& s) {
  if (s == "isotropic") return OdgKind::Isotropic;
  if (s == "subspace") return OdgKind::Subspace;
  throw InvalidParams("odg", "must be 'isotropic' or 'subspace', got '" + s + "'");
}
const char* to_string(Sampler s) { return s == Sampler::Factorized ? "factorized" : "direct"; }
Sampler sampler_from_string(const std::string& s) {
  if (s == "factorized") return Sampler::Factorized;
  if (s == "direct") return Sampler::Direct;
  throw InvalidParams("sampler", "must be 'factorized' or 'direct', got '" + s + "'");
}

void check_odg_kind(const theory::Params& p, OdgKind odg) {
  if (odg == OdgKind::Subspace && !p.task_spectrum.empty())
    throw InvalidParams("odg", "'subspace' ODG tasks (low rank in an independent subspace) are "
                               "only defined for the paper's low-rank tasks; with a general "
                               "task_spectrum use 'isotropic'");
}

namespace {

// n_k = round(w_k D) directions for level k, the largest group absorbing D - sum n_k
// (task_eigenvalues() documents the rule).
std::vector<long> level_counts(const theory::Params& p, int dim) {
  if (p.task_spectrum.empty())
    throw InvalidParams("task_spectrum", "empty: low-rank tasks have no general spectrum");
  if (dim < 1) throw InvalidParams("dim", "must be >= 1");
  const auto& spec = p.task_spectrum;
  std::vector<long> count(spec.size());
  long total = 0;
  std::size_t largest = 0;
  for (std::size_t k = 0; k < spec.size(); ++k) {
    count[k] = std::lround(spec[k].mass * dim);
    total += count[k];
    if (count[k] > count[largest]) largest = k;
  }
  count[largest] += dim - total;
  if (count[largest] < 0)
    throw InvalidParams("task_spectrum", "too many levels for D = " + std::to_string(dim) +
                                             ": the rounded counts cannot sum to D");
  return count;
}

// Level k's value on its n_k directions, before the rescaling.
VectorXd unscaled_directions(const std::vector<long>& count, const std::vector<double>& value,
                             int dim) {
  VectorXd t(dim);
  Eigen::Index i = 0;
  for (std::size_t k = 0; k < count.size(); ++k)
    for (long c = 0; c < count[k]; ++c) t(i++) = value[k];
  return t;
}

// The factor that makes the mean over the D directions exactly 1 (tr = D).
double mean_one_scale(const VectorXd& t, int dim, const char* field) {
  const double sum = t.sum();
  if (!(sum > 0))
    throw InvalidParams(field, "no positive eigenvalue left after rounding the multiplicities "
                               "at D = " + std::to_string(dim));
  return double(dim) / sum;
}

// Level k's value on its n_k directions, rescaled to mean exactly 1.
VectorXd per_direction(const std::vector<long>& count, const std::vector<double>& value,
                       int dim, const char* field) {
  VectorXd t = unscaled_directions(count, value, dim);
  t *= mean_one_scale(t, dim, field);
  return t;
}

// The rescaled value of each level (as per_direction gives it on each of its directions).
std::vector<double> rescaled_levels(const std::vector<long>& count,
                                    const std::vector<double>& value, int dim, const char* field) {
  const double scale = mean_one_scale(unscaled_directions(count, value, dim), dim, field);
  std::vector<double> out;
  for (double v : value) out.push_back(v * scale);
  return out;
}

std::vector<double> level_values(const theory::Params& p) {
  std::vector<double> value;
  for (const auto& a : p.task_spectrum) value.push_back(a.position);
  return value;
}

}  // namespace

VectorXd task_eigenvalues(const theory::Params& p, int dim) {
  return per_direction(level_counts(p, dim), level_values(p), dim, "task_spectrum");
}

VectorXd test_level_eigenvalues(const theory::Params& p, int dim) {
  if (p.test_levels.empty()) throw InvalidParams("test_levels", "empty: no shifted test tasks");
  return per_direction(level_counts(p, dim), p.test_levels, dim, "test_levels");
}

Sizes sizes(const theory::Params& p, int dim) {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2");
  // The counts are the ratios of at_dimension times D (integers up to rounding of the division).
  const theory::Params s = theory::at_dimension(p, dim);
  const double D = dim;
  const auto count = [](double x) { return int(std::lround(x)); };
  Sizes n;
  n.D = dim;
  if (p.task_spectrum.empty()) {
    n.r = count(s.rho * D);
  } else {
    const VectorXd t = task_eigenvalues(p, dim);
    n.r = int((t.array() > 0.0).count());
  }
  n.M0 = count(s.kappa * D);
  n.N = count(s.tau * D * D);
  n.L = count(s.alpha * D);
  n.Lt = count(s.effective_alpha_test() * D);
  return n;
}

theory::Params simulated_params(const theory::Params& p, int dim) {
  theory::Params s = theory::at_dimension(p, dim);
  if (p.task_spectrum.empty()) return s;
  const std::vector<long> count = level_counts(p, dim);
  const std::vector<double> t = rescaled_levels(count, level_values(p), dim, "task_spectrum");
  std::vector<double> tl;
  if (!p.test_levels.empty()) tl = rescaled_levels(count, p.test_levels, dim, "test_levels");
  s.task_spectrum.clear();
  s.test_levels.clear();
  for (std::size_t k = 0; k < count.size(); ++k) {
    if (count[k] == 0) continue;
    s.task_spectrum.push_back({t[k], double(count[k]) / dim});
    if (!tl.empty()) s.test_levels.push_back(tl[k]);
  }
  return s;
}

double SizedRatio::relative_change() const { return (simulated - nominal) / std::abs(nominal); }

std::vector<SizedRatio> sized_ratios(const theory::Params& p, int dim) {
  const theory::Params s = theory::at_dimension(p, dim);
  std::vector<SizedRatio> out;
  if (p.task_spectrum.empty()) {
    out.push_back({"rho", p.rho, s.rho});
  } else {
    const std::vector<long> count = level_counts(p, dim);
    const std::vector<double> value = level_values(p);
    const std::vector<double> t = rescaled_levels(count, value, dim, "task_spectrum");
    for (std::size_t k = 0; k < count.size(); ++k) {
      const std::string level = "task_spectrum[" + std::to_string(k) + "]";
      out.push_back({level + ".weight", p.task_spectrum[k].mass, double(count[k]) / dim});
      out.push_back({level + ".value", value[k], t[k]});
    }
  }
  out.push_back({"kappa", p.kappa, s.kappa});
  out.push_back({"tau", p.tau, s.tau});
  out.push_back({"alpha", p.alpha, s.alpha});
  if (p.alpha_test >= 0) out.push_back({"alpha_test", p.alpha_test, s.alpha_test});
  return out;
}

MatrixXd Dataset::task_covariance() const {
  if (general) return Sigma;
  return (double(n.D) / n.r) * A * A.transpose();
}

MatrixXd haar_orthonormal(int D, int r, Rng& rng) {
  Normal nd(rng);
  MatrixXd G(D, r);
  nd.fill(G.data(), G.size(), 1.0);
  Eigen::HouseholderQR<MatrixXd> qr(G);
  MatrixXd Q = qr.householderQ() * MatrixXd::Identity(D, r);
  const MatrixXd& R = qr.matrixQR();
  for (int j = 0; j < r; ++j)
    if (R(j, j) < 0) Q.col(j) *= -1.0;  // sign fix: Haar distributed
  return Q;
}

VectorXd draw_context_estimate(const VectorXd& w, int L, double sigma, Rng& rng,
                               Sampler sampler, bool gaussian) {
  const Eigen::Index D = w.size();
  const double sd = 1.0 / std::sqrt(double(D));
  Normal nd(rng);
  if (sampler == Sampler::Direct) {
    MatrixXd Xc(L, D);
    nd.fill(Xc.data(), Xc.size(), sd);
    VectorXd yc = Xc * w;
    for (int l = 0; l < L; ++l) yc(l) += sigma * nd();
    return (double(D) / L) * (Xc.transpose() * yc);
  }
  // Factorized: x_l = a_l what + x_perp,l with a_l ~ N(0, 1/D), x_perp ~ N(0, P_perp/D).
  const double wn = w.norm();
  VectorXd what = VectorXd::Zero(D);
  if (wn > 0) what = w / wn; else what(0) = 1.0;
  double c1 = 0, c2 = 0;
  for (int l = 0; l < L; ++l) {
    const double a = sd * nd();
    const double yl = wn * a + sigma * nd();
    c1 += yl * a;
    c2 += yl * yl;
  }
  VectorXd g(D);
  nd.fill(g.data(), D, 1.0);
  if (gaussian) {
    // docs/simulation.md §13.7: s = w + sqrt(nu_w) g, the same draws (c1, c2 unused).
    const double nu_w = (double(D) / L) * (wn * wn / double(D) + sigma * sigma);
    return w + std::sqrt(nu_w) * g;
  }
  g -= what.dot(g) * what;
  return (double(D) / L) * (c1 * what + std::sqrt(c2 / double(D)) * g);
}

Dataset generate(const theory::Params& p, int dim, Rng& rng, Sampler sampler,
                 const FiniteDSwitches& switches) {
  Dataset d;
  d.n = sizes(p, dim);
  const auto& n = d.n;
  const double sd = 1.0 / std::sqrt(double(n.D));
  if (p.task_spectrum.empty()) {
    d.A = haar_orthonormal(n.D, n.r, rng);
    Normal nd(rng);
    MatrixXd V(n.r, n.M0);
    nd.fill(V.data(), V.size(), 1.0);
    d.W = std::sqrt(double(n.D) / n.r) * (d.A * V);
    if (p.test_overlap) {
      // Energy C in span(A), 1 - C isotropically on its complement; |w|^2/D = 1 on average.
      const double c = *p.test_overlap;
      const MatrixXd PA = d.A * d.A.transpose();
      d.shift_covariance = (c * n.D / n.r) * PA;
      if (n.r < n.D)
        d.shift_covariance += ((1 - c) * n.D / double(n.D - n.r)) *
                              (MatrixXd::Identity(n.D, n.D) - PA);
    }
  } else {
    // Sigma = U diag(t) U^T, U Haar (D x D); tasks w = Sigma^{1/2} g, g ~ N(0, I_D).
    d.general = true;
    const VectorXd t = task_eigenvalues(p, n.D);
    const MatrixXd U = haar_orthonormal(n.D, n.D, rng);
    d.Sigma = U * t.asDiagonal() * U.transpose();
    d.Sigma_half = U * t.cwiseSqrt().asDiagonal() * U.transpose();
    if (!p.test_levels.empty())
      d.shift_covariance = U * test_level_eigenvalues(p, n.D).asDiagonal() * U.transpose();
    Normal nd(rng);
    MatrixXd Gt(n.D, n.M0);
    nd.fill(Gt.data(), Gt.size(), 1.0);
    d.W = d.Sigma_half * Gt;
  }
  // §13.7: |w|^2 = D exactly; the direction keeps its law, so S keeps its D -> infinity limit.
  if (switches.fixed_norm_tasks)
    for (int m = 0; m < n.M0; ++m) d.W.col(m) *= std::sqrt(double(n.D)) / d.W.col(m).norm();
  d.task.resize(n.N);
  if (switches.assignment == Assignment::Random) {
    std::uniform_int_distribution<int> pick(0, n.M0 - 1);
    for (int i = 0; i < n.N; ++i) d.task[i] = pick(rng);
  } else {
    for (int i = 0; i < n.N; ++i) d.task[i] = i % n.M0;
  }
  d.X.resize(n.N, n.D);
  d.Sm.resize(n.N, n.D);
  d.y.resize(n.N);
  Normal nd(rng);
  VectorXd x(n.D);
  VectorXd w(n.D);
  for (int i = 0; i < n.N; ++i) {
    w = d.W.col(d.task[i]);
    const VectorXd s =
        draw_context_estimate(w, n.L, p.sigma, rng, sampler, switches.gaussian_context);
    nd.fill(x.data(), n.D, sd);
    if (switches.sphere_queries) x /= x.norm();  // §13.7: |x| = 1, E[x x^T] = I/D unchanged
    d.X.row(i) = x.transpose();
    d.Sm.row(i) = s.transpose();
    d.y(i) = w.dot(x) + p.sigma * nd();
  }
  return d;
}

}  // namespace icl::verify::lowrank
