"""icl_theory.optimize: the dict of `icl optimize --json` (run with unittest)."""
import math
import unittest

import icl_theory as icl


class OptimizeTest(unittest.TestCase):
    def test_optimal_ridge_is_interior_and_consistent_with_solve(self):
        p = icl.Params()
        r = icl.optimize(p, "lambda", minimize="idg", range=(1e-3, 10.0))
        self.assertEqual(list(r.keys()),
                         ["objective", "over", "argmin", "minimum", "slope", "converged", "status",
                          "message", "evaluations", "interior_minima", "range", "scale",
                          "params"])
        self.assertTrue(r["converged"])
        self.assertGreater(r["argmin"], 1e-3)
        self.assertLess(r["argmin"], 10.0)
        self.assertEqual(r["params"]["lambda"], r["argmin"])
        # The theory at the argmin gives the minimum; nearby values are not lower.
        q = icl.Params(lambda_=r["argmin"])
        self.assertAlmostEqual(icl.solve(q).error["idg"], r["minimum"], places=12)
        for f in (0.9, 1.1):
            self.assertGreaterEqual(icl.solve(icl.Params(lambda_=r["argmin"] * f)).error["idg"],
                                    r["minimum"])

    def test_boundary_and_errors(self):
        r = icl.optimize(icl.Params(), "alpha", minimize="tm", range=(0.5, 20.0))
        self.assertEqual(r["argmin"], 20.0)
        self.assertIn("upper end of the range", r["message"])
        with self.assertRaises(icl.InvalidParams) as e:
            icl.optimize(icl.Params(), "beta")
        self.assertEqual(e.exception.field, "over")
        with self.assertRaises(icl.InvalidParams) as e:
            icl.optimize(icl.Params(), "lambda", range=(1.0, 0.5))
        self.assertEqual(e.exception.field, "hi")
        with self.assertRaises(icl.InvalidParams) as e:
            icl.optimize(icl.Params(), "lambda", minimize="shift")
        self.assertEqual(e.exception.field, "objective")


if __name__ == "__main__":
    unittest.main()
