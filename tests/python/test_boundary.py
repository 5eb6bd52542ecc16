"""icl_theory.boundary: the dict of `icl boundary --json` (run with unittest)."""
import math
import unittest

import icl_theory as icl


class BoundaryTest(unittest.TestCase):
    def test_level_crossing_is_where_solve_gives_the_level(self):
        p = icl.Params(alpha=10.0, sigma=0.0, lambda_=0.0)
        r = icl.boundary(p, "rho", "kappa", [0.3, 0.6], criterion="level", quantity="idg",
                         level=0.3, range=(0.05, 1.0))
        self.assertEqual(list(r.keys()),
                         ["criterion", "x", "y", "range", "scale", "converged", "status",
                          "message", "points", "params"])
        self.assertTrue(r["converged"])
        for pt in r["points"]:
            self.assertTrue(pt["converged"])
            q = icl.Params(alpha=10.0, sigma=0.0, lambda_=0.0, kappa=pt["kappa"], rho=pt["rho"])
            # TOMS 748 stops within 2^-29 in ln rho: IDG matches the level to ~1e-9.
            self.assertAlmostEqual(icl.solve(q).error["idg"], 0.3, places=8)

    def test_steepest_and_none_in_range(self):
        p = icl.Params(kappa=0.5, sigma=0.0, lambda_=0.0)
        r = icl.boundary(p, "rho", "alpha", [10.0, 1000.0], range=(0.05, 1.0))
        self.assertEqual(r["criterion"], {"type": "steepest", "quantity": "idg"})
        a, b = r["points"]
        # Closer to the D -> infinity transition rho = kappa at the larger alpha.
        self.assertLess(abs(b["rho"] - p.kappa), abs(a["rho"] - p.kappa))
        none = icl.boundary(p, "rho", "alpha", [2.0], criterion="level", level=5.0)
        self.assertIsNone(none["points"][0]["rho"])
        self.assertTrue(math.isnan(none["points"][0]["value"]))
        self.assertEqual(none["status"], "check_failed")

    def test_argmin_matches_optimize_and_errors(self):
        r = icl.boundary(icl.Params(), "lambda_", "alpha", [2.0], criterion="argmin",
                         range=(1e-3, 10.0))
        o = icl.optimize(icl.Params(alpha=2.0), "lambda", minimize="idg", range=(1e-3, 10.0))
        self.assertEqual(r["points"][0]["lambda"], o["argmin"])
        with self.assertRaises(icl.InvalidParams) as e:
            icl.boundary(icl.Params(), "rho", "alpha", [2.0], quantity="foo")
        self.assertEqual(e.exception.field, "quantity")
        with self.assertRaises(icl.InvalidParams) as e:
            icl.boundary(icl.Params(), "rho", "alpha", [2.0], level=0.5)
        self.assertEqual(e.exception.field, "level")


if __name__ == "__main__":
    unittest.main()
