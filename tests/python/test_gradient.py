"""icl_theory: exact derivatives through the saddle point (docs/sensitivity.md §22): the scalar
and vectorized gradients, the sweep and phase-grid columns, the delta method against sampling,
and the traced boundary (run with unittest)."""
import math
import pickle
import unittest

import numpy as np

import icl_theory as icl


class GradientTest(unittest.TestCase):
    def test_scalar_gradient_is_the_json_block(self):
        s = icl.solve(icl.Params(), gradient=True)
        self.assertEqual(s.gradient_status["status"], "converged")
        self.assertEqual(s.gradient, s.to_dict()["gradient"])
        self.assertEqual(list(s.gradient["idg"]), s.gradient_status["parameters"])
        self.assertIn("bayes_idg", s.gradient)
        self.assertIn("m0", s.gradient)
        self.assertIsNone(icl.solve(icl.Params()).gradient)  # only when asked
        # pickles with its gradient
        t = pickle.loads(pickle.dumps(s))
        self.assertEqual(t.gradient, s.gradient)
        self.assertEqual(t.gradient_status, s.gradient_status)

    def test_not_converged_gives_nan_and_the_reason(self):
        s = icl.solve(icl.Params(kappa=1e-300), gradient=True)
        self.assertFalse(s.converged)
        self.assertEqual(s.gradient_status["status"], "not_converged")
        self.assertTrue(math.isnan(s.gradient["idg"]["alpha"]))

    def test_vectorized_sweep_and_grid_equal_the_scalar_gradients(self):
        alphas = [1.0, 2.0, 4.0]
        a = icl.solve(icl.Params(), alpha=alphas, gradient=True)
        sw = icl.sweep(icl.Params(), "alpha", alphas, gradient=True)
        for k, alpha in enumerate(alphas):
            one = icl.solve(icl.Params(alpha=alpha), gradient=True).gradient
            self.assertEqual(a.gradient["idg"]["rho"][k], one["idg"]["rho"])
            self.assertEqual(a["d_odg_d_kappa"][k], one["odg"]["kappa"])
            self.assertEqual(sw["d_idg_d_alpha"][k], one["idg"]["alpha"])
            # the elasticity d ln E / d ln x = (x / E) dE/dx
            idg = icl.solve(icl.Params(alpha=alpha)).error["idg"]
            self.assertAlmostEqual(sw["el_idg_alpha"][k], alpha / idg * one["idg"]["alpha"],
                                   places=14)
        self.assertIn("d_tm_d_lambda", a.to_pandas().columns)
        ph = icl.phase_grid(icl.Params(), "rho", [0.5, 0.9], "kappa", [0.5, 1.5], gradient=True)
        self.assertEqual(ph["el_idg_kappa"].shape, (2, 2))
        self.assertEqual(ph.gradient["m0"]["rho"].shape, (2, 2))

    def test_propagate_agrees_with_sampling(self):
        # A fitted sigma = 0.3 +- 0.01: the delta method's standard deviation of IDG against the
        # spread of 4000 vectorized solves at sampled sigma (its own sampling error about 1.1%;
        # the delta method's second-order error (sd / curvature scale)^2, far below): 5%.
        p = icl.Params(sigma=0.3)
        out = icl.propagate(p, {"sigma": 0.01 ** 2})
        rng = np.random.default_rng(20251)
        samples = icl.solve(p, sigma=rng.normal(0.3, 0.01, 4000))
        self.assertAlmostEqual(out["idg"][0], icl.solve(p).error["idg"], places=15)
        self.assertAlmostEqual(out["idg"][1] / np.std(samples.error["idg"]), 1.0, delta=0.05)
        two = icl.propagate(p, (["sigma", "alpha"], [[1e-4, 0], [0, 1e-2]]), outputs=["odg", "m0"])
        self.assertEqual(sorted(two), ["m0", "odg"])
        with self.assertRaises(icl.InvalidParams) as c:
            icl.propagate(p, {"beta": 0.1})
        self.assertEqual(c.exception.field, "cov")
        with self.assertRaises(icl.InvalidParams):
            icl.propagate(p, (["sigma", "alpha"], [[1e-4, 1], [0, 1e-2]]))  # not symmetric

    def test_traced_boundary(self):
        q = icl.Params(alpha=10, sigma=0, lambda_=0)
        b = icl.boundary(q, "rho", "kappa", [0.2, 0.5, 0.8], criterion="level", quantity="idg",
                         level=0.3, range=(0.05, 1), trace=True)
        t = b["trace"]
        self.assertEqual(t["status"], "converged")
        self.assertLess(t["largest_residual"], 1e-10)
        frame = b.trace_to_pandas()
        self.assertEqual(len(frame), len(t["points"]))
        self.assertTrue((np.abs(frame["value"] - 0.3) < 1e-10).all())
        with self.assertRaises(icl.InvalidParams) as c:
            icl.boundary(q, "lambda_", "alpha", [1, 2], criterion="argmin", trace=True)
        self.assertEqual(c.exception.field, "trace")


if __name__ == "__main__":
    unittest.main()
