"""icl_theory.cot: the dict of `icl cot --json` as a CotResult (run with unittest)."""
import math
import unittest

import icl_theory as icl


class CotTest(unittest.TestCase):
    def test_theory_keys_values_and_frame(self):
        r = icl.cot(alpha=3.0, tau=2.0, sigma=0.01, steps=6)
        self.assertIsInstance(r, icl.CotResult)
        for key in ("steps", "error", "tau_c", "tau_crit", "regime", "limit", "t_opt"):
            self.assertIn(key, r)
        self.assertEqual(r["steps"], list(range(7)))
        self.assertTrue(r["converged"])
        self.assertAlmostEqual(r["error"][0], 1.0, places=14)
        # The authors' stored value at t = 1 (tests/data/cot_authors/theory.tsv).
        self.assertAlmostEqual(r["error"][1], 0.5000124996875, places=9)
        self.assertEqual(r["regime"], "convergent")
        self.assertEqual(r["t_opt"], 6)
        f = r.to_pandas()
        self.assertEqual(list(f["t"]), list(range(7)))
        self.assertAlmostEqual(f["error"][3], r["error"][3], places=15)
        self.assertEqual(f["alpha"][0], 3.0)

    def test_divergent_regime_has_no_finite_limit(self):
        r = icl.cot(alpha=3.0, tau=1.5, sigma=0.01, steps=3)
        self.assertEqual(r["regime"], "oscillatory")
        self.assertTrue(math.isinf(r["limit"]))
        self.assertGreater(r["growth_rate"], 0)

    def test_simulation_block_and_lambda_keyword(self):
        r = icl.cot(alpha=2.0, tau=4.0, sigma=0.1, steps=3, simulate=True, dim=16, seeds=3,
                    test_tasks=50, seed=5, threads=1)
        s = r["simulation"]
        self.assertEqual(len(s["mean"]), 4)
        self.assertEqual(len(s["seed_means"]), 3)
        self.assertEqual(s["status"], "converged")
        f = r.to_pandas()
        self.assertIn("sim_mean", f.columns)
        # A ridge is a simulation setting: the theory is skipped, the simulation runs.
        q = icl.cot(**{"lambda": 1e-3}, tau=0.8, steps=2, simulate=True, dim=12, seeds=2,
                    test_tasks=20, threads=1)
        self.assertNotIn("error", q)
        self.assertEqual(q["params"]["lambda"], 1e-3)

    def test_bad_input_names_the_field(self):
        with self.assertRaises(icl.InvalidParams) as ctx:
            icl.cot(tau=1.0)
        self.assertEqual(ctx.exception.field, "tau")
        with self.assertRaises(TypeError):
            icl.cot(stpes=3)


if __name__ == "__main__":
    unittest.main()
