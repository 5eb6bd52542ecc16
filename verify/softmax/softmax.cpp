#include "verify/softmax/softmax.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "numerics/error.hpp"
#include "numerics/timing.hpp"

namespace icl::verify::softmax {

namespace {

using numerics::Clock;
using numerics::seconds_since;

// Uniform on [0, 1) with 53 random bits.
double uniform01(Rng& rng) { return double(rng() >> 11) * 0x1.0p-53; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Sampling and data

Prompts draw_prompts(const MatrixXd& tasks, int L, double sigma, Rng& rng) {
  if (L < 1) throw InvalidParams("L", "context length must be >= 1");
  Prompts P;
  P.D = int(tasks.rows());
  P.T = L + 1;
  const Eigen::Index count = tasks.cols();
  P.Z.resize(P.D + 1, count * P.T);
  P.y.resize(count);
  NormalSampler nd(rng);
  const double sd = 1.0 / std::sqrt(double(P.D));
  for (Eigen::Index n = 0; n < count; ++n) {
    for (int l = 0; l < P.T; ++l) {
      const Eigen::Index col = n * P.T + l;
      double* x = P.Z.col(col).data();
      nd.fill(x, P.D, sd);
      const double y = tasks.col(n).dot(P.Z.col(col).head(P.D)) + sigma * nd();
      if (l < L) {
        P.Z(P.D, col) = y;
      } else {
        P.Z(P.D, col) = 0.0;  // the query token carries no label
        P.y(n) = y;
      }
    }
  }
  return P;
}

TrainingData generate(const theory::Params& p, int dim, Rng& rng,
                      verify::lowrank::Assignment assignment) {
  if (!p.task_spectrum.empty())
    throw InvalidParams("task_spectrum", "the softmax check uses the paper's low-rank tasks only");
  TrainingData d;
  d.n = verify::lowrank::sizes(p, dim);
  const auto& n = d.n;
  // Same order and algorithm as verify::lowrank::generate: A, then V (r x M0), then the assignment.
  d.A = verify::lowrank::haar_orthonormal(n.D, n.r, rng);
  {
    NormalSampler nd(rng);
    MatrixXd V(n.r, n.M0);
    nd.fill(V.data(), V.size(), 1.0);
    d.W = std::sqrt(double(n.D) / n.r) * (d.A * V);
  }
  d.task.resize(n.N);
  if (assignment == verify::lowrank::Assignment::Random) {
    std::uniform_int_distribution<int> pick(0, n.M0 - 1);
    for (int i = 0; i < n.N; ++i) d.task[i] = pick(rng);
  } else {
    for (int i = 0; i < n.N; ++i) d.task[i] = i % n.M0;
  }
  MatrixXd Wseq(n.D, n.N);
  for (int i = 0; i < n.N; ++i) Wseq.col(i) = d.W.col(d.task[i]);
  d.prompts = draw_prompts(Wseq, n.L, p.sigma, rng);
  return d;
}

// ---------------------------------------------------------------------------------------------
// Model

const char* to_string(Init i) { return i == Init::Glorot ? "glorot" : "torch"; }
Init init_from_string(const std::string& s) {
  if (s == "glorot") return Init::Glorot;
  if (s == "torch") return Init::Torch;
  throw InvalidParams("init", "must be 'glorot' or 'torch', got '" + s + "'");
}

Model init_model(int D, int attn_dim, Rng& rng, Init init) {
  if (D < 1) throw InvalidParams("dim", "must be >= 1");
  if (attn_dim < 1) throw InvalidParams("attn_dim", "must be >= 1");
  const int D1 = D + 1;
  auto draw = [&](MatrixXd& M, int rows) {
    const double bound = init == Init::Glorot ? std::sqrt(6.0 / double(D1 + rows))
                                              : 1.0 / std::sqrt(double(D1));
    M.resize(rows, D1);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < D1; ++j) M(i, j) = bound * (2.0 * uniform01(rng) - 1.0);
  };
  Model m;
  draw(m.WQ, attn_dim);
  draw(m.WK, attn_dim);
  MatrixXd WV;
  draw(WV, D1);
  m.v = WV.row(D1 - 1).transpose();
  return m;
}

namespace {

// Forward (and optionally backward) over all prompts. Per prompt with tokens Zn ((D+1) x T):
//   u_s = W_K^T W_Q t_last / sqrt(d); s = Zn^T u_s; c = Zn^T v; a = softmax(s); pred = a.c
//   dpred/dv = Zn a; dpred/du_s = Zn (a o (c - pred)) =: e
//   dpred/dW_K = q (e/sqrt(d))^T with q = W_Q t_last;  dpred/dW_Q = W_K (e/sqrt(d)) t_last^T.
double forward_backward(const Model& m, const Prompts& data, VectorXd* pred_out, Gradient* g) {
  const int T = data.T;
  const int D1 = data.D + 1;
  const Eigen::Index N = data.count();
  if (m.token_dim() != D1 || m.WK.cols() != D1 || m.v.size() != D1 ||
      m.WK.rows() != m.WQ.rows())
    throw InvalidParams("model", "shape does not match the prompts' token dimension");
  const double scale = 1.0 / std::sqrt(double(m.attn_dim()));
  if (g) {
    g->WQ.setZero(m.WQ.rows(), D1);
    g->WK.setZero(m.WK.rows(), D1);
    g->v.setZero(D1);
  }
  if (pred_out) pred_out->resize(N);
  MatrixXd UV(D1, 2);
  UV.col(1) = m.v;
  MatrixXd SC(T, 2), WA(T, 2), ET(D1, 2);
  VectorXd q(m.attn_dim()), kq(m.attn_dim());
  double total = 0;
  for (Eigen::Index n = 0; n < N; ++n) {
    const auto Zn = data.Z.middleCols(n * T, T);
    const auto tl = Zn.col(T - 1);
    q.noalias() = m.WQ * tl;
    UV.col(0).noalias() = scale * (m.WK.transpose() * q);
    SC.noalias() = Zn.transpose() * UV;
    const double smax = SC.col(0).maxCoeff();
    double sum = 0;
    for (int i = 0; i < T; ++i) {
      const double e = std::exp(SC(i, 0) - smax);
      WA(i, 1) = e;
      sum += e;
    }
    WA.col(1) /= sum;  // attention weights a
    const double pred = WA.col(1).dot(SC.col(1));
    if (pred_out) (*pred_out)(n) = pred;
    const double r = pred - data.y(n);
    total += r * r;
    if (g) {
      const double gp = 2.0 * r / double(N);
      WA.col(0) = (WA.col(1).array() * (SC.col(1).array() - pred)).matrix();
      ET.noalias() = Zn * WA;
      const double c = gp * scale;
      g->WK.noalias() += (c * q) * ET.col(0).transpose();
      kq.noalias() = m.WK * ET.col(0);
      g->WQ.noalias() += (c * kq) * tl.transpose();
      g->v.noalias() += gp * ET.col(1);
    }
  }
  return N > 0 ? total / double(N) : 0.0;
}

}  // namespace

VectorXd predict(const Model& m, const Prompts& data) {
  VectorXd pred;
  forward_backward(m, data, &pred, nullptr);
  return pred;
}

double loss(const Model& m, const Prompts& data) {
  return forward_backward(m, data, nullptr, nullptr);
}

double loss_and_gradient(const Model& m, const Prompts& data, Gradient& g) {
  return forward_backward(m, data, nullptr, &g);
}

// ---------------------------------------------------------------------------------------------
// Training

TrainLog train_adam(Model& m, const Prompts& data, const TrainOptions& o) {
  const auto t0 = Clock::now();
  TrainLog log;
  Gradient g;
  // Adam moments, PyTorch's update: p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps).
  Gradient m1{MatrixXd::Zero(m.WQ.rows(), m.WQ.cols()), MatrixXd::Zero(m.WK.rows(), m.WK.cols()),
              VectorXd::Zero(m.v.size())};
  Gradient m2 = m1;
  double prev = std::numeric_limits<double>::quiet_NaN();
  for (int epoch = 1; epoch <= o.max_epochs; ++epoch) {
    const double L = loss_and_gradient(m, data, g);
    if (epoch == 1) log.initial_loss = L;
    if (o.keep_history) log.history.push_back(L);
    const double bc1 = 1.0 - std::pow(o.beta1, epoch);
    const double bc2 = 1.0 - std::pow(o.beta2, epoch);
    const double step = o.lr / bc1;
    const double rbc2 = 1.0 / std::sqrt(bc2);
    auto update = [&](auto& param, const auto& grad, auto& mm, auto& vv) {
      mm.array() = o.beta1 * mm.array() + (1.0 - o.beta1) * grad.array();
      vv.array() = o.beta2 * vv.array() + (1.0 - o.beta2) * grad.array().square();
      param.array() -= step * mm.array() / (vv.array().sqrt() * rbc2 + o.eps);
    };
    update(m.WQ, g.WQ, m1.WQ, m2.WQ);
    update(m.WK, g.WK, m1.WK, m2.WK);
    update(m.v, g.v, m1.v, m2.v);
    log.epochs = epoch;
    if (!std::isfinite(L)) {
      log.status = numerics::Status::NumericalFailure;
      log.residual_norm = std::numeric_limits<double>::quiet_NaN();
      log.message = "training loss not finite at epoch " + std::to_string(epoch);
      break;
    }
    if (epoch > 1) {
      log.residual_norm = std::abs(L - prev);
      if (log.residual_norm < o.tol) {
        log.status = numerics::Status::Converged;
        break;
      }
    }
    prev = L;
  }
  if (log.status == numerics::Status::Converged) {
    log.message = "|loss change| < tol after " + std::to_string(log.epochs) + " epochs";
  } else if (log.status == numerics::Status::NotConverged) {
    log.message = "epoch cap " + std::to_string(o.max_epochs) + " reached; last |loss change| " +
                  std::to_string(log.residual_norm) + " (tol " + std::to_string(o.tol) + ")";
  }
  log.final_loss = loss(m, data);
  log.seconds = seconds_since(t0);
  return log;
}

}  // namespace icl::verify::softmax
