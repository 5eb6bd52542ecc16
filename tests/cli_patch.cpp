// `icl patch` as a user runs it: the identity holds, the negative controls fail, bad options
// are exit 2.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace icl_test;

namespace {

// One training step on a tiny model (the weights files of the --weights tests), and the modern
// block those tests save (docs/patch.md §16).
const std::string kTrainOneStep =
    "patch train --train-steps 1 --batch 2 --context 4 --eval-every 1 --quiet ";
const std::string kModernBlock =
    "--layers 2 --block postln --norm rmsnorm --mlp swiglu --width 8 --heads 2 --mlp-hidden 8 ";

}  // namespace

TEST_CASE("icl patch check: exact rank-1 patch with failing negative controls") {
  const auto j = run_json("patch check --layers 3 --block preln --width 8 --heads 2 --head-dim 4 "
                         "--mlp-hidden 16 --d 2 --context 12 --seed 3 --json");
  CHECK(j.at("max_rel_diff").get<double>() < 1e-12);
  CHECK(j.at("rank").get<int>() == 1);
  CHECK(j.at("pass").get<bool>());
  CHECK(j.at("status").get<std::string>() == "converged");
  // The identity holds while both negative controls (on the given 3-layer Pre-LN model) fail.
  const auto& nc = j.at("negative_controls");
  for (const char* k : {"weight_only_with_residual", "first_block_only"}) {
    CAPTURE(k);
    CHECK(nc.at(k).at("model").get<std::string>() == "given");
    CHECK(nc.at(k).at("max_rel_diff").get<double>() > 1e-3);
  }
}

TEST_CASE("icl patch check on a plain block: the controls run on the control model and fail") {
  const auto j = run_json("patch check --context 10 --heads 2 --mlp-hidden 16 --seed 5 --json");
  CHECK(j.at("max_rel_diff").get<double>() < 1e-12);
  const auto& nc = j.at("negative_controls");
  for (const char* k : {"weight_only_with_residual", "first_block_only"}) {
    CAPTURE(k);
    CHECK(nc.at(k).at("model").get<std::string>().rfind("control", 0) == 0);
    CHECK(nc.at(k).at("max_rel_diff").get<double>() > 1e-3);
  }
  // The text output names the model of the controls.
  const auto t = run_icl("patch check --context 10 --heads 2 --mlp-hidden 16 --seed 5 --quiet");
  REQUIRE(t.code == 0);
  CHECK(contains(t.out, "control (Pre-LN, 32 wide, 4 layers) model"));
}

TEST_CASE("icl patch check --weights: a disagreeing flag is named in the message") {
  const Scratch dir("cli_patch_weights");
  const std::string w = dir.file("w2.txt");
  REQUIRE(run_icl(kTrainOneStep + "--layers 2 --pre-ln --width 8 --heads 2 --mlp 8 --save " + w).code == 0);
  const auto r = expect_bad_input("patch check --weights " + w + " --layers 3 --context 4", "layers");
  CHECK(!contains(r.err, "width mismatch"));
  CHECK(run_icl("patch check --weights " + w + " --layers 2 --context 4 --json").code == 0);
}

TEST_CASE("icl patch: bad options are exit 2 with a message") {
  const char* cases[] = {"patch check --heads 0", "patch check --weights /nonexistent/w.txt",
                         "patch check --layers 0", "patch check --kind lstm", "patch check --chunk 9:3",
                         "patch check --chunk 2:x", "patch check --pos 99 --context 5",
                         "patch thought --ridge 0", "patch align --sgd-steps 0",
                         "patch align --protocol sgd", "patch train --save-dtype f16",
                         "patch train --save w.txt --save-dtype bf16",
                         "patch check --weights /nonexistent/w.safetensors"};
  for (const char* c : cases) expect_bad_input(c, "icl: ");
}

TEST_CASE("icl patch train --save X.safetensors is read by icl patch check; a truncated copy is exit 2 naming the tensor") {
  const Scratch dir("cli_patch_safetensors");
  const std::string m = dir.file("m.safetensors"), cut = dir.file("cut.safetensors");
  REQUIRE(run_icl("patch train --train-steps 2 --batch 2 --context 4 --eval-every 1 --heads 2 "
                  "--mlp 8 --quiet --save " + m + " --save-dtype bf16").code == 0);
  CHECK(run_json("patch check --weights " + m + " --context 4 --json").at("max_rel_diff").get<double>() < 1e-12);
  const std::string bytes = slurp(m);
  {
    std::ofstream out(cut, std::ios::binary);
    out << bytes.substr(0, bytes.size() - 1);
  }
  expect_bad_input("patch check --weights " + cut + " --context 4", "layers.0.mlp.fc2.bias");
  // A modern block (docs/patch.md §16): the gate tensors and the norm/layout metadata travel too.
  const std::string modern = dir.file("modern.safetensors");
  REQUIRE(run_icl(kTrainOneStep + kModernBlock + "--save " + modern).code == 0);
  CHECK(contains(slurp(modern), "layers.1.mlp.gate_proj.weight"));
  const auto jm = run_json("patch check --weights " + modern + " --context 4 --json");
  CHECK(jm.at("max_rel_diff").get<double>() < 1e-12);
  CHECK(jm.at("config").at("block").get<std::string>() == "postln");
  CHECK(jm.at("ranks").contains("Wg"));
}

TEST_CASE("icl patch align --protocol: the chosen protocols with their controls in the JSON") {
  const auto j = run_json("patch align --protocol online,per-token --context 5 --prompts 3 --heads 2 "
                         "--mlp-hidden 8 --json --quiet");
  REQUIRE(j.at("protocols").size() == 2);
  CHECK(j.at("protocols").at(0).at("protocol") == "online");
  CHECK(j.at("protocols").at(1).at("protocol") == "per-token");
  CHECK(j.at("protocols").at(1).at("x").size() == 5);
  CHECK(j.at("protocols").at(1).at("summary_random").at("count") == 3);
  const auto t = run_icl("patch align --context 5 --prompts 2 --heads 2 --mlp-hidden 8 --sgd-steps 1,2 --quiet");
  REQUIRE(t.code == 0);
  for (const char* p : {"fullbatch:", "online:", "per-token:"}) CHECK(contains(t.out, p));
}

TEST_CASE("icl patch check --block --norm --mlp: 10-layer modern blocks pass at 1e-12 with their controls") {
  struct Case { const char* flags; bool gated, post; };
  const Case cases[] = {{"--block preln --norm rmsnorm --mlp swiglu", true, false},
                        {"--block postln --norm rmsnorm --mlp geglu", true, true},
                        {"--block parallel --norm layernorm --mlp swiglu", true, false},
                        {"--block postln --mlp gelu", false, true}};
  for (const auto& cs : cases) {
    CAPTURE(cs.flags);
    const auto j = run_json(std::string("patch check --layers 10 --width 8 --heads 2 --mlp-hidden 16 "
                                       "--context 12 --tol 1e-12 --json ") + cs.flags);
    CHECK(j.at("pass").get<bool>());
    CHECK(j.at("max_rel_diff").get<double>() < 1e-12);
    CHECK(j.at("float32").at("max_rel_diff").get<double>() < 1e-5);
    CHECK(j.at("ranks").at("W1").get<int>() == 1);
    CHECK(j.at("ranks").contains("Wg") == cs.gated);
    CHECK(j.at("variants").contains("norm_scale") == cs.post);
    if (cs.post) CHECK(j.at("variants").at("norm_scale").at("max_rel_diff").get<double>() < 1e-12);
    CHECK(j.at("negative_controls").at("weight_only_with_residual").at("max_rel_diff").get<double>() > 1e-2);
    CHECK(j.at("negative_controls").contains("gate_only") == cs.gated);
  }
}

TEST_CASE("icl patch: --pre-ln, --residual, --act and --mlp N are aliases: the same JSON as --block, --mlp and --mlp-hidden") {
  const std::string base = "patch check --layers 2 --width 8 --heads 2 --context 6 --json ";
  const auto strip = [](nlohmann::json j) {
    j.erase("seconds_per_check");
    return j;
  };
  const struct { const char* alias; const char* flag; } pairs[] = {
      {"--pre-ln --mlp 16", "--block preln --mlp-hidden 16"},
      {"--residual --act relu", "--block residual --mlp relu"}};
  for (const auto& p : pairs) {
    CAPTURE(p.alias);
    CHECK(strip(run_json(base + p.alias)) == strip(run_json(base + p.flag)));
  }
  CHECK(run_json(base + "--pre-ln").at("config").at("block") == "preln");
  // an alias together with its flag is refused
  expect_bad_input("patch check --pre-ln --block preln", "--block");
  expect_bad_input("patch check --mlp 16 --mlp-hidden 8", "mlp_hidden");
  expect_bad_input("patch check --act relu --mlp gelu", "act");
}

TEST_CASE("icl patch: impossible block/norm/mlp combinations are exit 2 naming the flag") {
  struct Case { const char* args; const char* field; };
  const Case cases[] = {{"patch check --block plain --norm rmsnorm", "norm"},
                        {"patch check --block postln --norm none", "norm"},
                        {"patch check --block postln --pre-ln", "block"},
                        {"patch check --mlp mish", "mlp"},
                        {"patch check --mlp 0", "mlp"},
                        {"patch check --act relu --mlp swiglu", "act"},
                        {"patch check --mlp swiglu --mlp-depth 1", "mlp_depth"}};
  for (const auto& c : cases) expect_bad_input(c.args, c.field);
}

TEST_CASE("icl patch check --weights: a disagreeing --block, --norm or --mlp is named") {
  const Scratch dir("cli_patch_weights_blocks");
  const std::string w = dir.file("wp.txt");
  REQUIRE(run_icl(kTrainOneStep + kModernBlock + "--save " + w).code == 0);
  for (const BadInput& c : {BadInput{"--block preln", "block"}, {"--norm layernorm", "norm"},
                            {"--mlp geglu", "mlp"}})
    expect_bad_input("patch check --weights " + w + " --context 4 " + c.args, c.needle);
  CHECK(run_icl("patch check --weights " + w + " --context 4 --block postln --norm rmsnorm --mlp swiglu --json")
            .code == 0);
}
