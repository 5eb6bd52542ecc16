// `icl patch check|dynamics|thought|align|train`: the exact rank-1 patch of in-context learning
// (docs/patch.md). Flags -> verify/patch/experiments.hpp options -> run_* -> serializer / text.
#include <charconv>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "numerics/error.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/serialize.hpp"
#include "verify/patch/weights_io.hpp"

namespace icl::cli {
namespace {

namespace P = icl::verify::patch;

// Flag values of every `icl patch` subcommand (one set of flags, one meaning each).
struct Flags {
  P::ModelSpec spec;
  std::string kind = "softmax", act = "gelu", weights, save, save_dtype = "f64";
  std::string block = "plain", norm = "auto", mlp = "128";  // --block --norm --mlp (docs/patch.md §16)
  bool noncausal = false;
  std::uint64_t seed = 1;
  bool json = false, quiet = false;
  std::string out;
  // training (train, and --train-steps elsewhere)
  int train_steps = 0, batch = 64, eval_every = 100, threads = 2;
  int train_context = 0;  // context pairs during training (0: --context)
  double lr = 1e-3;
  int context = 50, prompts = 0;  // prompts 0: the experiment's default (Options{}.prompts)
  // check
  int pos = -1;
  std::string chunk;  // "B:E"
  double tol = 1e-10;
  // dynamics / thought / align
  std::string rnn_weights;
  std::vector<int> m_values{1, 4, 16, 64, 256};
  int heldout = 256;
  double ridge = 1e-6, sgd_lr = 0.01;
  std::vector<int> sgd_steps{1, 2, 5, 10, 20, 50, 100};
  std::vector<std::string> protocols{"all"};
  bool no_patch_track = false;
};

const CLI::Validator kAtLeast0 = int_range(0, 1000000000), kAtLeast1 = int_range(1, 1000000000);
const CLI::Validator kPositive = real_range(0, 1e300, true, false);

void add_model_flags(CLI::App* a, Flags& f) {
  const char* g = "Model";
  P::ModelSpec& s = f.spec;
  a->add_option("--d", s.d, "input dimension d (tokens are (x, y) in R^{d+1})")
              ->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_option("--context", f.context, "context pairs n")->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_option("--layers", s.layers, "number of blocks L")->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_flag("--pre-ln", s.pre_ln, "Pre-LN residual blocks (H = Z + A(LN1 Z), Y = H + MLP(LN2 H))")->group(g);
  a->add_flag("--residual", s.residual, "residual blocks without LayerNorm")->group(g);
  a->add_option("--kind", f.kind, "contextual layer: softmax | linear | rnn")
      ->check(CLI::IsMember({"softmax", "linear", "rnn"}))->group(g)->capture_default_str();
  a->add_option("--heads", s.heads, "attention heads")->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_option("--head-dim", s.head_dim, "size of each head")->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_option("--width", s.width,
                "model width (0: d+1 without embedding for plain blocks, 32 with an "
                "embedding for residual blocks; != d+1 adds a linear embedding/readout)")
      ->check(kAtLeast0)->group(g)->capture_default_str();
  a->add_option("--block", f.block, "block: plain | residual | preln | postln | parallel")
      ->check(CLI::IsMember({"plain", "residual", "preln", "postln", "parallel"}))->group(g)->capture_default_str();
  a->add_option("--norm", f.norm, "norm of the block: layernorm | rmsnorm | none (auto: layernorm "
                "for preln/postln/parallel, none for plain/residual)")
      ->check(CLI::IsMember({"auto", "layernorm", "rmsnorm", "none"}))->group(g)->capture_default_str();
  a->add_option("--mlp", f.mlp, "MLP kind gelu | relu | swiglu | geglu (gated), or its hidden width N")
      ->group(g)->capture_default_str();
  a->add_option("--mlp-hidden", s.mlp_hidden, "MLP hidden width")->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_option("--mlp-depth", s.mlp_depth, "dense layers in the MLP")->check(kAtLeast1)->group(g)->capture_default_str();
  a->add_option("--act", f.act, "MLP activation: gelu | relu")->check(CLI::IsMember({"gelu", "relu"}))->group(g)->capture_default_str();
  a->add_flag("--noncausal", f.noncausal, "attention without causal mask")->group(g);
  add_seed_flag(*a, f.seed)->group(g);
  a->add_option("--weights", f.weights,
                "load weights from FILE (FILE.safetensors: safetensors; else the text format)")->group(g);
  const char* t = "Training";
  a->add_option("--train-steps", f.train_steps, "train the model first (Adam) for this many steps")
      ->check(kAtLeast0)->group(t)->capture_default_str();
  a->add_option("--train-context", f.train_context, "context pairs during training (0: --context)")
      ->check(kAtLeast0)->group(t)->capture_default_str();
  a->add_option("--batch", f.batch, "prompts per training step")->check(kAtLeast1)->group(t)->capture_default_str();
  a->add_option("--lr", f.lr, "Adam learning rate")->check(kPositive)->group(t)->capture_default_str();
  a->add_option("--eval-every", f.eval_every, "evaluate every N steps")->check(kAtLeast1)->group(t)->capture_default_str();
  add_threads_flag(*a, f.threads)->group(t);
  a->add_option("--save", f.save, "save the (trained) weights to FILE (FILE.safetensors: safetensors)")->group(t);
  a->add_option("--save-dtype", f.save_dtype, "dtype of a .safetensors --save: f64 | f32 | bf16")
      ->check(CLI::IsMember({"f64", "f32", "bf16"}))->group(t)->capture_default_str();
  add_json_flag(*a, f.json);
  add_quiet_flag(*a, f.quiet);
}

// The model flags of subcommand `app`; a --weights file must agree with the ones given there.
// --save-dtype is checked here, before any computation: it applies to a .safetensors --save only.
P::ModelSource model_source(const Flags& f, const CLI::App& app) {
  if (app.count("--save-dtype") > 0 && P::weights_format(f.save) != P::WeightsFormat::Safetensors)
    throw InvalidParams("save_dtype", "applies to a .safetensors --save only (got --save '" + f.save + "')");
  P::ModelSource m;
  m.spec = f.spec;
  m.spec.kind = P::layer_kind_from_string(f.kind);
  m.spec.act = P::activation_from_string(f.act);
  m.spec.block = P::block_kind_from_string(f.block);
  m.spec.norm = P::norm_choice_from_string(f.norm);
  // --mlp N (hidden width, as before) or --mlp KIND; a KIND fixes the activation, which an
  // explicit --act must then agree with.
  int hidden = 0;
  const auto [end, ec] = std::from_chars(f.mlp.data(), f.mlp.data() + f.mlp.size(), hidden);
  if (ec == std::errc() && end == f.mlp.data() + f.mlp.size()) {
    if (hidden < 1) throw InvalidParams("mlp", "hidden width must be >= 1, got " + f.mlp);
    if (app.count("--mlp-hidden") == 0) m.spec.mlp_hidden = hidden;
  } else {
    const P::Activation act = m.spec.act;
    m.spec.set_mlp(f.mlp);
    if (app.count("--act") > 0 && m.spec.act != act)
      throw InvalidParams("act", f.act + " conflicts with --mlp " + f.mlp);
  }
  m.spec.causal = !f.noncausal;
  m.weights = f.weights;
  m.given_d = app.count("--d") > 0;
  m.given_width = app.count("--width") > 0;
  m.given_layers = app.count("--layers") > 0;
  m.given_heads = app.count("--heads") > 0;
  m.given_block = app.count("--block") > 0;
  m.given_norm = app.count("--norm") > 0;
  m.given_mlp = app.count("--mlp") > 0 && hidden == 0;  // a kind, not a width
  return m;
}

// --train-steps before an experiment (steps 0: none).
P::TrainOptions pretraining(const Flags& f, bool track_patch) {
  P::TrainOptions t = P::default_pretraining();
  t.steps = f.train_steps;
  t.n_ctx = f.train_context;  // 0: the experiment's context
  t.batch = f.batch;
  t.adam.lr = f.lr;
  t.eval_every = f.eval_every;
  t.threads = f.threads;
  t.track_patch = track_patch;
  return t;
}

numerics::Progress reporter(const Flags& f, const std::string& name) {
  if (f.quiet) return {};
  return [name](std::size_t done, std::size_t total, const std::string& what) {
    progress(name + " " + what, done, total);
  };
}

// --save FILE: the text format, or safetensors for a .safetensors FILE (docs/patch.md §2.5).
void save_if(const Flags& f, const P::Weights<double>& w) {
  if (f.save.empty()) return;
  namespace st = numerics::safetensors;
  const st::DType dtype = f.save_dtype == "f32"    ? st::DType::F32
                          : f.save_dtype == "bf16" ? st::DType::BF16
                                                   : st::DType::F64;
  try {
    P::save_weights_file(w, f.save, dtype);
  } catch (const std::runtime_error& e) {
    throw ExitError(kExitBadInput, "--save: " + std::string(e.what()));
  }
}

// The fields every experiment's options share.
template <class Options>
Options common_options(const Flags& f, const CLI::App& app) {
  Options o;
  o.model = model_source(f, app);
  o.seed = f.seed;
  o.training = pretraining(f, false);
  o.context = f.context;
  if (f.prompts > 0) o.prompts = f.prompts;
  return o;
}

// --out: the TSV table (+ JSON sidecar); --json: the JSON on stdout. True when the JSON was
// printed (no text output then).
template <class Result>
bool emit_result(const Flags& f, const Result& r, const P::Json& j) {
  if (!f.out.empty()) {
    const P::TableData t = P::to_table(r);
    emit_tsv(Table{t.columns, t.rows}, f.out, nlohmann::json(j));
  }
  if (f.json) std::cout << j.dump(2) << "\n";
  return f.json;
}

// ---- check ---------------------------------------------------------------------------------

void run_check(const Flags& f, const CLI::App& app) {
  auto o = common_options<P::CheckOptions>(f, app);
  o.pos = f.pos;
  o.tol = f.tol;
  if (!f.chunk.empty()) {
    const auto colon = f.chunk.find(':');
    const auto number = [&](const std::string& t, int& v) {
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      return !t.empty() && ec == std::errc() && end == t.data() + t.size();
    };
    if (colon == std::string::npos || !number(f.chunk.substr(0, colon), o.chunk_begin) ||
        !number(f.chunk.substr(colon + 1), o.chunk_end))
      throw InvalidParams("chunk", "must be B:E (context tokens B..E-1), got '" + f.chunk + "'");
  }
  const P::CheckResult r = P::run_check(o, reporter(f, "patch check"));
  save_if(f, r.model);
  const P::Json j = P::to_json(r);
  if (f.json) {
    emit_json(j, f.out);
  } else {
    if (!f.out.empty()) emit_json(j, f.out);
    const auto& c = r.config;
    std::cout << "patch check: L=" << c.layers << " " << P::to_string(c.kind) << " "
              << P::to_string(P::block_kind(c)) << (c.layernorm ? " " + P::to_string(c.norm) : "")
              << " " << P::mlp_name(c) << ", width " << c.width << ", context " << r.context
              << ", position " << r.position << "\n"
              << "  float64 max_rel_diff " << format_number(r.diff.max_rel) << " (max_abs "
              << format_number(r.diff.max_abs) << "), rank W1 " << r.rank
              << (r.rank_gate >= 0 ? ", rank Wg " + std::to_string(r.rank_gate) : "") << "\n"
              << "  float32 max_rel_diff " << format_number(r.float32.max_rel) << "\n"
              << "  variants: bias-only " << format_number(r.bias_only.max_rel) << ", bias-free "
              << format_number(r.bias_free.max_rel)
              << (r.has_norm_scale ? ", norm-scale " + format_number(r.norm_scale.max_rel) : std::string())
              << (r.has_chunk ? ", chunk " + f.chunk + " " + format_number(r.chunk.max_rel) : std::string())
              << "\n"
              << "  negative controls: weight-only " << format_number(r.weight_only.diff.max_rel)
              << " (" << r.weight_only.model << " model), first-block-only "
              << format_number(r.first_block_only.diff.max_rel) << " (" << r.first_block_only.model
              << " model)"
              << (r.has_gate_only ? ", gate-only " + format_number(r.gate_only.diff.max_rel) : std::string())
              << "\n"
              << "  " << (r.pass ? "PASS" : "FAIL") << "\n";
  }
  if (!r.pass) throw ExitError(kExitNotConverged, r.message);
}

// ---- dynamics ------------------------------------------------------------------------------

void run_dynamics(const Flags& f, const CLI::App& app) {
  auto o = common_options<P::DynamicsOptions>(f, app);
  o.rnn_weights = f.rnn_weights;
  const P::DynamicsResult r = P::run_dynamics(o, reporter(f, "patch dynamics"));
  if (!emit_result(f, r, P::to_json(r))) {
    const auto& a = r.attention.initial;
    const auto& n = r.rnn.initial;
    std::cout << "implicit dynamics, context " << r.context << ", " << r.prompts << " prompts\n"
              << "  prefix identity max rel " << format_number(std::max(a.prefix_max_rel, n.prefix_max_rel))
              << ", online-GD max rel " << format_number(std::max(a.gd_max_rel, n.gd_max_rel)) << "\n"
              << "  log-log slope of ||dW_{i+1}-dW_i||: attention " << format_number(a.slope_of_mean_curve)
              << " (" << r.attention.label << "), rnn " << format_number(n.slope_of_mean_curve) << " ("
              << r.rnn.label << ")\n";
    if (r.attention.trained && r.rnn.trained)
      std::cout << "  trained: attention " << format_number(r.attention.trained->slope_of_mean_curve)
                << ", rnn " << format_number(r.rnn.trained->slope_of_mean_curve) << "\n";
    std::cout << "  " << numerics::to_string(r.status) << ": " << r.message << "\n";
  }
  if (r.status != numerics::Status::Converged) throw ExitError(kExitNotConverged, r.message);
}

// ---- thought -------------------------------------------------------------------------------

void run_thought(const Flags& f, const CLI::App& app) {
  auto o = common_options<P::ThoughtOptions>(f, app);
  o.m_values = f.m_values;
  o.heldout = f.heldout;
  o.ridge = f.ridge;
  const P::ThoughtResult r = P::run_thought(o, reporter(f, "patch thought"));
  save_if(f, r.model);
  if (emit_result(f, r, P::to_json(r))) return;
  const bool res = r.config.residual;
  std::cout << "thought patch (MSE vs full-context output, mean over " << r.prompts << " prompts)\n"
            << (res ? "residual block: dW* + static db2 = mean(H_C - H_0); no_db2 = dW* alone\n" : "")
            << "m\ttrain\theldout\ttrain_avg\theldout_avg\tno_patch"
            << (res ? "\ttrain_no_db2\theldout_no_db2\n" : "\n");
  for (const auto& s : r.summary) {
    std::cout << s.m << '\t' << format_number(s.train_err.mean) << '\t'
              << format_number(s.heldout_err.mean) << '\t' << format_number(s.train_avg.mean) << '\t'
              << format_number(s.heldout_avg.mean) << '\t' << format_number(s.heldout_none.mean);
    if (res)
      std::cout << '\t' << format_number(s.train_no_db2.mean) << '\t'
                << format_number(s.heldout_no_db2.mean);
    std::cout << '\n';
  }
}

// ---- align ---------------------------------------------------------------------------------

void run_align(const Flags& f, const CLI::App& app) {
  auto o = common_options<P::AlignOptions>(f, app);
  o.steps = f.sgd_steps;
  o.lr = f.sgd_lr;
  o.protocols.clear();
  for (const std::string& name : f.protocols) {
    if (name == "all") {
      for (P::AlignProtocol p : P::all_align_protocols()) o.protocols.push_back(p);
    } else {
      o.protocols.push_back(P::align_protocol_from_string(name));
    }
  }
  const P::AlignResult r = P::run_align(o, reporter(f, "patch align"));
  save_if(f, r.model);
  if (emit_result(f, r, P::to_json(r))) return;
  std::cout << "alignment cos_F(implicit dW, explicit update on W1), " << r.prompts << " prompts"
            << (r.trained ? "" : " (RANDOM weights: expect about 0)") << "; mean +- s.e.\n";
  const auto est = [](const numerics::Estimate& e) {
    return format_number(e.mean) + " +- " + format_number(e.sem);
  };
  for (const P::AlignCurve& c : r.curves) {
    std::cout << P::to_string(c.protocol) << ": " << est(c.summary) << " (mismatched "
              << est(c.summary_mismatched) << ", random weights " << est(c.summary_random) << ")";
    if (c.left.count > 0)
      std::cout << "; factors left " << est(c.left) << ", right " << est(c.right);
    std::cout << "\n";
    if (c.protocol == P::AlignProtocol::FullBatch) {
      std::cout << "  sgd_steps\tcos_mean\tcos_sem\tmismatched\trandom\n";
      for (std::size_t s = 0; s < c.x.size(); ++s)
        std::cout << "  " << c.x[s] << '\t' << format_number(c.same[s].mean) << '\t'
                  << format_number(c.same[s].sem) << '\t' << format_number(c.mismatched[s].mean)
                  << '\t' << format_number(s < c.random.size() ? c.random[s].mean : 0.0) << '\n';
    }
  }
}

// ---- train ---------------------------------------------------------------------------------

void run_train(const Flags& f, const CLI::App& app) {
  P::TrainRunOptions o;
  o.model = model_source(f, app);
  o.seed = f.seed;
  o.training = pretraining(f, !f.no_patch_track);
  if (o.training.steps <= 0) o.training.steps = 1000;  // `icl patch train` default
  o.training.n_ctx = f.train_context > 0 ? f.train_context : f.context;
  const P::TrainRunResult r = P::run_train(o, reporter(f, "patch train"));
  save_if(f, r.weights);
  P::Json j = P::to_json(r);
  if (!f.save.empty()) j["saved"] = f.save;
  if (!emit_result(f, r.training, j)) {
    const P::TrainResult& t = r.training;
    std::cout << "trained " << t.options.steps << " steps in " << format_number(t.seconds) << " s ("
              << format_number(t.tokens_per_second) << " tokens/s)\n"
              << "zero-predictor loss " << format_number(t.zero_loss) << ", final eval loss "
              << format_number(t.final_eval_loss) << "\n"
              << "step\ttrain\teval(context)\teval(patched query-only)\n";
    for (const auto& row : t.log)
      std::cout << row.step << '\t' << format_number(row.train_loss) << '\t'
                << format_number(row.eval_loss) << '\t' << format_number(row.eval_loss_patched) << '\n';
  }
  if (r.training.status != numerics::Status::Converged)
    throw ExitError(kExitNotConverged, "training: " + r.training.message);
}

}  // namespace

// The library's default number of prompts of an experiment (shown in --help).
template <class Options>
int default_prompts() {
  static const Options defaults;
  return defaults.prompts;
}

void register_patch(CLI::App& app) {
  auto* patch = app.add_subcommand(
      "patch", "the exact rank-1 patch of in-context learning (contextual blocks, Eigen)");
  patch->require_subcommand(1);
  auto f = std::make_shared<Flags>();
  auto prompts = [&](CLI::App* a, const std::string& help, int library_default) {
    a->add_option("--prompts", f->prompts, help + " (default " + std::to_string(library_default) + ")")
        ->check(kAtLeast1);
  };

  auto* check = patch->add_subcommand("check", "T_W(C,x) = T_{W+dW}(x): patch block by block, negative controls");
  add_model_flags(check, *f);
  add_out_flag(*check, f->out, "the JSON");
  check->add_option("--pos", f->pos, "position whose output is matched (-1: the query)")
      ->check(int_range(-1, 1000000000))->capture_default_str();
  prompts(check, "number of prompts", default_prompts<P::CheckOptions>());
  check->add_option("--chunk", f->chunk, "also remove context chunk B:E (tokens B..E-1) instead of all of C (one block)");
  check->add_option("--tol", f->tol, "pass if max_rel_diff <= tol (else exit 3)")->check(kPositive)->capture_default_str();
  check->callback([f, check] { run_check(*f, *check); });

  auto* dyn = patch->add_subcommand("dynamics", "implicit dynamics: prefix patches, online GD, step norms attention vs RNN");
  add_model_flags(dyn, *f);
  add_out_flag(*dyn, f->out, "the TSV table (+ JSON sidecar)");
  prompts(dyn, "number of prompts", default_prompts<P::DynamicsOptions>());
  dyn->add_option("--rnn-weights", f->rnn_weights, "weights of the RNN model (FILE)");
  dyn->callback([f, dyn] { run_dynamics(*f, *dyn); });

  auto* th = patch->add_subcommand("thought", "static thought patch by ridge least squares over calibration queries");
  add_model_flags(th, *f);
  add_out_flag(*th, f->out, "the TSV table (+ JSON sidecar)");
  prompts(th, "number of contexts", default_prompts<P::ThoughtOptions>());
  th->add_option("--m", f->m_values, "calibration sizes")->check(kAtLeast1)->delimiter(',');
  th->add_option("--heldout", f->heldout, "held-out queries")->check(kAtLeast1)->capture_default_str();
  th->add_option("--ridge", f->ridge, "relative ridge")->check(kPositive)->capture_default_str();
  th->callback([f, th] { run_thought(*f, *th); });

  auto* al = patch->add_subcommand("align", "cos_F between the implicit patch and explicit gradient updates on the context (4 protocols)");
  add_model_flags(al, *f);
  add_out_flag(*al, f->out, "the TSV table (+ JSON sidecar)");
  prompts(al, "number of prompts", default_prompts<P::AlignOptions>());
  al->add_option("--sgd-lr", f->sgd_lr, "SGD learning rate")->check(kPositive)->capture_default_str();
  al->add_option("--sgd-steps", f->sgd_steps, "fullbatch SGD step counts reported")->check(kAtLeast1)->delimiter(',');
  al->add_option("--protocol", f->protocols,
                 "fullbatch | online | per-token | per-token-context | all (comma-separated)")
      ->check(CLI::IsMember({"fullbatch", "online", "per-token", "per-token-context", "all"}))->delimiter(',')->capture_default_str();
  al->callback([f, al] { run_align(*f, *al); });

  auto* tr = patch->add_subcommand("train", "train on in-context regression (Adam); loss with context vs patched query-only loss");
  add_model_flags(tr, *f);
  add_out_flag(*tr, f->out, "the TSV table (+ JSON sidecar)");
  tr->add_flag("--no-patch-track", f->no_patch_track, "skip the patched-loss evaluation");
  tr->callback([f, tr] { run_train(*f, *tr); });
}

}  // namespace icl::cli
