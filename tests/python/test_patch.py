"""icl_theory: the exact rank-1 patch (run with unittest)."""
import os
import tempfile
import unittest

import numpy as np

import icl_theory as icl


class Rank1PatchTest(unittest.TestCase):
    def test_identity_in_numpy(self):
        rng = np.random.default_rng(5)
        W = rng.standard_normal((7, 4))
        u = rng.standard_normal(4)
        a = rng.standard_normal(4)
        r = icl.rank1_patch(W, u, a)
        self.assertEqual(r["status"], "ok")
        self.assertEqual(r["dW"].shape, (7, 4))
        np.testing.assert_allclose((W + r["dW"]) @ a, W @ u, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r["db"], W @ (u - a), atol=1e-12)
        self.assertAlmostEqual(r["anchor_norm"], np.linalg.norm(a), places=13)
        self.assertEqual(np.linalg.matrix_rank(r["dW"], tol=1e-10), 1)

    def test_degenerate_anchor_and_shapes(self):
        W = np.eye(3)
        r = icl.rank1_patch(W, np.ones(3), np.zeros(3))
        self.assertEqual(r["status"], "degenerate-anchor")
        self.assertEqual(np.abs(r["dW"]).max(), 0.0)
        with self.assertRaises(ValueError):
            icl.rank1_patch(W, np.ones(2), np.ones(3))


def write_text_weights(path, rng, layers=1):
    """A plain softmax model in the icl-patch-weights text format (docs/patch.md §2.5), written
    here independently of the library: tokens in R^3, width 3, 1 head of size 2, MLP 3 -> 4 -> 3."""
    lines = ["icl-patch-weights 1",
             f"config 3 0 3 {layers} softmax 1 2 1 4 2 gelu 0 0 1e-05 0 layernorm sequential"]
    shapes = [("Wq", 2, 3), ("bq", 2, 1), ("Wk", 2, 3), ("bk", 2, 1), ("Wv", 2, 3), ("bv", 2, 1),
              ("Wo", 3, 2), ("bo", 3, 1), ("W1", 4, 3), ("b1", 4, 1), ("W2", 3, 4), ("b2", 3, 1)]
    for block in range(layers):
        for name, r, c in shapes:
            lines.append(f"block{block}.{name} {r} {c}")
            lines.append(" ".join(repr(float(v)) for v in rng.standard_normal(r * c) * 0.5))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class PatchCheckTest(unittest.TestCase):
    def test_defaults_are_the_library_defaults(self):
        # `icl patch check` without flags: d = 2, context 50, 1 prompt, 8 heads of 4, MLP 128,
        # the controls on (verify::patch::CheckOptions{}).
        r = icl.patch_check()
        self.assertEqual(r["status"], "converged")
        self.assertEqual((r["context"], r["prompts"], r["tolerance"]), (50, 1, 1e-10))
        c = r["config"]
        self.assertEqual((c["token_dim"], c["heads"], c["head_dim"], c["mlp_hidden"]), (3, 8, 4, 128))
        self.assertEqual((c["block"], c["norm"], c["mlp"]), ("plain", "none", "gelu"))
        self.assertIn("negative_controls", r)
        self.assertEqual(r["weights"], "random (seed 1)")

    def test_weights_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.txt")
            write_text_weights(path, np.random.default_rng(3))
            r = icl.patch_check(weights=path, context=8, prompts=2)
            self.assertEqual(r["status"], "converged")
            self.assertEqual(r["weights"], path)
            self.assertEqual((r["config"]["heads"], r["config"]["mlp_hidden"]), (1, 4))
            # a model keyword given (different from its default) must agree with the file
            for kw, field in ((dict(layers=2), "layers"), (dict(d=3), "d"), (dict(block="preln"), "block")):
                with self.assertRaises(icl.InvalidParams) as cm:
                    icl.patch_check(weights=path, context=8, **kw)
                self.assertEqual(cm.exception.field, field)
            with self.assertRaises(icl.InvalidParams) as cm:
                icl.patch_check(weights=os.path.join(d, "missing.txt"))
            self.assertEqual(cm.exception.field, "weights")

    def test_plain_softmax_block_is_exact(self):
        r = icl.patch_check(d=2, context=12, prompts=3, seed=4)
        self.assertLess(r["max_rel_diff"], 1e-10)
        self.assertGreater(r["max_rel_diff"], 0.0)  # computed, not skipped
        self.assertEqual(r["rank"], 1)
        self.assertEqual(r["degenerate_anchors"], 0)
        self.assertEqual(r["status"], "converged")
        self.assertEqual(len(r["per_layer"]), 1)

    def test_pre_ln_stack_is_exact_and_controls_fail(self):
        cfg = dict(d=2, context=10, prompts=2, layers=3, block="preln", width=16,
                   heads=2, mlp_hidden=16, seed=9)
        full = icl.patch_check(**cfg)
        self.assertLess(full["max_rel_diff"], 1e-9)
        self.assertEqual(len(full["per_layer"]), 3)
        # negative controls: patch only the first block; weight only (no bias) in residual blocks
        first = icl.patch_check(**cfg, patch_layers=1)
        weight = icl.patch_check(**cfg, mode="weight-only")
        self.assertGreater(first["max_rel_diff"], 1e-4)
        self.assertGreater(weight["max_rel_diff"], 1e-4)
        self.assertEqual(first["status"], "check_failed")
        self.assertEqual(weight["status"], "check_failed")

    def test_float_precision(self):
        r = icl.patch_check(d=2, context=12, prompts=2, precision="float", seed=4)
        self.assertLess(r["max_rel_diff"], 1e-3)
        self.assertGreater(r["max_rel_diff"], 1e-12)  # really single precision

    def test_other_layers(self):
        for kind in ("linear", "rnn"):
            r = icl.patch_check(kind=kind, context=8, prompts=2, heads=2, mlp_hidden=16)
            self.assertLess(r["max_rel_diff"], 1e-9, kind)

    def test_modern_blocks_are_exact_through_ten_layers(self):
        # docs/patch.md §16: RMSNorm, gated MLPs, post-norm and parallel blocks.
        for block, norm, mlp in [("preln", "rmsnorm", "swiglu"), ("postln", "rmsnorm", "geglu"),
                                 ("parallel", "layernorm", "swiglu")]:
            r = icl.patch_check(layers=10, width=8, heads=2, mlp_hidden=16, context=8, prompts=2,
                                block=block, norm=norm, mlp=mlp)
            self.assertLess(r["max_rel_diff"], 1e-12, (block, norm, mlp))
            self.assertEqual(r["config"]["block"], block)
            self.assertEqual(r["ranks"]["W1"], 1)
            self.assertIn("gate_only", r["negative_controls"])
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.patch_check(block="postln", norm="none")
        self.assertEqual(cm.exception.field, "norm")
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.patch_check(mlp="mish")
        self.assertEqual(cm.exception.field, "mlp")

    def test_bad_arguments_name_the_field(self):
        # the fields `icl patch check` names for the same inputs (CheckOptions::validate)
        for kw, field in ((dict(kind="lstm"), "kind"), (dict(context=4, pos=9), "pos"),
                          (dict(mode="half"), "mode"), (dict(heads=0), "heads"),
                          (dict(prompts=0), "prompts"), (dict(tol=0), "tol"),
                          (dict(context=5, chunk=(4, 2)), "chunk"), (dict(mlp_hidden=0), "mlp_hidden"),
                          (dict(block="plain", norm="rmsnorm"), "norm"),
                          (dict(mlp="swiglu", mlp_depth=1), "mlp_depth")):
            with self.assertRaises(icl.InvalidParams, msg=str(kw)) as cm:
                icl.patch_check(**kw)
            self.assertEqual(cm.exception.field, field, kw)

    def test_implicit_dynamics(self):
        # docs/patch.md §9: the prefix and online-GD identities are exact (round-off only);
        # the step curve has one entry per context token.
        r = icl.patch_dynamics(context=24, prompts=2, seed=3)
        self.assertEqual(r["status"], "converged")
        for model in ("attention", "rnn"):
            self.assertLessEqual(r[model]["random"]["prefix_max_rel_diff"], r["tolerance"])
            self.assertLessEqual(r[model]["random"]["gd_max_rel_diff"], r["tolerance"])
        self.assertEqual(r["steps"]["i"], [float(i) for i in range(1, 25)])
        self.assertEqual(len(r["steps"]["step_rnn"]), 24)
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.patch_dynamics(context=1)
        self.assertEqual(cm.exception.field, "context")


if __name__ == "__main__":
    unittest.main()
