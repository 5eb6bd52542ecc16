// Depth as preconditioned gradient descent (theory/depth.hpp, docs/multistep_depth.md).
#include "theory/depth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include <Eigen/Core>
#include <boost/math/tools/roots.hpp>

#include "numerics/dense_decompositions.hpp"
#include "numerics/error.hpp"
#include "numerics/table.hpp"
#include "theory/mpfr_array.hpp"

namespace icl::theory {

namespace {

bool finite(double x) { return std::isfinite(x); }

// The Jacobi matrix of the continuous part of the law (§3). alpha >= 1: MP(ratio lambda = 1/alpha,
// mean 1) itself (the free Poisson law with rate 1/lambda and jump lambda): diagonal 1,
// 1 + lambda, 1 + lambda, ...; off-diagonal sqrt(lambda). alpha < 1: mu = (1 - alpha) delta_0 +
// alpha MP(ratio alpha, scale lambda) (the nonzero eigenvalues are those of the N x N dual), and
// the Jacobi matrix is that of the second part: scale lambda times diagonal 1, 1 + alpha, ...,
// off-diagonal sqrt(alpha). The atom contributes P(0)^2 = 1 to the bias and nothing to the noise
// term, so it is added exactly, not through a cancellation.
struct Jacobi {
  double d0, d, off, weight, atom;
  explicit Jacobi(double alpha) {
    const double lambda = 1.0 / alpha;
    if (alpha >= 1) {
      d0 = 1.0, d = 1.0 + lambda, off = std::sqrt(lambda), weight = 1.0, atom = 0.0;
    } else {
      d0 = lambda, d = lambda * (1.0 + alpha), off = lambda * std::sqrt(alpha), weight = alpha,
      atom = 1.0 - alpha;
    }
  }
  double diag(std::size_t i) const { return i == 0 ? d0 : d; }
  // y[0..n] = (J x)[0..n] for x supported on 0..n-1 (y sized >= n + 1, x sized >= n + 1).
  void apply(const std::vector<double>& x, std::vector<double>& y, std::size_t n) const {
    for (std::size_t i = 0; i <= n && i < y.size(); ++i) {
      double v = (i < n ? diag(i) * x[i] : 0.0);
      if (i >= 1 && i - 1 < n) v += off * x[i - 1];
      if (i + 1 < n) v += off * x[i + 1];
      y[i] = v;
    }
  }
  Eigen::MatrixXd dense(int k) const {
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(k, k);
    for (int i = 0; i < k; ++i) {
      J(i, i) = diag(static_cast<std::size_t>(i));
      if (i + 1 < k) J(i, i + 1) = J(i + 1, i) = off;
    }
    return J;
  }
};

// bias, noise integral and their g-derivatives by the recursion v_{l+1} = (I - g J) v_l, v_0 = e_0,
// on the first L + 1 coordinates (exact: §3).
struct TermsWithSlope {
  double bias, noise, dbias, dnoise;
};

// On the continuous part (weight and atom not applied).
TermsWithSlope continuous_terms(const Jacobi& J, int layers, double g) {
  const std::size_t K = static_cast<std::size_t>(layers) + 1;
  std::vector<double> v(K, 0.0), dv(K, 0.0), sum(K, 0.0), dsum(K, 0.0), Jv(K, 0.0), Jdv(K, 0.0);
  v[0] = 1.0;
  for (std::size_t l = 0; l < static_cast<std::size_t>(layers); ++l) {
    // v and dv are supported on 0..l.
    for (std::size_t i = 0; i <= l; ++i) {
      sum[i] += v[i];
      dsum[i] += dv[i];
    }
    J.apply(v, Jv, l + 1);
    J.apply(dv, Jdv, l + 1);
    for (std::size_t i = 0; i <= l + 1; ++i) {
      dv[i] = dv[i] - Jv[i] - g * Jdv[i];
      v[i] = v[i] - g * Jv[i];
    }
  }
  TermsWithSlope t{0, 0, 0, 0};
  for (std::size_t i = 0; i < K; ++i) {
    t.bias += v[i] * v[i];
    t.dbias += 2.0 * v[i] * dv[i];
  }
  // r = g sum (supported on 0..L-1), dr = sum + g dsum; noise = r^T J r.
  std::vector<double> r(K, 0.0), dr(K, 0.0), Jr(K, 0.0);
  for (std::size_t i = 0; i < K; ++i) {
    r[i] = g * sum[i];
    dr[i] = sum[i] + g * dsum[i];
  }
  J.apply(r, Jr, K - 1);
  for (std::size_t i = 0; i < K; ++i) {
    t.noise += r[i] * Jr[i];
    t.dnoise += 2.0 * dr[i] * Jr[i];
  }
  return t;
}

// The full terms: atom + weight x continuous part.
TermsWithSlope terms_with_slope(double alpha, int layers, double g) {
  const Jacobi J(alpha);
  TermsWithSlope t = continuous_terms(J, layers, g);
  t.bias = J.atom + J.weight * t.bias;
  t.dbias *= J.weight;
  t.noise *= J.weight;
  t.dnoise *= J.weight;
  return t;
}

// e(g), e'(g), and the excess e - sigma^2 - atom mass that the minimization compares (it keeps
// its relative precision when the atom's floor dominates: sigma = 0, alpha < 1, deep).
struct Value {
  double error, slope, excess;
};
Value value_at(const DepthParams& p, double g) {
  const Jacobi J(p.alpha);
  const TermsWithSlope t = continuous_terms(J, p.layers, g);
  const double k = p.sigma * p.sigma / p.alpha;
  const double excess = J.weight * (t.bias + k * t.noise);
  return {p.sigma * p.sigma + J.atom + excess, J.weight * (t.dbias + k * t.dnoise), excess};
}

}  // namespace

void DepthParams::validate() const {
  if (!finite(alpha) || alpha <= 0) throw InvalidParams("alpha", "must be finite and > 0");
  if (!finite(sigma) || sigma < 0) throw InvalidParams("sigma", "must be finite and >= 0");
  if (layers < 1 || layers > kMaxDepthLayers)
    throw InvalidParams("layers", "must be an integer in [1, " + std::to_string(kMaxDepthLayers) +
                                      "], got " + std::to_string(layers));
}

void DepthOptions::validate() const {
  if (scan_density < 4 || scan_density > 10000)
    throw InvalidParams("scan_density", "must be an integer in [4, 10000]");
  if (!(root_imag_tolerance > 0 && root_imag_tolerance <= 1e-2))
    throw InvalidParams("root_imag_tolerance", "must be in (0, 1e-2]");
}

double mp_moment(double lambda, int k) {
  if (k < 0) throw InvalidParams("k", "must be >= 0");
  if (k == 0) return 1.0;
  // Narayana(k, j) = C(k, j) C(k, j - 1) / k, by the ratio of consecutive terms.
  double sum = 0, narayana = 1.0, power = 1.0;  // Narayana(k, 1) = 1
  for (int j = 1; j <= k; ++j) {
    sum += narayana * power;
    // N(k, j+1) / N(k, j) = (k - j)(k - j + 1) / (j (j + 1))
    narayana *= double(k - j) * double(k - j + 1) / (double(j) * double(j + 1));
    power *= lambda;
  }
  return sum;
}

DepthTerms depth_terms(double alpha, int layers, double g) {
  DepthParams{alpha, 0.0, layers}.validate();
  const TermsWithSlope t = terms_with_slope(alpha, layers, g);
  return {t.bias, t.noise};
}

DepthValue depth_error(const DepthParams& p, double g) {
  p.validate();
  const Value v = value_at(p, g);
  return {v.error, v.slope};
}

double depth_error_steps(const DepthParams& p, const std::vector<double>& steps) {
  DepthParams q = p;
  q.layers = static_cast<int>(steps.size());
  q.validate();
  for (double g : steps)
    if (!finite(g)) throw InvalidParams("steps", "must be finite");
  const Jacobi J(p.alpha);
  const std::size_t K = steps.size() + 1;
  // v = P_l(J) e_0; r = R_l(J) e_0 with 1 - P_l = s R_l: R_{l+1} = (1 - g_l s) R_l + g_l.
  std::vector<double> v(K, 0.0), r(K, 0.0), Jv(K, 0.0), Jr(K, 0.0);
  v[0] = 1.0;
  for (std::size_t l = 0; l < steps.size(); ++l) {
    J.apply(v, Jv, l + 1);
    J.apply(r, Jr, l + 1);
    for (std::size_t i = 0; i <= l + 1; ++i) {
      v[i] -= steps[l] * Jv[i];
      r[i] -= steps[l] * Jr[i];
    }
    r[0] += steps[l];
  }
  J.apply(r, Jr, K - 1);
  double bias = 0, noise = 0;
  for (std::size_t i = 0; i < K; ++i) {
    bias += v[i] * v[i];
    noise += r[i] * Jr[i];
  }
  return p.sigma * p.sigma + J.atom + J.weight * (bias + p.sigma * p.sigma / p.alpha * noise);
}

std::vector<double> depth_error_polynomial(const DepthParams& p) {
  p.validate();
  // 192 bits (57 digits), rounded to nearest: the Narayana numbers and binomials are integers,
  // exact at this precision; no sum cancels (the terms of c_j share the sign (-1)^j), so each
  // c_j is its correctly rounded double.
  constexpr mpfr_prec_t kBits = 192;
  constexpr mpfr_rnd_t kRound = detail::kMpRound;
  const int L = p.layers, n = 2 * L + 1;
  detail::MpArray m(n, kBits), c(n, kBits), choose_2L(n, kBits), choose_L(L + 1, kBits),
      t(5, kBits);
  const mpfr_ptr lambda = t[0], narayana = t[1], power = t[2], term = t[3], k = t[4];
  mpfr_set_d(lambda, p.alpha, kRound);
  mpfr_ui_div(lambda, 1, lambda, kRound);
  // Moments m_0..m_{2L} by exact Narayana numbers.
  mpfr_set_ui(m[0], 1, kRound);
  for (int order = 1; order < n; ++order) {
    mpfr_set_ui(narayana, 1, kRound);
    mpfr_set_ui(power, 1, kRound);
    for (int j = 1; j <= order; ++j) {
      mpfr_mul(term, narayana, power, kRound);
      mpfr_add(m[order], m[order], term, kRound);
      mpfr_mul_ui(narayana, narayana, static_cast<unsigned long>((order - j) * (order - j + 1)), kRound);
      mpfr_div_ui(narayana, narayana, static_cast<unsigned long>(j * (j + 1)), kRound);
      mpfr_mul(power, power, lambda, kRound);
    }
  }
  auto binomials = [&](int top, detail::MpArray& out) {  // C(top, 0..top)
    mpfr_set_ui(out[0], 1, kRound);
    for (int i = 1; i <= top; ++i) {
      mpfr_mul_ui(out[i], out[i - 1], static_cast<unsigned long>(top - i + 1), kRound);
      mpfr_div_ui(out[i], out[i], static_cast<unsigned long>(i), kRound);
    }
  };
  binomials(2 * L, choose_2L);
  binomials(L, choose_L);
  for (int j = 0; j < n; ++j) {
    mpfr_mul(c[j], choose_2L[j], m[j], kRound);
    if (j % 2) mpfr_neg(c[j], c[j], kRound);
  }
  // k = sigma^2 / alpha; q_a q_b = (-1)^(a+b) C(L, a) C(L, b).
  mpfr_set_d(k, p.sigma, kRound);
  mpfr_sqr(k, k, kRound);
  mpfr_div_d(k, k, p.alpha, kRound);
  for (int a = 1; a <= L; ++a)
    for (int b = 1; b <= L; ++b) {
      mpfr_mul(term, choose_L[a], choose_L[b], kRound);
      mpfr_mul(term, term, m[a + b - 1], kRound);
      mpfr_mul(term, term, k, kRound);
      if ((a + b) % 2) mpfr_neg(term, term, kRound);
      mpfr_add(c[a + b], c[a + b], term, kRound);
    }
  mpfr_set_d(term, p.sigma, kRound);
  mpfr_sqr(term, term, kRound);
  mpfr_add(c[0], c[0], term, kRound);
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) out[static_cast<std::size_t>(j)] = mpfr_get_d(c[j], kRound);
  return out;
}

double shared_step_bound(double alpha, int layers) {
  // For g >= (1 + B^{1/2L}) / theta with B = (1 + lambda) / (1 - theta)^2: every s >= theta has
  // (1 - g s)^{2L} >= B, and mu(s >= theta) >= (1 - theta)^2 / (1 + lambda) (Paley-Zygmund,
  // m_1 = 1, m_2 = 1 + lambda), so the bias alone is >= 1 = e(0) - sigma^2 (§4).
  const double lambda = 1.0 / alpha;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 1; i < 1000; ++i) {
    const double theta = i / 1000.0;
    const double B = (1.0 + lambda) / ((1.0 - theta) * (1.0 - theta));
    best = std::min(best, (1.0 + std::pow(B, 0.5 / layers)) / theta);
  }
  return best;
}

DepthMinimum minimize_shared_step(const DepthParams& p, const DepthOptions& options) {
  p.validate();
  options.validate();
  const double G = shared_step_bound(p.alpha, p.layers);
  const double lambda = 1.0 / p.alpha;
  const double s_plus = (1.0 + std::sqrt(lambda)) * (1.0 + std::sqrt(lambda));
  const double units = std::ceil(G * s_plus);
  const long M = std::max<long>(
      200, static_cast<long>(options.scan_density) * p.layers * static_cast<long>(units));
  DepthMinimum best;
  best.g_bound = G;
  best.step = 0;
  double best_excess = value_at(p, 0.0).excess;
  double g_prev = 0, slope_prev = value_at(p, 0.0).slope;
  const auto slope = [&](double g) { return value_at(p, g).slope; };
  for (long i = 1; i <= M; ++i) {
    const double g = G * double(i) / double(M);
    const double s = slope(g);
    if (slope_prev < 0 && s >= 0) {
      ++best.local_minima;
      double gm = g;
      if (s > 0) {
        std::uintmax_t iterations = 200;
        const auto root = boost::math::tools::toms748_solve(
            slope, g_prev, g, slope_prev, s, boost::math::tools::eps_tolerance<double>(50),
            iterations);
        gm = 0.5 * (root.first + root.second);
      }
      const double e = value_at(p, gm).excess;
      if (e < best_excess) {
        best_excess = e;
        best.step = gm;
      }
    }
    g_prev = g;
    slope_prev = s;
  }
  best.error = value_at(p, best.step).error;
  if (!finite(best.error) || best.local_minima == 0)
    throw NumericalError("depth: no interior minimum of e(g) found on [0, " +
                         numerics::format_number(G) + "]");
  return best;
}

PerLayerEnvelope per_layer_envelope(const DepthParams& p) {
  p.validate();
  const int L = p.layers, K = L + 1;
  const Jacobi jac(p.alpha);
  const Eigen::MatrixXd J = jac.dense(K);
  const double k = p.sigma * p.sigma / p.alpha;
  // P(s) = 1 - s R(s), R = sum_k r_k p_k (orthonormal polynomials of the law): the error is
  // sigma^2 + 1 - 2 b^T r + r^T A r with A = (J^2 + k J)[0:L, 0:L], b = J[0:L, 0] (§5).
  const Eigen::MatrixXd A = (J * J + k * J).topLeftCorner(L, L);
  const Eigen::VectorXd b = J.col(0).head(L);
  Eigen::VectorXd r;
  (void)numerics::ldlt_solve(A, b, r);  // A is positive definite (§5)
  PerLayerEnvelope env;
  env.error = p.sigma * p.sigma + jac.atom + jac.weight * (1.0 - b.dot(r));
  // P = sum_j pi_j p_j, pi = e_0 - J r; its roots are the eigenvalues of the comrade matrix
  // J_L - (b_L / pi_L) e_{L-1} pi_{0:L-1}^T.
  Eigen::VectorXd rp = Eigen::VectorXd::Zero(K);
  rp.head(L) = r;
  Eigen::VectorXd pi = -J * rp;
  pi(0) += 1.0;
  Eigen::MatrixXd C = J.topLeftCorner(L, L);
  C.row(L - 1) -= (jac.off / pi(L)) * pi.head(L).transpose();
  const Eigen::VectorXcd eig = numerics::general_eigenvalues(C).values;
  std::vector<std::pair<double, double>> roots;
  for (int i = 0; i < L; ++i) roots.emplace_back(eig(i).real(), eig(i).imag());
  std::sort(roots.begin(), roots.end());
  for (const auto& [re, im] : roots) {
    env.roots_real.push_back(re);
    env.roots_imag.push_back(im);
  }
  return env;
}

DepthResult run(const DepthParams& params, const DepthOptions& options) {
  params.validate();
  options.validate();
  DepthResult r;
  r.params = params;
  r.options = options;
  const DepthMinimum m = minimize_shared_step(params, options);
  r.error = m.error;
  r.step_opt = m.step;
  r.gamma_opt = params.layers * m.step;
  r.local_minima = m.local_minima;
  r.g_bound = m.g_bound;

  const PerLayerEnvelope env = per_layer_envelope(params);
  r.per_layer_error = env.error;
  r.per_layer_roots_real = env.roots_real;
  r.per_layer_roots_imag = env.roots_imag;
  r.per_layer_realizable = true;
  std::vector<double> steps;
  for (std::size_t i = 0; i < env.roots_real.size(); ++i) {
    const double re = env.roots_real[i], im = env.roots_imag[i];
    if (std::abs(im) <= options.root_imag_tolerance * std::hypot(re, im)) {
      steps.push_back(1.0 / re);
    } else {
      r.per_layer_realizable = false;
      steps.push_back(std::numeric_limits<double>::quiet_NaN());
    }
  }
  // Ascending, the NaN (complex pairs) last.
  std::stable_partition(steps.begin(), steps.end(), [](double x) { return !std::isnan(x); });
  const auto real_end = std::find_if(steps.begin(), steps.end(), [](double x) { return std::isnan(x); });
  std::sort(steps.begin(), real_end);
  r.per_layer_steps = steps;

  if (options.by_depth) {
    for (int l = 1; l <= params.layers; ++l) {
      if (l == params.layers) {
        r.error_by_depth.push_back(m.error);
        r.step_by_depth.push_back(m.step);
        continue;
      }
      const DepthMinimum ml = minimize_shared_step({params.alpha, params.sigma, l}, options);
      r.error_by_depth.push_back(ml.error);
      r.step_by_depth.push_back(ml.step);
    }
  }
  r.step_one_over_c = 1.0 / (1.0 + 1.0 / params.alpha);
  r.error_at_one_over_c = value_at(params, r.step_one_over_c).error;

  const bool ok = finite(r.error) && finite(r.per_layer_error) && finite(r.error_at_one_over_c);
  r.status = ok ? numerics::Status::Converged : numerics::Status::NumericalFailure;
  std::ostringstream msg;
  if (!ok) msg << "a non-finite value; ";
  msg << "global minimum over g in [0, " << numerics::format_number(m.g_bound) << "] ("
      << m.local_minima << (m.local_minima == 1 ? " local minimum" : " local minima")
      << "); per-layer envelope "
      << (r.per_layer_realizable ? "realizable by real steps"
                                 : "not realizable by real steps (complex roots)");
  r.message = msg.str();
  return r;
}

nlohmann::ordered_json to_json(const DepthParams& p) {
  nlohmann::ordered_json j;
  j["alpha"] = p.alpha;
  j["sigma"] = p.sigma;
  j["layers"] = p.layers;
  return j;
}

nlohmann::ordered_json to_json(const DepthResult& r) {
  nlohmann::ordered_json j;
  j["params"] = to_json(r.params);
  j["error"] = r.error;
  j["gamma_opt"] = r.gamma_opt;
  j["step_opt"] = r.step_opt;
  j["per_layer_error"] = r.per_layer_error;
  j["per_layer_steps"] = r.per_layer_steps;  // NaN (complex) -> null
  j["per_layer_realizable"] = r.per_layer_realizable;
  nlohmann::ordered_json roots = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < r.per_layer_roots_real.size(); ++i)
    roots.push_back({r.per_layer_roots_real[i], r.per_layer_roots_imag[i]});
  j["per_layer_roots"] = roots;
  j["error_by_depth"] = r.error_by_depth;
  j["step_by_depth"] = r.step_by_depth;
  j["step_one_over_c"] = r.step_one_over_c;
  j["error_at_one_over_c"] = r.error_at_one_over_c;
  j["local_minima"] = r.local_minima;
  j["g_bound"] = r.g_bound;
  j["converged"] = r.converged();
  j["status"] = numerics::to_string(r.status);
  j["message"] = r.message;
  return j;
}

std::string to_text(const DepthResult& r) {
  using numerics::format_number;
  std::ostringstream o;
  o << "depth L = " << r.params.layers << ", alpha = " << format_number(r.params.alpha)
    << ", sigma = " << format_number(r.params.sigma) << "\n";
  o << "shared step: error " << format_number(r.error) << " at gamma = L g = "
    << format_number(r.gamma_opt) << " (g = " << format_number(r.step_opt) << ")\n";
  o << "per-layer steps: error " << format_number(r.per_layer_error) << ", "
    << (r.per_layer_realizable ? "real steps g_l:" : "NOT realizable by real steps; roots s_l:");
  for (std::size_t i = 0; i < r.per_layer_roots_real.size(); ++i) {
    if (r.per_layer_realizable) {
      o << " " << format_number(r.per_layer_steps[i]);
      continue;
    }
    o << " " << format_number(r.per_layer_roots_real[i]);
    if (r.per_layer_roots_imag[i] != 0)
      o << (r.per_layer_roots_imag[i] > 0 ? "+" : "-")
        << format_number(std::abs(r.per_layer_roots_imag[i])) << "i";
  }
  o << (r.per_layer_realizable ? "\n" : " (g_l = 1/s_l)\n");
  o << "g = 1/c = " << format_number(r.step_one_over_c) << ": error "
    << format_number(r.error_at_one_over_c) << "\n";
  if (!r.error_by_depth.empty()) {
    o << "error by depth:";
    for (double e : r.error_by_depth) o << " " << format_number(e);
    o << "\n";
  }
  o << numerics::to_string(r.status) << ": " << r.message << "\n";
  return o.str();
}

}  // namespace icl::theory
