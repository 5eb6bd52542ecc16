// The rank-1 patch checks (verify/patch/model.hpp, patch.hpp, train.hpp) from Python.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "verify/patch/model.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/train.hpp"

namespace icl::python {
namespace {

namespace P = icl::verify::patch;

P::ModelConfig model_config(int d, int layers, const std::string& kind, int heads, int head_dim,
                            int mlp_hidden, int mlp_depth, const std::string& act, bool residual,
                            bool layernorm, int width, bool causal) {
  if (d < 1) throw InvalidParams("d", "must be >= 1");
  P::ModelConfig c;
  c.token_dim = d + 1;
  c.layers = layers;
  c.kind = P::layer_kind_from_string(kind);
  c.heads = heads;
  c.head_dim = head_dim;
  c.mlp_hidden = mlp_hidden;
  c.mlp_depth = mlp_depth;
  c.act = P::activation_from_string(act);
  c.causal = causal;
  c.residual = residual || layernorm;
  c.layernorm = layernorm;
  // width 0: the token dimension for plain blocks, 32 (with embedding/readout) for residual ones
  // (as `icl patch --width 0`).
  c.width = width == 0 ? (c.residual ? 32 : c.token_dim) : width;
  c.embed = c.width != c.token_dim || (c.residual && width == 0);
  c.validate();  // std::invalid_argument naming the field -> ValueError
  return c;
}

template <class S>
void accumulate(const P::StackCheck<S>& r, P::Diff& all, int& rank, double& s2s1, int& degenerate) {
  all.merge(r.diff);
  degenerate += r.degenerate;
  for (const auto& ri : r.ranks) {
    rank = std::max(rank, ri.rank);
    s2s1 = std::max(s2s1, ri.sigma2_over_sigma1);
  }
}

}  // namespace

void bind_patch(py::module_& m) {
  m.def(
      "patch_check",
      [](int d, int context, int prompts, int layers, const std::string& kind, int heads,
         int head_dim, int mlp_hidden, int mlp_depth, const std::string& act, bool residual,
         bool layernorm, int width, bool causal, std::uint64_t seed, int pos,
         const std::string& mode, const std::string& precision, int patch_layers) {
        const P::ModelConfig c = model_config(d, layers, kind, heads, head_dim, mlp_hidden,
                                              mlp_depth, act, residual, layernorm, width, causal);
        if (context < 1) throw InvalidParams("context", "must be >= 1");
        if (prompts < 1) throw InvalidParams("prompts", "must be >= 1");
        if (pos > context) throw InvalidParams("pos", "must be in [0, context] (or -1: the query)");
        if (precision != "double" && precision != "float")
          throw InvalidParams("precision", "must be double or float (got '" + precision + "')");
        const P::PatchMode pm = P::patch_mode_from_string(mode);
        const int at = pos < 0 ? context : pos;
        P::Diff all;
        std::vector<P::Diff> per_layer;
        int rank = 0, degenerate = 0;
        double s2s1 = 0;
        {
          py::gil_scoped_release release;
          const P::Weights<double> w = P::init_weights(c, {.seed = seed});
          const auto ps = P::make_prompts(d, context, prompts, seed + 77);
          const P::Weights<float> w32 = P::cast_weights<float>(w);
          for (std::size_t k = 0; k < ps.size(); ++k) {
            if (precision == "double") {
              const auto r = P::stack_check(w, ps[k].tokens, at, pm, patch_layers);
              accumulate(r, all, rank, s2s1, degenerate);
              if (k == 0) per_layer = r.per_layer;
            } else {
              const auto r = P::stack_check(w32, P::Mat<float>(ps[k].tokens.cast<float>()), at,
                                            pm, patch_layers);
              accumulate(r, all, rank, s2s1, degenerate);
              if (k == 0) per_layer = r.per_layer;
            }
          }
        }
        py::dict out;
        out["max_abs_diff"] = all.max_abs;
        out["max_rel_diff"] = all.max_rel;
        out["rank"] = rank;
        out["sigma2_over_sigma1"] = s2s1;
        out["degenerate_anchors"] = degenerate;
        py::list layers_out;
        for (const auto& dl : per_layer) {
          py::dict e;
          e["max_abs_diff"] = dl.max_abs;
          e["max_rel_diff"] = dl.max_rel;
          layers_out.append(e);
        }
        out["per_layer"] = layers_out;
        out["parameters"] = P::parameter_count(c);
        return out;
      },
      py::kw_only(), py::arg("d") = 2, py::arg("context") = 16, py::arg("prompts") = 4,
      py::arg("layers") = 1, py::arg("kind") = "softmax", py::arg("heads") = 2,
      py::arg("head_dim") = 4, py::arg("mlp_hidden") = 32, py::arg("mlp_depth") = 2,
      py::arg("act") = "gelu", py::arg("residual") = false, py::arg("layernorm") = false,
      py::arg("width") = 0, py::arg("causal") = true, py::arg("seed") = 1, py::arg("pos") = -1,
      py::arg("mode") = "full", py::arg("precision") = "double", py::arg("patch_layers") = -1,
      "Build a random model (init seed `seed`), draw `prompts` in-context regression prompts of\n"
      "`context` pairs (x, w.x) in R^d, and compare the full-context model at position `pos`\n"
      "(-1: the query) with the query-only model patched block by block (spec patch.md 2-4).\n\n"
      "kind: 'softmax' | 'linear' | 'rnn'; act: 'gelu' | 'relu'; layernorm implies residual;\n"
      "width 0: token dimension (plain) or 32 (residual); mode: 'full' | 'bias-only' |\n"
      "'bias-free' | 'weight-only'; precision: 'double' | 'float'; patch_layers: leading\n"
      "blocks patched (-1: all). Returns {max_abs_diff, max_rel_diff, rank (largest numerical\n"
      "rank of a dW1), sigma2_over_sigma1, degenerate_anchors, per_layer (first prompt),\n"
      "parameters}. Releases the GIL.");

  m.def(
      "rank1_patch",
      [](const P::Mat<double>& W, const P::Vec<double>& u_full, const P::Vec<double>& anchor,
         double anchor_tol) {
        if (W.cols() != u_full.size() || W.cols() != anchor.size())
          throw InvalidParams("W", "must have as many columns as u_full and anchor have entries");
        const auto r = P::rank1_patch<double>(W, u_full, anchor, anchor_tol);
        py::dict out;
        out["dW"] = r.dW;
        out["db"] = r.db;
        out["anchor_norm"] = r.anchor_norm;
        out["status"] = P::to_string(r.status);
        return out;
      },
      py::arg("W"), py::arg("u_full"), py::arg("anchor"), py::kw_only(),
      py::arg("anchor_tol") = 1e-8,
      "Rank-1 patch of W: dW = W (u_full - a) a^T / |a|^2 (a = anchor), so (W + dW) a = W u_full;\n"
      "db = W (u_full - a) is the bias-only variant. Returns {dW, db, anchor_norm, status}\n"
      "(status 'ok', or 'degenerate-anchor' when |a| is too small: then dW = 0).");
}


}  // namespace icl::python
