// The rank-1 patch checks (verify/patch/experiments.hpp, patch.hpp) from Python. The keywords
// are the library's field names (`seed=` is base_seed) and their defaults are those of a
// default-constructed options object; every rule is the options' validate() (InvalidParams
// with .field naming the field, as `icl patch` names it).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "numerics/error.hpp"
#include "python/bindings.hpp"
#include "python/json_to_python.hpp"
#include "python/progress.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/patch.hpp"
#include "verify/patch/serialize.hpp"

namespace icl::python {

namespace P = icl::verify::patch;

namespace {

// The model keywords, by the names of ModelSpec (model/spec.hpp).
struct ModelKeywords {
  int d, layers;
  std::string kind;
  int heads, head_dim, width, mlp_hidden, mlp_depth;
  std::string block, norm, mlp;
  bool causal;
  std::string weights;
};

// The model of the keywords. With weights=, a keyword that differs from its default counts as
// given and must agree with the file (as a flag given to `icl patch ... --weights`).
P::ModelSource model_source(const ModelKeywords& k) {
  const P::ModelSpec def{};
  P::ModelSource m;
  P::ModelSpec& s = m.spec;
  s.d = k.d;
  s.layers = k.layers;
  s.kind = P::layer_kind_from_string(k.kind);
  s.heads = k.heads;
  s.head_dim = k.head_dim;
  s.width = k.width;
  s.mlp_hidden = k.mlp_hidden;
  s.mlp_depth = k.mlp_depth;
  s.block = {P::block_kind_from_string(k.block), P::norm_from_string(k.norm), P::mlp_from_string(k.mlp)};
  s.causal = k.causal;
  m.weights = k.weights;
  m.given_d = s.d != def.d;
  m.given_width = s.width != def.width;
  m.given_layers = s.layers != def.layers;
  m.given_heads = s.heads != def.heads;
  m.given_block = s.block.kind != def.block.kind;
  m.given_norm = s.block.norm != def.block.norm;
  m.given_mlp = s.block.mlp != def.block.mlp;
  return m;
}

py::dict columns(const numerics::Table& t) {
  py::dict out;
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    py::list column;
    for (const auto& row : t.rows) column.append(row[c]);
    out[py::str(t.columns[c])] = column;
  }
  return out;
}

void bind_patch_check(py::module_& m) {
  const P::CheckOptions def;
  const P::ModelSpec& spec = def.model.spec;
  m.def(
      "patch_check",
      [](int d, int context, int prompts, int layers, const std::string& kind, int heads,
         int head_dim, int width, int mlp_hidden, int mlp_depth, const std::string& block,
         const std::string& norm, const std::string& mlp, bool causal, const std::string& weights,
         std::uint64_t seed, int pos, std::optional<std::pair<int, int>> chunk, double tol,
         const std::string& mode, const std::string& precision, int patch_layers, bool controls) {
        P::CheckOptions o;
        o.model = model_source({d, layers, kind, heads, head_dim, width, mlp_hidden, mlp_depth,
                                block, norm, mlp, causal, weights});
        o.base_seed = seed;
        o.context = context;
        o.prompts = prompts;
        o.pos = pos;
        if (chunk) std::tie(o.chunk_begin, o.chunk_end) = *chunk;
        o.tol = tol;
        o.mode = P::patch_mode_from_string(mode);
        o.precision = P::precision_from_string(precision);
        o.patch_layers = patch_layers;
        o.controls = controls;
        P::CheckResult r;
        {
          py::gil_scoped_release release;
          r = P::run(o);
        }
        return to_python(P::to_json(r));  // the `icl patch check --json` object
      },
      py::kw_only(), py::arg("d") = spec.d, py::arg("context") = def.context,
      py::arg("prompts") = def.prompts, py::arg("layers") = spec.layers,
      py::arg("kind") = P::to_string(spec.kind), py::arg("heads") = spec.heads,
      py::arg("head_dim") = spec.head_dim, py::arg("width") = spec.width,
      py::arg("mlp_hidden") = spec.mlp_hidden, py::arg("mlp_depth") = spec.mlp_depth,
      py::arg("block") = P::to_string(spec.block.kind), py::arg("norm") = P::to_string(spec.block.norm),
      py::arg("mlp") = P::to_string(spec.block.mlp), py::arg("causal") = spec.causal,
      py::arg("weights") = def.model.weights, py::arg("seed") = def.base_seed,
      py::arg("pos") = def.pos, py::arg("chunk") = py::none(), py::arg("tol") = def.tol,
      py::arg("mode") = P::to_string(def.mode), py::arg("precision") = P::to_string(def.precision),
      py::arg("patch_layers") = def.patch_layers, py::arg("controls") = def.controls,
      "`icl patch check` (verify::patch::run(CheckOptions), docs/patch.md §3-§8, §16): a random\n"
      "model (base seed `seed`: its 'weights' stream) or the weights file `weights`, `prompts`\n"
      "in-context regression prompts of `context` pairs (x, w.x) in R^d ('prompts' stream), and\n"
      "the full-context model at position `pos` (-1: the query) against the query-only model\n"
      "patched block by block; with `controls`, also the variants, the float32 pass and the\n"
      "negative controls. Returns the `icl patch check --json` object (status 'converged' when\n"
      "every identity holds to `tol`, else 'check_failed').\n\n"
      "kind: 'softmax' | 'linear' | 'rnn'; block: 'plain' | 'residual' | 'preln' | 'postln' |\n"
      "'parallel'; norm: 'auto' | 'none' | 'layernorm' | 'rmsnorm'; mlp: 'gelu' | 'relu' | 'silu'\n"
      "| 'swiglu' | 'geglu'; width 0: the token dimension (plain) or 32 (residual); chunk: (B, E)\n"
      "also removes context tokens B..E-1 (one block); mode: 'full' | 'bias-only' | 'bias-free' |\n"
      "'weight-only' | 'norm-scale' | 'gate-only'; precision: 'double' | 'float'; patch_layers:\n"
      "leading blocks patched (-1: all). With weights=, a model keyword that differs from its\n"
      "default must agree with the file. Bad inputs raise InvalidParams naming the field, as\n"
      "`icl patch check` does. Releases the GIL.");
}

void bind_patch_dynamics(py::module_& m) {
  const P::DynamicsOptions def;
  const P::ModelSpec& spec = def.model.spec;
  m.def(
      "patch_dynamics",
      [](int d, int context, int prompts, const std::string& kind, int heads, int head_dim,
         int mlp_hidden, int mlp_depth, const std::string& mlp, std::uint64_t seed, double tol,
         const py::object& progress) {
        const P::ModelSpec s{};
        P::DynamicsOptions o;
        o.model = model_source({d, s.layers, kind, heads, head_dim, s.width, mlp_hidden, mlp_depth,
                                P::to_string(s.block.kind), P::to_string(s.block.norm), mlp,
                                s.causal, ""});
        o.base_seed = seed;
        o.context = context;
        o.prompts = prompts;
        o.tol = tol;
        const PyProgress report(progress, /*cancels=*/false);
        P::DynamicsResult r;
        {
          py::gil_scoped_release release;
          r = P::run(o, report.function());
        }
        report.rethrow_if_failed();
        py::dict out = to_python(P::to_json(r));  // the `icl patch dynamics --json` object
        out["steps"] = columns(P::to_table(r));
        return out;
      },
      py::kw_only(), py::arg("d") = spec.d, py::arg("context") = def.context,
      py::arg("prompts") = def.prompts, py::arg("kind") = P::to_string(spec.kind),
      py::arg("heads") = spec.heads, py::arg("head_dim") = spec.head_dim,
      py::arg("mlp_hidden") = spec.mlp_hidden, py::arg("mlp_depth") = spec.mlp_depth,
      py::arg("mlp") = P::to_string(spec.block.mlp), py::arg("seed") = def.base_seed,
      py::arg("tol") = def.tol, py::arg("progress") = py::none(),
      "`icl patch dynamics` (verify::patch::run(DynamicsOptions), docs/patch.md §9): feeding the\n"
      "context token by token gives patches dW_i; the prefix and online-GD identities are checked\n"
      "(max rel diff <= tol) for one random plain attention block (kind 'softmax' | 'linear') and\n"
      "an Elman RNN. Returns the `icl patch dynamics --json` object plus 'steps': {i,\n"
      "step_attention, step_rnn} = |dW_i - dW_{i-1}|_F (mean over prompts), the columns of\n"
      "`icl patch dynamics --out`. progress: callable(done, total, what).");
}

}  // namespace

void bind_patch(py::module_& m) {
  bind_patch_check(m);

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
      py::arg("anchor_tol") = P::kAnchorTol,
      "Rank-1 patch of W: dW = W (u_full - a) a^T / |a|^2 (a = anchor), so (W + dW) a = W u_full;\n"
      "db = W (u_full - a) is the bias-only variant. Returns {dW, db, anchor_norm, status}\n"
      "(status 'ok', or 'degenerate-anchor' when |a| is too small: then dW = 0).");

  bind_patch_dynamics(m);
}

}  // namespace icl::python
