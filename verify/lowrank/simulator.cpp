#include "verify/lowrank/simulator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "numerics/error.hpp"
#include "verify/lowrank/normal_kernel.hpp"

namespace icl::verify::lowrank {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Standard normals by the Marsaglia polar method on the raw 64-bit engine output (exact,
// deterministic for a given engine state; several times faster than going through
// std::normal_distribution's generate_canonical). One object per stream keeps the draw order
// explicit; the spare value is discarded when the object goes away.
struct Normal {
  Rng& rng;
  double spare = 0;
  bool has_spare = false;
  explicit Normal(Rng& r) : rng(r) {}
  double uniform_pm1() { return double(rng() >> 11) * 0x1.0p-52 - 1.0; }  // [-1, 1)
  double operator()() {
    if (has_spare) {
      has_spare = false;
      return spare;
    }
    double u, v, s;
    do {
      u = uniform_pm1();
      v = uniform_pm1();
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare = v * f;
    has_spare = true;
    return u * f;
  }
  void fill(double* p, Eigen::Index n, double scale) {
    for (Eigen::Index i = 0; i < n; ++i) p[i] = scale * (*this)();
  }
};

double frob2(const MatrixXd& M) { return M.squaredNorm(); }

}  // namespace

const char* to_string(OdgKind k) { return k == OdgKind::Isotropic ? "isotropic" : "subspace"; }
OdgKind odg_kind_from_string(const std::string& s) {
  if (s == "isotropic") return OdgKind::Isotropic;
  if (s == "subspace") return OdgKind::Subspace;
  throw InvalidParams("odg", "must be 'isotropic' or 'subspace', got '" + s + "'");
}

VectorXd task_eigenvalues(const theory::Params& p, int dim) {
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
  VectorXd t(dim);
  Eigen::Index i = 0;
  for (std::size_t k = 0; k < spec.size(); ++k)
    for (long c = 0; c < count[k]; ++c) t(i++) = spec[k].position;
  const double sum = t.sum();
  if (!(sum > 0))
    throw InvalidParams("task_spectrum", "no positive eigenvalue left after rounding the "
                                         "multiplicities at D = " + std::to_string(dim));
  t *= double(dim) / sum;  // mean exactly 1
  return t;
}

Sizes sizes(const theory::Params& p, int dim) {
  if (dim < 2) throw InvalidParams("dim", "must be >= 2");
  Sizes n;
  const double D = dim;
  n.D = dim;
  if (p.task_spectrum.empty()) {
    n.r = std::max(1, int(std::lround(p.rho * D)));
  } else {
    const VectorXd t = task_eigenvalues(p, dim);
    n.r = int((t.array() > 0.0).count());
  }
  n.M0 = std::max(1, int(std::lround(p.kappa * D)));
  n.N = std::max(1, int(std::lround(p.tau * D * D)));
  n.L = std::max(1, int(std::lround(p.alpha * D)));
  n.Lt = std::max(1, int(std::lround(p.effective_alpha_test() * D)));
  return n;
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
                               Sampler sampler) {
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
  g -= what.dot(g) * what;
  return (double(D) / L) * (c1 * what + std::sqrt(c2 / double(D)) * g);
}

Dataset generate(const theory::Params& p, int dim, Rng& rng, Assignment assignment,
                 Sampler sampler) {
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
  } else {
    // Sigma = U diag(t) U^T, U Haar (D x D); tasks w = Sigma^{1/2} g, g ~ N(0, I_D).
    d.general = true;
    const VectorXd t = task_eigenvalues(p, n.D);
    const MatrixXd U = haar_orthonormal(n.D, n.D, rng);
    d.Sigma = U * t.asDiagonal() * U.transpose();
    d.Sigma_half = U * t.cwiseSqrt().asDiagonal() * U.transpose();
    Normal nd(rng);
    MatrixXd Gt(n.D, n.M0);
    nd.fill(Gt.data(), Gt.size(), 1.0);
    d.W = d.Sigma_half * Gt;
  }
  d.task.resize(n.N);
  if (assignment == Assignment::Random) {
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
    const VectorXd s = draw_context_estimate(w, n.L, p.sigma, rng, sampler);
    nd.fill(x.data(), n.D, sd);
    d.X.row(i) = x.transpose();
    d.Sm.row(i) = s.transpose();
    d.y(i) = w.dot(x) + p.sigma * nd();
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Training

namespace {

void check_well_posed(const Dataset& d, double lambda, bool min_norm) {
  const long long D2 = (long long)d.n.D * d.n.D;
  if (lambda == 0.0 && d.n.N < D2 && !min_norm)
    throw InvalidParams("lambda", "lambda = 0 with N = " + std::to_string(d.n.N) + " < D^2 = " +
                                      std::to_string(D2) +
                                      " sequences: Gamma is not unique (use lambda > 0, tau > 1,"
                                      " or ask for the minimum-norm solution)");
  if (lambda < 0) throw InvalidParams("lambda", "must be >= 0");
}

struct NormalOperator {
  const Dataset& d;
  double ridge;  // lambda M0 / N
  std::optional<PackedNormalOperator> packed;  // the fast kernel (normal_kernel.hpp)
  MatrixXd XG;   // N x D work space of the Eigen path
  NormalOperator(const Dataset& data, double lambda, bool use_packed = true)
      : d(data), ridge(lambda * data.n.M0 / double(data.n.N)) {
    if (use_packed) packed.emplace(d.X, d.Sm);
    else XG.resize(d.n.N, d.n.D);
  }
  void apply(const MatrixXd& G, MatrixXd& out) {
    if (packed) {
      packed->apply(G, out);
    } else {
      XG.noalias() = d.X * G;
      const VectorXd u = XG.cwiseProduct(d.Sm).rowwise().sum();
      XG.array() = d.Sm.array().colwise() * u.array();
      out.noalias() = d.X.transpose() * XG;
    }
    out /= double(d.n.N);
    if (ridge != 0.0) out += ridge * G;
  }
};

// Kronecker preconditioner (X^T X / N) G (Sm^T Sm / N) + ridge G, inverted through two
// eigendecompositions: exact for the expected operator when queries are independent of s.
struct KroneckerPreconditioner {
  MatrixXd U, V, inv_denominator;
  KroneckerPreconditioner(const Dataset& d, double ridge) {
    const double N = d.n.N;
    Eigen::SelfAdjointEigenSolver<MatrixXd> ex(MatrixXd(d.X.transpose() * d.X) / N);
    Eigen::SelfAdjointEigenSolver<MatrixXd> es(MatrixXd(d.Sm.transpose() * d.Sm) / N);
    U = ex.eigenvectors();
    V = es.eigenvectors();
    const VectorXd a = ex.eigenvalues().cwiseMax(0.0), b = es.eigenvalues().cwiseMax(0.0);
    inv_denominator = ((a * b.transpose()).array() + ridge).inverse().matrix();
    const double big = 1e300;
    for (Eigen::Index k = 0; k < inv_denominator.size(); ++k)
      if (!std::isfinite(inv_denominator.data()[k]) || inv_denominator.data()[k] > big)
        inv_denominator.data()[k] = 0.0;
  }
  MatrixXd apply(const MatrixXd& R) const {
    MatrixXd T = U.transpose() * R * V;
    T.array() *= inv_denominator.array();
    return U * T * V.transpose();
  }
};

double dot(const MatrixXd& a, const MatrixXd& b) { return a.cwiseProduct(b).sum(); }

}  // namespace

MatrixXd apply_normal_operator(const Dataset& d, const MatrixXd& G, double lambda,
                               bool packed) {
  NormalOperator op(d, lambda, packed);
  MatrixXd out(d.n.D, d.n.D);
  op.apply(G, out);
  return out;
}

MatrixXd normal_rhs(const Dataset& d) {
  MatrixXd T = d.Sm.array().colwise() * d.y.array();
  return MatrixXd(d.X.transpose() * T) / double(d.n.N);
}

double training_loss(const Dataset& d, const MatrixXd& G, double lambda) {
  const VectorXd pred = (d.X * G).cwiseProduct(d.Sm).rowwise().sum();
  return (d.y - pred).squaredNorm() + lambda * d.n.M0 * frob2(G);
}

TrainResult train_cg(const Dataset& d, double lambda, double tolerance, int max_iterations,
                     bool min_norm, const MatrixXd* start, bool precondition) {
  check_well_posed(d, lambda, min_norm);
  const auto t0 = Clock::now();
  const int D = d.n.D;
  // Minimum-norm (lambda = 0, N < D^2): plain CG from zero stays in the range of the operator.
  const bool use_pc = precondition && !(min_norm && lambda == 0.0);
  NormalOperator op(d, lambda);
  const MatrixXd B = normal_rhs(d);
  const double bnorm = B.norm();
  TrainResult res;
  res.Gamma = MatrixXd::Zero(D, D);
  if (bnorm == 0.0) {
    res.seconds = seconds_since(t0);
    return res;
  }
  std::optional<KroneckerPreconditioner> pc;
  if (use_pc) pc.emplace(d, op.ridge);
  auto precond = [&](const MatrixXd& R) { return use_pc ? pc->apply(R) : R; };
  MatrixXd& G = res.Gamma;
  if (start) G = *start;
  else if (use_pc) G = pc->apply(B);
  MatrixXd AG(D, D), AP(D, D);
  op.apply(G, AG);
  MatrixXd R = B - AG;
  MatrixXd Z = precond(R);
  MatrixXd P = Z;
  double rz = dot(R, Z);
  int it = 0;
  double rel = R.norm() / bnorm;
  while (rel > tolerance && it < max_iterations) {
    op.apply(P, AP);
    const double pap = dot(P, AP);
    if (!(pap > 0)) break;
    const double step = rz / pap;
    G += step * P;
    R -= step * AP;
    ++it;
    rel = R.norm() / bnorm;
    if (rel <= tolerance) break;
    Z = precond(R);
    const double rz_new = dot(R, Z);
    P = Z + (rz_new / rz) * P;
    rz = rz_new;
  }
  op.apply(G, AG);
  res.relative_residual = (B - AG).norm() / bnorm;
  res.iterations = it;
  res.seconds = seconds_since(t0);
  if (!std::isfinite(res.relative_residual) || res.relative_residual > 1e3 * tolerance)
    throw NumericalError("simulator CG did not converge: relative residual " +
                             std::to_string(res.relative_residual) + " after " +
                             std::to_string(it) + " iterations",
                         res.relative_residual);
  return res;
}

TrainResult train_direct(const Dataset& d, double lambda, bool min_norm) {
  check_well_posed(d, lambda, min_norm);
  const auto t0 = Clock::now();
  const int D = d.n.D, N = d.n.N;
  if (D > 40) throw InvalidParams("dim", "the dense direct solve is for D <= 40");
  const int P = D * D;
  MatrixXd Phi(N, P);  // Phi(n, i + D j) = x_i s_j  (column-major vec of x s^T)
  for (int j = 0; j < D; ++j)
    for (int i = 0; i < D; ++i) Phi.col(i + D * j) = d.X.col(i).cwiseProduct(d.Sm.col(j));
  VectorXd g;
  if (lambda == 0.0 && min_norm) {
    Eigen::CompleteOrthogonalDecomposition<MatrixXd> cod(Phi);
    g = cod.solve(d.y);
  } else {
    MatrixXd H = Phi.transpose() * Phi;
    H.diagonal().array() += lambda * d.n.M0;
    const VectorXd rhs = Phi.transpose() * d.y;
    Eigen::LDLT<MatrixXd> ldlt(H);
    if (ldlt.info() != Eigen::Success)
      throw NumericalError("dense normal equations: factorization failed");
    g = ldlt.solve(rhs);
  }
  TrainResult res;
  res.Gamma = Eigen::Map<MatrixXd>(g.data(), D, D);
  const MatrixXd B = normal_rhs(d);
  res.relative_residual = (B - apply_normal_operator(d, res.Gamma, lambda)).norm() / B.norm();
  res.seconds = seconds_since(t0);
  return res;
}

// ---------------------------------------------------------------------------------------------
// Errors

double exact_error(const MatrixXd& G, const MatrixXd& C, int Lt, double sigma_t) {
  const double D = double(G.rows());
  const MatrixXd GC = G * C;
  const double trC = C.trace();
  const double trGC = GC.trace();
  const double trGCG = GC.cwiseProduct(G).sum();  // tr(G C G^T)
  const double s2 = sigma_t * sigma_t;
  const double bias = (trC - 2.0 * trGC + trGCG) / D;
  return s2 + bias + ((trC / D + s2) * frob2(G) + trGCG / D) / double(Lt);
}

double exact_error_task(const MatrixXd& G, const VectorXd& w, int Lt, double sigma_t) {
  const double D = double(G.rows());
  const double s2 = sigma_t * sigma_t;
  const VectorXd Gw = G * w;
  return s2 + (w - Gw).squaredNorm() / D +
         ((w.squaredNorm() / D + s2) * frob2(G) + Gw.squaredNorm() / D) / double(Lt);
}

std::pair<double, double> monte_carlo_error(const MatrixXd& G, const VectorXd& w, int Lt,
                                            double sigma_t, int prompts, Rng& rng,
                                            Sampler sampler) {
  const Eigen::Index D = w.size();
  const double sd = 1.0 / std::sqrt(double(D));
  double sum = 0, sum2 = 0;
  VectorXd xq(D);
  for (int k = 0; k < prompts; ++k) {
    const VectorXd s = draw_context_estimate(w, Lt, sigma_t, rng, sampler);
    Normal nd(rng);
    nd.fill(xq.data(), D, sd);
    const double y = w.dot(xq) + sigma_t * nd();
    const double e = y - xq.dot(G * s);
    sum += e * e;
    sum2 += e * e * e * e;
  }
  const double mean = sum / prompts;
  const double var = std::max(0.0, sum2 / prompts - mean * mean);
  return {mean, std::sqrt(var / std::max(1, prompts - 1))};
}

// ---------------------------------------------------------------------------------------------
// Summaries

bool Estimate::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}
Stat Estimate::get(const std::string& name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return stats[i];
  throw std::out_of_range("no simulated quantity named '" + name + "'");
}

Estimate summarize(const std::vector<Values>& per_seed) {
  Estimate e;
  e.per_seed = per_seed;
  std::vector<std::vector<double>> samples;
  for (const auto& vals : per_seed)
    for (const auto& [name, v] : vals) {
      auto it = std::find(e.names.begin(), e.names.end(), name);
      std::size_t i = std::size_t(it - e.names.begin());
      if (it == e.names.end()) {
        e.names.push_back(name);
        samples.emplace_back();
      }
      samples[i].push_back(v);
    }
  for (const auto& s : samples) {
    Stat st;
    st.count = int(s.size());
    double sum = 0;
    for (double v : s) sum += v;
    st.mean = sum / st.count;
    double ss = 0;
    for (double v : s) ss += (v - st.mean) * (v - st.mean);
    st.sem = st.count > 1 ? std::sqrt(ss / (st.count - 1) / st.count) : 0.0;
    e.stats.push_back(st);
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// One seed

namespace {

const char* kProtocols[3] = {"tm", "idg", "odg"};

// Error that a pure fluctuation Delta adds to the protocol with task second moment C.
double quadratic_part(const MatrixXd& Dl, const MatrixXd& C, int Lt, double sigma_t) {
  const double D = double(Dl.rows());
  const double trDCD = (Dl * C).cwiseProduct(Dl).sum();
  return trDCD / D * (1.0 + 1.0 / Lt) + (C.trace() / D + sigma_t * sigma_t) * frob2(Dl) / Lt;
}

}  // namespace

void check_odg_kind(const theory::Params& p, OdgKind odg) {
  if (odg == OdgKind::Subspace && !p.task_spectrum.empty())
    throw InvalidParams("odg", "'subspace' ODG tasks (low rank in an independent subspace) are "
                               "only defined for the paper's low-rank tasks; with a general "
                               "task_spectrum use 'isotropic'");
}

Values run_seed(const theory::Params& p, const SimOptions& o, std::uint64_t seed) {
  check_odg_kind(p, o.odg);
  const auto t0 = Clock::now();
  Rng rng(seed);
  Dataset d = generate(p, o.dim, rng, o.assignment, o.sampler);
  const double t_data = seconds_since(t0);
  TrainResult tr = o.solver == Solver::CG
                       ? train_cg(d, p.lambda, o.cg_tolerance, o.cg_max_iterations, o.min_norm)
                       : train_direct(d, p.lambda, o.min_norm);
  const MatrixXd& G = tr.Gamma;
  const auto& n = d.n;
  const double D = n.D;
  const double st = p.sigma_test;

  // Test-task second moments.
  const MatrixXd S = d.S();
  const MatrixXd C_idg = d.task_covariance();
  MatrixXd C_odg;
  if (o.odg == OdgKind::Isotropic) {
    C_odg = MatrixXd::Identity(n.D, n.D);
  } else {
    const MatrixXd B = haar_orthonormal(n.D, n.r, rng);
    C_odg = (D / n.r) * B * B.transpose();
  }
  const MatrixXd* C[3] = {&S, &C_idg, &C_odg};

  Values v;
  for (int k = 0; k < 3; ++k)
    v.emplace_back(std::string("error.") + kProtocols[k], exact_error(G, *C[k], n.Lt, st));

  v.emplace_back("order.m", (G * S).trace() / D);
  v.emplace_back("order.q", (G * S).cwiseProduct(G).sum() / D);
  v.emplace_back("order.mbar", G.trace() / D);
  v.emplace_back("order.qbar", frob2(G) / D);
  if (d.general) {
    // m0 = tr(Sigma G)/D, q0 = tr(G Sigma G^T)/D (= E w^T G w / D, E |G w|^2 / D for w ~ N(0, Sigma)).
    const MatrixXd GS = G * d.Sigma;
    v.emplace_back("order.m0", GS.trace() / D);
    v.emplace_back("order.q0", GS.cwiseProduct(G).sum() / D);
  } else {
    // The same with Sigma = (D/r) A A^T, in the original (bit-identical) form.
    const MatrixXd GA = G * d.A;
    v.emplace_back("order.m0", (d.A.transpose() * GA).trace() / n.r);
    v.emplace_back("order.q0", frob2(GA) / n.r);
  }

  if (o.theory) {
    const double z = o.theory->z, e = o.theory->e, nu = o.theory->nu;
    Eigen::SelfAdjointEigenSolver<MatrixXd> es(S);
    const VectorXd lam = es.eigenvalues().cwiseMax(0.0);
    const MatrixXd& U = es.eigenvectors();
    const double cut = 1e-9 * std::max(1.0, lam.maxCoeff());
    VectorXd in_span(n.D);
    for (int i = 0; i < n.D; ++i) in_span(i) = lam(i) > cut ? 1.0 : 0.0;
    const MatrixXd PS = U * in_span.asDiagonal() * U.transpose();
    const MatrixXd P0 = MatrixXd::Identity(n.D, n.D) - PS;
    const VectorXd fbar = lam.array() / (lam.array() - z);
    const MatrixXd Gbar = U * fbar.asDiagonal() * U.transpose();
    const MatrixXd Dl = G - Gbar;
    for (int k = 0; k < 3; ++k) {
      const std::string pre = std::string("decomp.") + kProtocols[k] + ".";
      const double total = exact_error(G, *C[k], n.Lt, st);
      const double algo = exact_error(Gbar, *C[k], n.Lt, st);
      const double span = quadratic_part(Dl * PS, *C[k], n.Lt, st);
      const double null = quadratic_part(Dl * P0, *C[k], n.Lt, st);
      v.emplace_back(pre + "algo", algo);
      v.emplace_back(pre + "excess", total - algo);
      v.emplace_back(pre + "span", span);
      v.emplace_back(pre + "null", null);
      v.emplace_back(pre + "cross", total - algo - span - null);
    }
    // Fit |Delta u_i|^2 (s_i - z)^2 = e_T s_i + e_R over the eigenvectors u_i of S; the model
    // Gamma = Gbar + G_T + G_R predicts e_T = e (memorization) and e_R = e nu (structural).
    const MatrixXd DU = Dl * U;
    VectorXd dd(n.D);
    for (int i = 0; i < n.D; ++i) dd(i) = DU.col(i).squaredNorm() * (lam(i) - z) * (lam(i) - z);
    Eigen::MatrixXd J(n.D, 2);
    J.col(0).setOnes();
    J.col(1) = lam;
    const Eigen::Vector2d coef = (J.transpose() * J).ldlt().solve(J.transpose() * dd);
    v.emplace_back("decomp.fit.e", coef(1));
    v.emplace_back("decomp.fit.e_nu", coef(0));
    int nnull = 0;
    double snull = 0;
    for (int i = 0; i < n.D; ++i)
      if (in_span(i) == 0.0) {
        ++nnull;
        snull += dd(i);
      }
    if (nnull > 0) v.emplace_back("decomp.fit.e_nu_null", snull / nnull);
    v.emplace_back("decomp.rank_S", double(n.D - nnull));

    if (o.prediction_prompts > 0) {
      const VectorXd sqrt_lam = lam.cwiseSqrt();
      const VectorXd inv = (lam.array() - z).inverse();
      const int nb = std::max(2, o.histogram_bins);
      Normal nd(rng);
      std::uniform_int_distribution<int> pick(0, n.M0 - 1);
      MatrixXd Bsub;
      if (o.odg == OdgKind::Subspace) Bsub = haar_orthonormal(n.D, n.r, rng);
      VectorXd xq(n.D), vr(d.general ? n.D : n.r), wq(n.D);
      for (int k = 0; k < 3; ++k) {
        std::vector<double> hist(nb, 0.0);
        double r2 = 0, var_pred = 0, t1 = 0, t2 = 0;
        for (int j = 0; j < o.prediction_prompts; ++j) {
          if (k == 0) {
            wq = d.W.col(pick(rng));
          } else if (k == 1 && d.general) {
            nd.fill(vr.data(), n.D, 1.0);
            wq = d.Sigma_half * vr;  // w ~ N(0, Sigma)
          } else if (k == 1 || o.odg == OdgKind::Subspace) {
            nd.fill(vr.data(), n.r, 1.0);
            wq = std::sqrt(D / n.r) * ((k == 1 ? d.A : Bsub) * vr);
          } else {
            nd.fill(wq.data(), n.D, 1.0);
          }
          const VectorXd s = draw_context_estimate(wq, n.Lt, st, rng, o.sampler);
          nd.fill(xq.data(), n.D, 1.0 / std::sqrt(D));
          const double res = xq.dot(Dl * s);
          const VectorXd su = U.transpose() * s;  // s in the eigenbasis of S
          const double a1 = (sqrt_lam.cwiseProduct(inv).cwiseProduct(su)).squaredNorm();
          const double a2 = (inv.cwiseProduct(su)).squaredNorm();
          const double vp = xq.squaredNorm() / D * (e * a1 + e * nu * a2);
          r2 += res * res;
          var_pred += vp;
          const double t = res / std::sqrt(vp);
          t1 += t;
          t2 += t * t;
          const int b = int(std::floor((t + 4.0) / 8.0 * nb));
          if (b >= 0 && b < nb) hist[b] += 1.0;
        }
        const double np = o.prediction_prompts;
        const std::string pre = std::string("dist.") + kProtocols[k] + ".";
        v.emplace_back(pre + "var_ratio", r2 / var_pred);
        v.emplace_back(pre + "std_mean", t1 / np);
        v.emplace_back(pre + "std_var", t2 / np - (t1 / np) * (t1 / np));
        for (int b = 0; b < nb; ++b)
          v.emplace_back(std::string("hist.") + kProtocols[k] + "." + std::to_string(b),
                         hist[b] / np);
      }
    }
  }
  v.emplace_back("cg.iterations", tr.iterations);
  v.emplace_back("cg.relative_residual", tr.relative_residual);
  v.emplace_back("timing.data_seconds", t_data);
  v.emplace_back("timing.train_seconds", tr.seconds);
  v.emplace_back("timing.seed_seconds", seconds_since(t0));
  return v;
}

LowRankSimulator::LowRankSimulator(theory::Params p, SimOptions o)
    : p_(std::move(p)), o_(std::move(o)) {
  p_.validate();
  check_odg_kind(p_, o_.odg);
  if (o_.seeds < 1) throw InvalidParams("seeds", "must be >= 1");
  if (o_.threads < 1) throw InvalidParams("threads", "must be >= 1");
  const Sizes n = sizes(p_, o_.dim);
  if (p_.lambda == 0.0 && (long long)n.N < (long long)n.D * n.D && !o_.min_norm)
    throw InvalidParams("lambda", "lambda = 0 with N = " + std::to_string(n.N) + " < D^2 = " +
                                      std::to_string((long long)n.D * n.D) +
                                      " sequences (tau < 1): Gamma is not unique; use lambda > 0"
                                      " or the minimum-norm option");
}

Estimate LowRankSimulator::run() const {
  std::vector<Values> results(o_.seeds);
  std::vector<std::exception_ptr> errors(o_.seeds);
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int k; (k = next.fetch_add(1)) < o_.seeds;) {
      try {
        results[k] = run_seed(p_, o_, numerics::derive_seed(o_.base_seed, std::uint64_t(k)));
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  const int nt = std::min(o_.threads, o_.seeds);
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  Estimate est = summarize(results);
  const int nb = std::max(2, o_.histogram_bins);
  for (int b = 0; b <= nb; ++b) est.histogram_edges.push_back(-4.0 + 8.0 * b / nb);
  return est;
}

// ---------------------------------------------------------------------------------------------
// Ill-posedness demo

GdDemo gd_demo(const theory::Params& p, int dim, std::uint64_t seed,
               const std::vector<double>& init_scales, int steps, OdgKind odg) {
  check_odg_kind(p, odg);
  Rng rng(seed);
  const Dataset d = generate(p, dim, rng, Assignment::Random, Sampler::Factorized);
  const auto& n = d.n;
  const double D = n.D;
  const TrainResult ref = train_cg(d, p.lambda, 1e-10, 20000);
  const MatrixXd S = d.S();
  const MatrixXd C_idg = d.task_covariance();
  MatrixXd C_odg = MatrixXd::Identity(n.D, n.D);
  if (odg == OdgKind::Subspace) {
    const MatrixXd B = haar_orthonormal(n.D, n.r, rng);
    C_odg = (D / n.r) * B * B.transpose();
  }
  Eigen::SelfAdjointEigenSolver<MatrixXd> es(S);
  const double cut = 1e-9 * std::max(1.0, es.eigenvalues().maxCoeff());
  VectorXd in_span(n.D);
  for (int i = 0; i < n.D; ++i) in_span(i) = es.eigenvalues()(i) > cut ? 1.0 : 0.0;
  const MatrixXd PS = es.eigenvectors() * in_span.asDiagonal() * es.eigenvectors().transpose();
  const MatrixXd P0 = MatrixXd::Identity(n.D, n.D) - PS;
  const int Lt = n.Lt;
  const double st = p.sigma_test;

  GdDemo out;
  out.cg_odg = exact_error(ref.Gamma, C_odg, Lt, st);
  out.cg_idg = exact_error(ref.Gamma, C_idg, Lt, st);
  out.cg_tm = exact_error(ref.Gamma, S, Lt, st);
  out.cg_null_norm2 = frob2(ref.Gamma * P0) / D;
  out.cg_loss = training_loss(d, ref.Gamma, p.lambda);

  // Step 1/lambda_max of the normalized operator (power iteration).
  NormalOperator op(d, p.lambda);
  MatrixXd V = MatrixXd::Ones(n.D, n.D) / D, AV(n.D, n.D);
  double lmax = 0;
  for (int it = 0; it < 50; ++it) {
    op.apply(V, AV);
    lmax = AV.norm() / V.norm();
    V = AV / AV.norm();
  }
  const double eta = 1.0 / (1.05 * lmax);
  const MatrixXd B = normal_rhs(d);
  Normal nd(rng);
  for (double scale : init_scales) {
    MatrixXd G(n.D, n.D);
    nd.fill(G.data(), G.size(), scale / std::sqrt(D));
    MatrixXd AG(n.D, n.D);
    for (int t = 0; t < steps; ++t) {
      op.apply(G, AG);
      G -= eta * (AG - B);
    }
    GdRun r;
    r.init_scale = scale;
    r.steps = steps;
    r.loss = training_loss(d, G, p.lambda);
    r.odg = exact_error(G, C_odg, Lt, st);
    r.idg = exact_error(G, C_idg, Lt, st);
    r.tm = exact_error(G, S, Lt, st);
    r.null_norm2 = frob2(G * P0) / D;
    r.null_dist2 = frob2((G - ref.Gamma) * P0) / D;
    r.span_dist2 = frob2((G - ref.Gamma) * PS) / D;
    out.runs.push_back(r);
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
