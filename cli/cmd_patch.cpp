// `icl patch check|dynamics|thought|align|train`: the exact rank-1 patch of in-context learning
// (docs/patch.md). Each subcommand binds its flags to a default-constructed options object of
// verify/patch/experiments.hpp (the defaults shown by --help are the library's), translates the
// CLI's own spellings (--seed -> base_seed, and the aliases of docs/patch.md §14: --pre-ln,
// --residual, --act, --mlp N), calls run(options, progress) and prints to_text or to_json.
// Every rule on the inputs is the options' validate(); the CLI refuses with its InvalidParams.
#include <charconv>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "numerics/error.hpp"
#include "verify/patch/experiments.hpp"
#include "verify/patch/serialize.hpp"

namespace icl::cli {
namespace {

namespace P = icl::verify::patch;

// The CLI's own flags: where the result goes, and progress. Not options of an experiment.
struct Output {
  bool json = false, quiet = false;
  std::string out, save, save_dtype = "f64";
};

// The model flags that are names (parsed by the library: the field is named on a bad one) and
// the legacy spellings, which are aliases of --block, --mlp and --mlp-hidden.
struct ModelFlags {
  std::string kind, block, norm, mlp, act;
  bool pre_ln = false, residual = false, noncausal = false;
};

// One subcommand: the experiment's options (defaults: Options{}) and the flags around them.
template <class Options>
struct Command {
  Options o;
  ModelFlags model;
  Output output;
  std::string chunk;       // check: --chunk B:E
  std::vector<std::string> protocols;  // align: --protocol names
  int train_context = 0;   // train: --train-context, an alias of --context
  bool no_patch_track = false;
};

bool parse_int(const std::string& t, int& v) {
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return !t.empty() && ec == std::errc() && end == t.data() + t.size();
}

void add_model_flags(CLI::App* a, P::ModelSource& m, ModelFlags& f) {
  const char* g = "Model";
  P::ModelSpec& s = m.spec;
  f.kind = P::to_string(s.kind);
  f.block = P::to_string(s.block.kind);
  f.norm = P::to_string(s.block.norm);
  f.mlp = P::to_string(s.block.mlp);
  a->add_option("--d", s.d, "input dimension d (tokens are (x, y) in R^{d+1})")
      ->group(g)->capture_default_str();
  a->add_option("--layers", s.layers, "number of blocks L")->group(g)->capture_default_str();
  a->add_option("--kind", f.kind, "contextual layer: " + P::choices<P::LayerKind>())
      ->group(g)->capture_default_str();
  a->add_option("--heads", s.heads, "attention heads")->group(g)->capture_default_str();
  a->add_option("--head-dim", s.head_dim, "size of each head")->group(g)->capture_default_str();
  a->add_option("--width", s.width,
                "model width (0: d+1 without embedding for plain blocks, 32 with an "
                "embedding for residual blocks; != d+1 adds a linear embedding/readout)")
      ->group(g)->capture_default_str();
  auto* block = a->add_option("--block", f.block, "block: " + P::choices<P::BlockKind>() +
                                                      " (docs/patch.md §2.3, §16)")
                    ->group(g)->capture_default_str();
  auto* pre_ln = a->add_flag("--pre-ln", f.pre_ln, "alias of --block preln")->group(g)->excludes(block);
  a->add_flag("--residual", f.residual, "alias of --block residual")
      ->group(g)->excludes(block)->excludes(pre_ln);
  a->add_option("--norm", f.norm, "norm of the block: " + P::choices<P::Norm>() +
                                      " (auto: layernorm for preln/postln/parallel, none for "
                                      "plain/residual)")
      ->group(g)->capture_default_str();
  a->add_option("--mlp", f.mlp, "MLP: " + P::choices<P::Mlp>() +
                                    " (swiglu, geglu: gated); a number N: alias of --mlp-hidden N")
      ->group(g)->capture_default_str();
  a->add_option("--mlp-hidden", s.mlp_hidden, "MLP hidden width")->group(g)->capture_default_str();
  a->add_option("--act", f.act, "alias of --mlp gelu|relu")->group(g);
  a->add_option("--mlp-depth", s.mlp_depth, "dense layers in the MLP")->group(g)->capture_default_str();
  a->add_flag("--noncausal", f.noncausal, "attention without causal mask")->group(g);
  a->add_option("--weights", m.weights,
                "load weights from FILE (FILE.safetensors: safetensors; else the text format)")->group(g);
}

// The model flags of subcommand `app` into `m`; a --weights file must agree with the ones given.
void finish_model(const ModelFlags& f, const CLI::App& app, P::ModelSource& m) {
  P::ModelSpec& s = m.spec;
  s.kind = P::layer_kind_from_string(f.kind);
  s.block.kind = P::block_kind_from_string(f.pre_ln ? "preln" : f.residual ? "residual" : f.block);
  s.block.norm = P::norm_from_string(f.norm);
  // --mlp N is an alias of --mlp-hidden N, --act A of --mlp A: an alias with its flag is refused.
  int hidden = 0;
  const bool width = parse_int(f.mlp, hidden), act = app.count("--act") > 0;
  if (width && app.count("--mlp-hidden") > 0)
    throw InvalidParams("mlp_hidden", "given twice (--mlp N is an alias of --mlp-hidden N)");
  if (act && app.count("--mlp") > 0 && !width)
    throw InvalidParams("act", "given twice (--act " + f.act + " is an alias of --mlp " + f.act + ")");
  if (width) s.mlp_hidden = hidden;
  else s.block.mlp = P::mlp_from_string(act ? f.act : f.mlp);
  s.causal = !f.noncausal;
  m.given_d = app.count("--d") > 0;
  m.given_width = app.count("--width") > 0;
  m.given_layers = app.count("--layers") > 0;
  m.given_heads = app.count("--heads") > 0;
  m.given_block = app.count("--block") + app.count("--pre-ln") + app.count("--residual") > 0;
  m.given_norm = app.count("--norm") > 0;
  m.given_mlp = (app.count("--mlp") > 0 && !width) || app.count("--act") > 0;
}

void add_base_seed_flag(CLI::App* a, std::uint64_t& base_seed) {
  add_seed_flag(*a, base_seed)->group("Model");
}

// The training flags: of `patch train`, or of the training before an experiment (--train-steps).
void add_training_flags(CLI::App* a, P::TrainOptions& t, bool before_experiment) {
  const char* g = "Training";
  a->add_option("--train-steps", t.steps,
                before_experiment ? "train the model first (Adam) for this many steps" : "Adam steps")
      ->group(g)->capture_default_str();
  if (before_experiment)
    a->add_option("--train-context", t.n_ctx, "context pairs during training (0: --context)")
        ->group(g)->capture_default_str();
  a->add_option("--batch", t.batch, "prompts per training step")->group(g)->capture_default_str();
  a->add_option("--lr", t.adam.lr, "Adam learning rate")->group(g)->capture_default_str();
  a->add_option("--eval-every", t.eval_every, "evaluate every N steps")->group(g)->capture_default_str();
  add_threads_flag(*a, t.threads)->group(g);
}

void add_output_flags(CLI::App* a, Output& o, const std::string& out_what, OutFormat format,
                      bool saves) {
  if (saves) {
    a->add_option("--save", o.save, "save the (trained) weights to FILE (FILE.safetensors: safetensors)")
        ->check(output_file_check())->group("Training");
    a->add_option("--save-dtype", o.save_dtype, "dtype of a .safetensors --save: f64 | f32 | bf16")
        ->check(CLI::IsMember({"f64", "f32", "bf16"}))->group("Training")->capture_default_str();
  }
  add_json_flag(*a, o.json);
  add_quiet_flag(*a, o.quiet);
  add_out_flag(*a, o.out, out_what, format);
}

// The flags every experiment (check, dynamics, thought, align) has.
template <class Options>
void add_experiment_flags(CLI::App* a, Command<Options>& c, const std::string& prompts_help,
                          const std::string& out_what, OutFormat format, bool saves) {
  add_model_flags(a, c.o.model, c.model);
  a->add_option("--context", c.o.context, "context pairs n")->group("Model")->capture_default_str();
  add_base_seed_flag(a, c.o.base_seed);
  a->add_option("--prompts", c.o.prompts, prompts_help)->capture_default_str();
  add_training_flags(a, c.o.training, true);
  add_output_flags(a, c.output, out_what, format, saves);
}

// Before any computation: --save-dtype applies to a .safetensors --save only.
void check_save(const Output& o, const CLI::App& app) {
  if (app.count("--save-dtype") > 0 && P::weights_format(o.save) != P::WeightsFormat::Safetensors)
    throw InvalidParams("save_dtype", "applies to a .safetensors --save only (got --save '" + o.save + "')");
}

// --save FILE: the text format, or safetensors for a .safetensors FILE (docs/patch.md §2.5).
void save_if(const Output& o, const P::Weights<double>& w) {
  if (o.save.empty()) return;
  namespace st = numerics::safetensors;
  const st::DType dtype = o.save_dtype == "f32"    ? st::DType::F32
                          : o.save_dtype == "bf16" ? st::DType::BF16
                                                   : st::DType::F64;
  try {
    P::save_weights_file(w, o.save, dtype);
  } catch (const std::runtime_error& e) {
    throw ExitError(kExitBadInput, "--save: " + std::string(e.what()));
  }
}

numerics::Progress reporter(const Output& o, const std::string& name) {
  if (o.quiet) return {};
  return [name](std::size_t done, std::size_t total, const std::string& what) {
    progress(name + " " + what, done, total);
  };
}

// --out: the TSV table (+ JSON sidecar); --json: the JSON on stdout; else the text report.
template <class Result>
void print(const Output& o, const Result& r, const numerics::Table& table, const P::Json& j) {
  if (!o.out.empty()) emit_tsv(table, o.out, nlohmann::json(j));
  if (o.json) std::cout << j.dump(2) << "\n";
  else std::cout << P::to_text(r);
}

void exit_unless_converged(numerics::Status s, const std::string& message) {
  if (s != numerics::Status::Converged) throw ExitError(kExitNotConverged, message);
}

// ---- the subcommands -------------------------------------------------------------------------

void check_command(Command<P::CheckOptions>& c, const CLI::App& app) {
  finish_model(c.model, app, c.o.model);
  check_save(c.output, app);
  if (!c.chunk.empty()) {
    const auto colon = c.chunk.find(':');
    if (colon == std::string::npos || !parse_int(c.chunk.substr(0, colon), c.o.chunk_begin) ||
        !parse_int(c.chunk.substr(colon + 1), c.o.chunk_end))
      throw InvalidParams("chunk", "must be B:E (context tokens B..E-1), got '" + c.chunk + "'");
  }
  const P::CheckResult r = P::run(c.o, reporter(c.output, "patch check"));
  save_if(c.output, r.model);
  const P::Json j = P::to_json(r);
  if (c.output.json) {
    emit_json(j, c.output.out);
  } else {
    if (!c.output.out.empty()) emit_json(j, c.output.out);
    std::cout << P::to_text(r);
  }
  exit_unless_converged(r.status, r.message);
}

void dynamics_command(Command<P::DynamicsOptions>& c, const CLI::App& app) {
  finish_model(c.model, app, c.o.model);
  const P::DynamicsResult r = P::run(c.o, reporter(c.output, "patch dynamics"));
  print(c.output, r, P::to_table(r), P::to_json(r));
  exit_unless_converged(r.status, r.message);
}

// thought and align: run, --save the model, print.
template <class Options>
void run_and_save(Command<Options>& c, const CLI::App& app, const std::string& name) {
  finish_model(c.model, app, c.o.model);
  check_save(c.output, app);
  const auto r = P::run(c.o, reporter(c.output, name));
  save_if(c.output, r.model);
  print(c.output, r, P::to_table(r), P::to_json(r));
}

void thought_command(Command<P::ThoughtOptions>& c, const CLI::App& app) {
  run_and_save(c, app, "patch thought");
}

void align_command(Command<P::AlignOptions>& c, const CLI::App& app) {
  c.o.protocols = P::align_protocols_from_strings(c.protocols);
  run_and_save(c, app, "patch align");
}

void train_command(Command<P::TrainRunOptions>& c, const CLI::App& app) {
  finish_model(c.model, app, c.o.model);
  check_save(c.output, app);
  if (app.count("--train-context") > 0) c.o.training.n_ctx = c.train_context;
  c.o.training.track_patch = !c.no_patch_track;
  const P::TrainRunResult r = P::run(c.o, reporter(c.output, "patch train"));
  save_if(c.output, r.weights);
  P::Json j = P::to_json(r);
  if (!c.output.save.empty()) j["saved"] = c.output.save;
  print(c.output, r, P::to_table(r.training), j);
  exit_unless_converged(r.training.status, "training: " + r.training.message);
}

template <class Options, class Run>
void on_run(CLI::App* a, std::shared_ptr<Command<Options>> c, Run run) {
  a->callback([a, c, run] { run(*c, *a); });
}

}  // namespace

void register_patch(CLI::App& app) {
  auto* patch = app.add_subcommand(
      "patch", "the exact rank-1 patch of in-context learning (contextual blocks, Eigen)");
  patch->require_subcommand(1);

  auto* check = patch->add_subcommand("check", "T_W(C,x) = T_{W+dW}(x): patch block by block, negative controls");
  auto ck = std::make_shared<Command<P::CheckOptions>>();
  add_experiment_flags(check, *ck, "number of prompts", "the JSON", OutFormat::Json, true);
  check->add_option("--pos", ck->o.pos, "position whose output is matched (-1: the query)")->capture_default_str();
  check->add_option("--chunk", ck->chunk, "also remove context chunk B:E (tokens B..E-1) instead of all of C (one block)");
  check->add_option("--tol", ck->o.tol, "pass if max_rel_diff <= tol (else exit 3)")->capture_default_str();
  on_run(check, ck, check_command);

  auto* dyn = patch->add_subcommand("dynamics", "implicit dynamics: prefix patches, online GD, step norms attention vs RNN");
  auto dy = std::make_shared<Command<P::DynamicsOptions>>();
  add_experiment_flags(dyn, *dy, "number of prompts", "the TSV table (+ JSON sidecar)",
                       OutFormat::Table, false);
  dyn->add_option("--rnn-weights", dy->o.rnn_weights, "weights of the RNN model (FILE)");
  on_run(dyn, dy, dynamics_command);

  auto* th = patch->add_subcommand("thought", "static thought patch by ridge least squares over calibration queries");
  auto tp = std::make_shared<Command<P::ThoughtOptions>>();
  add_experiment_flags(th, *tp, "number of contexts", "the TSV table (+ JSON sidecar)",
                       OutFormat::Table, true);
  th->add_option("--m", tp->o.m_values, "calibration sizes")->delimiter(',')->capture_default_str();
  th->add_option("--heldout", tp->o.heldout, "held-out queries")->capture_default_str();
  th->add_option("--ridge", tp->o.ridge, "relative ridge")->capture_default_str();
  on_run(th, tp, thought_command);

  auto* al = patch->add_subcommand("align", "cos_F between the implicit patch and explicit gradient updates on the context (4 protocols)");
  auto ag = std::make_shared<Command<P::AlignOptions>>();
  add_experiment_flags(al, *ag, "number of prompts", "the TSV table (+ JSON sidecar)",
                       OutFormat::Table, true);
  for (P::AlignProtocol p : ag->o.protocols) ag->protocols.push_back(P::to_string(p));
  al->add_option("--sgd-lr", ag->o.lr, "SGD learning rate")->capture_default_str();
  al->add_option("--sgd-steps", ag->o.steps, "fullbatch SGD step counts reported")->delimiter(',')->capture_default_str();
  al->add_option("--protocol", ag->protocols,
                 "fullbatch | online | per-token | per-token-context | all (comma-separated)")
      ->delimiter(',')->capture_default_str();
  on_run(al, ag, align_command);

  auto* tr = patch->add_subcommand("train", "train on in-context regression (Adam); loss with context vs patched query-only loss");
  auto tn = std::make_shared<Command<P::TrainRunOptions>>();
  add_model_flags(tr, tn->o.model, tn->model);
  auto* context = tr->add_option("--context", tn->o.training.n_ctx, "context pairs n")->group("Model")->capture_default_str();
  add_base_seed_flag(tr, tn->o.base_seed);
  add_training_flags(tr, tn->o.training, false);
  tr->add_option("--train-context", tn->train_context, "alias of --context")->group("Training")->excludes(context);
  add_output_flags(tr, tn->output, "the TSV table (+ JSON sidecar)",
                       OutFormat::Table, true);
  tr->add_flag("--no-patch-track", tn->no_patch_track, "skip the patched-loss evaluation");
  on_run(tr, tn, train_command);
}

}  // namespace icl::cli
