"""icl_theory.depth: the dict of `icl depth --json` (run with unittest)."""
import unittest

import icl_theory as icl


class DepthTest(unittest.TestCase):
    def test_keys_and_the_noiseless_identity_with_the_test_time_iteration(self):
        d = icl.depth(alpha=2.0, sigma=0.0, layers=5)
        for key in ("error", "gamma_opt", "per_layer_error", "converged"):
            self.assertIn(key, d)
        self.assertTrue(d["converged"])
        self.assertLessEqual(d["per_layer_error"], d["error"] + 1e-12)
        # sigma = 0: the optimal shared step is 1/c, and the error is E_5 of the test-time
        # iteration at tau -> infinity (docs/multistep_depth.md §6, docs/multistep.md §4.1).
        c = 1 + 1 / 2.0
        self.assertAlmostEqual(d["gamma_opt"] / 5, 1 / c, places=7)
        r = icl.cot(alpha=2.0, tau=3.0, sigma=0.0, steps=5)
        self.assertAlmostEqual(d["error"], r["error_tau_infinity"][5], places=10)

    def test_bad_input_names_the_field(self):
        with self.assertRaises(icl.InvalidParams) as ctx:
            icl.depth(alpha=2.0, sigma=0.1, layers=0)
        self.assertEqual(ctx.exception.field, "layers")


if __name__ == "__main__":
    unittest.main()
