// The rank-1 patch checks (verify/patch/experiments.hpp, patch.hpp) from Python.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/progress.hpp"
#include "numerics/status.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/serialize.hpp"

namespace icl::python {

namespace P = icl::verify::patch;

namespace {

// The model fields that patch_check and patch_dynamics both take (the rest keep their defaults).
void set_model(P::ModelSpec& spec, int d, const std::string& kind, int heads, int head_dim,
               int mlp_hidden, int mlp_depth, const std::string& act) {
  spec.d = d;
  spec.kind = P::layer_kind_from_string(kind);
  spec.heads = heads;
  spec.head_dim = head_dim;
  spec.mlp_hidden = mlp_hidden;
  spec.mlp_depth = mlp_depth;
  spec.act = P::activation_from_string(act);
}

}  // namespace

void bind_patch(py::module_& m) {
  m.def(
      "patch_check",
      [](int d, int context, int prompts, int layers, const std::string& kind, int heads,
         int head_dim, int mlp_hidden, int mlp_depth, const std::string& act, bool residual,
         bool layernorm, int width, bool causal, std::uint64_t seed, int pos,
         const std::string& mode, const std::string& precision, int patch_layers,
         const std::string& block, const std::string& norm, const std::string& mlp,
         bool controls) {
        P::CheckOptions o;
        P::ModelSpec& spec = o.model.spec;
        set_model(spec, d, kind, heads, head_dim, mlp_hidden, mlp_depth, act);
        spec.layers = layers;
        spec.residual = residual;
        spec.pre_ln = layernorm;
        spec.width = width;
        spec.causal = causal;
        // Modern blocks (docs/patch.md §16), as `icl patch check --block --norm --mlp`.
        spec.block = P::block_kind_from_string(block);
        spec.norm = P::norm_choice_from_string(norm);
        if (mlp != "plain") spec.set_mlp(mlp);  // InvalidParams("mlp") for an unknown kind
        o.seed = seed;
        o.context = context;
        o.prompts = prompts;
        o.pos = pos;
        o.mode = P::patch_mode_from_string(mode);
        o.precision = P::precision_from_string(precision);
        o.patch_layers = patch_layers;
        o.controls = controls;
        P::CheckResult r;
        {
          py::gil_scoped_release release;
          r = P::run_check(o);
        }
        return to_python(P::to_json(r));  // the `icl patch check --json` object
      },
      py::kw_only(), py::arg("d") = 2, py::arg("context") = 16, py::arg("prompts") = 4,
      py::arg("layers") = 1, py::arg("kind") = "softmax", py::arg("heads") = 2,
      py::arg("head_dim") = 4, py::arg("mlp_hidden") = 32, py::arg("mlp_depth") = 2,
      py::arg("act") = "gelu", py::arg("residual") = false, py::arg("layernorm") = false,
      py::arg("width") = 0, py::arg("causal") = true, py::arg("seed") = 1, py::arg("pos") = -1,
      py::arg("mode") = "full", py::arg("precision") = "double", py::arg("patch_layers") = -1,
      py::arg("block") = "plain", py::arg("norm") = "auto", py::arg("mlp") = "plain",
      py::arg("controls") = false,
      "Build a random model (base seed `seed`: its 'weights' and 'prompts' streams), draw\n"
      "`prompts` in-context regression prompts of `context` pairs (x, w.x) in R^d, and compare\n"
      "the full-context model at position `pos` (-1: the query) with the query-only model\n"
      "patched block by block (docs/patch.md §3-§7; verify::patch::run_check).\n\n"
      "kind: 'softmax' | 'linear' | 'rnn'; act: 'gelu' | 'relu'; layernorm implies residual;\n"
      "width 0: token dimension (plain) or 32 (residual); mode: 'full' | 'bias-only' |\n"
      "'bias-free' | 'weight-only'; precision: 'double' | 'float'; patch_layers: leading\n"
      "blocks patched (-1: all). Modern blocks (docs/patch.md §16): block 'plain' | 'residual'\n"
      "| 'preln' | 'postln' | 'parallel'; norm 'auto' | 'layernorm' | 'rmsnorm' | 'none'; mlp\n"
      "'plain' (act decides) | 'gelu' | 'relu' | 'swiglu' | 'geglu'; controls: also run the\n"
      "negative controls (as icl patch check). Returns {max_abs_diff, max_rel_diff, rank (largest numerical\n"
      "rank of a dW1), sigma2_over_sigma1, degenerate_anchors, status ('converged' when\n"
      "max_rel_diff <= 1e-10, else 'check_failed'), per_layer (first prompt), parameters}.\n"
      "Releases the GIL.");

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

  const P::ModelSpec spec_defaults;
  const P::DynamicsOptions dynamics_defaults;
  m.def(
      "patch_dynamics",
      [](int d, int context, int prompts, const std::string& kind, int heads, int head_dim,
         int mlp_hidden, int mlp_depth, const std::string& act, std::uint64_t seed, double tol,
         const py::object& progress) {
        P::DynamicsOptions o;
        set_model(o.model.spec, d, kind, heads, head_dim, mlp_hidden, mlp_depth, act);
        o.seed = seed;
        o.context = context;
        o.prompts = prompts;
        o.tol = tol;
        const PyProgress report(progress, /*cancels=*/false);
        P::DynamicsResult r;
        {
          py::gil_scoped_release release;
          r = P::run_dynamics(o, report.function());
        }
        report.rethrow_if_failed();
        py::dict out = to_python(P::to_json(r));  // the `icl patch dynamics --json` object
        const P::TableData t = P::to_table(r);
        py::dict steps;
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
          py::list column;
          for (const auto& row : t.rows) column.append(row[c]);
          steps[py::str(t.columns[c])] = column;
        }
        out["steps"] = steps;
        return out;
      },
      py::kw_only(), py::arg("d") = spec_defaults.d, py::arg("context") = dynamics_defaults.context,
      py::arg("prompts") = dynamics_defaults.prompts, py::arg("kind") = "softmax",
      py::arg("heads") = spec_defaults.heads, py::arg("head_dim") = spec_defaults.head_dim,
      py::arg("mlp_hidden") = spec_defaults.mlp_hidden,
      py::arg("mlp_depth") = spec_defaults.mlp_depth, py::arg("act") = "gelu",
      py::arg("seed") = dynamics_defaults.seed, py::arg("tol") = dynamics_defaults.tol,
      py::arg("progress") = py::none(),
      "Implicit dynamics of one random plain block (docs/patch.md §9; verify::patch::\n"
      "run_dynamics): feeding the context token by token gives patches dW_i; the prefix and\n"
      "online-GD identities are checked (max rel diff <= tol) for the attention block (kind\n"
      "'softmax' | 'linear') and an Elman RNN. Returns the `icl patch dynamics --json` object\n"
      "plus 'steps': {i, step_attention, step_rnn} = |dW_i - dW_{i-1}|_F (mean over prompts),\n"
      "the columns of `icl patch dynamics --out`. progress: callable(done, total, what).");
}


}  // namespace icl::python
