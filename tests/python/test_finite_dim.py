"""icl_theory.solve_finite_dim and sweep(finite_dim=D): the finite-D prediction of
docs/finite_dim.md §21 from Python (run with unittest)."""
import json
import math
import pickle
import unittest

import icl_theory as icl

ERRORS = ("tm", "idg", "odg")


class SolveFiniteDimTest(unittest.TestCase):
    def setUp(self):
        self.p = icl.Params(lambda_=0.05)
        self.fd = icl.solve_finite_dim(self.p, 40)

    def test_fields_are_the_serializers_blocks(self):
        fd, d = self.fd, self.fd.to_dict()
        self.assertTrue(fd.converged)
        self.assertEqual(fd.status, "converged")
        self.assertEqual(fd.dim, 40)
        for name in ("error", "limit", "slope", "second_order", "sources", "omitted", "order", "sized",
                     "message", "residual_norm", "uncertainty", "decomposition"):
            self.assertEqual(getattr(fd, name), d[name])
        self.assertEqual(fd.switches, d["finite_d_switches"])
        self.assertEqual(list(d), ["dim", "status", "message", "residual_norm", "sized", "error",
                                   "limit", "slope", "second_order", "order", "decomposition",
                                   "sources", "omitted",
                                   "uncertainty", "validity", "finite_d_switches",
                                   "bayes_optimal"])
        self.assertEqual(fd.bayes_optimal, d["bayes_optimal"])  # docs/finite_dim.md §21.16
        self.assertEqual(fd.uncertainty, d["validity"]["remainder"])  # docs/finite_dim.md §21.12
        self.assertIs(fd.valid, d["validity"]["valid"])
        self.assertTrue(fd.valid)  # D = 40 at the paper's point: corrections about 6% of the limit
        self.assertTrue(fd.omitted)
        # docs/finite_dim.md §21.17: algo at D, between the limit's algo and the error; mem and
        # struct not separated (NaN).
        limit = icl.solve(self.p).decomposition
        for e in ERRORS:
            algo = fd.decomposition[e]["algo"]
            self.assertTrue(limit[e]["algo"] < algo < fd.error[e])
            self.assertTrue(math.isnan(fd.decomposition[e]["mem"]))
            self.assertTrue(math.isnan(fd.decomposition[e]["struct"]))

    def test_sources_sum_to_error_minus_limit(self):
        # Each correction is slope / D, and error = limit + the sum of the corrections + the
        # channel's second order (docs/finite_dim.md §21.18), to rounding (nine small terms: 1e-12
        # leaves a wide margin over double precision).
        fd = self.fd
        for e in ERRORS:
            total = sum(s["correction"][e] for s in fd.sources.values()) + fd.second_order[e]
            self.assertLess(abs(total - (fd.error[e] - fd.limit[e])), 1e-12)
            for s in fd.sources.values():
                self.assertAlmostEqual(s["correction"][e], s["slope"][e] / 40, delta=1e-15)

    def test_switches_remove_their_sources(self):
        off = icl.solve_finite_dim(self.p, 40, sphere_queries=True, fixed_norm_tasks=True,
                                   assignment="balanced", gaussian_context=True)
        self.assertEqual(off.switches, {"sphere_queries": True, "fixed_norm_tasks": True,
                                        "assignment": "balanced", "gaussian_context": True})
        for name in ("query_norms", "task_norms", "task_counts", "context_mean",
                     "context_scalars"):
            self.assertEqual(off.sources[name]["correction"]["idg"], 0.0)
            self.assertNotEqual(self.fd.sources[name]["correction"]["idg"], 0.0)

    def test_pickles(self):
        back = pickle.loads(pickle.dumps(self.fd))
        self.assertIsInstance(back, icl.FiniteDimResult)
        # json.dumps: the NaN of a value not derived (mem, struct at D) compares equal as text.
        self.assertEqual(json.dumps(back.to_dict()), json.dumps(self.fd.to_dict()))
        self.assertEqual(back.error, self.fd.error)

    def test_bad_input_raises_invalid_params_naming_the_field(self):
        with self.assertRaises(icl.InvalidParams) as c:
            icl.solve_finite_dim(self.p, 1)
        self.assertEqual(c.exception.field, "dim")
        with self.assertRaises(ValueError) as c:  # the interpolation peak: N = D^2 at D = 2
            icl.solve_finite_dim(icl.Params(tau=1.01), 2)
        self.assertEqual(c.exception.field, "tau")
        # the ridgeless branch below it has a prediction (docs/finite_dim.md §21.10)
        self.assertTrue(icl.solve_finite_dim(icl.Params(tau=0.6), 40).converged)

    def test_a_failed_prediction_has_nan_values(self):
        # sigma = 1e5: the perturbed maps leave the saddle point's domain (the same point as the
        # CLI's exit-3 test); status and message say so.
        fd = icl.solve_finite_dim(icl.Params(sigma=1e5), 10)
        self.assertFalse(fd.converged)
        self.assertTrue(fd.message)
        for block in (fd.error, fd.limit, fd.slope):
            self.assertTrue(all(math.isnan(block[e]) for e in ERRORS))


class SweepFiniteDimTest(unittest.TestCase):
    def test_fd_columns_equal_solve_finite_dim_per_point(self):
        p, values = icl.Params(), [1.0, 2.0, 4.0]
        plain = icl.sweep(p, "alpha", values)
        with_fd = icl.sweep(p, "alpha", values, finite_dim=20)
        self.assertFalse(any(k.startswith("fd_") for k in plain))
        self.assertEqual(set(with_fd) - set(plain),
                         {"fd_tm", "fd_idg", "fd_odg", "fd_tm_algo", "fd_idg_algo", "fd_odg_algo",
                          "fd_bayes_idg", "fd_bayes_odg", "fd_valid"})
        for i, a in enumerate(values):
            p.alpha = a
            fd = icl.solve_finite_dim(p, 20)
            for e in ERRORS:
                self.assertEqual(with_fd["fd_" + e][i], fd.error[e])
                self.assertEqual(with_fd["fd_" + e + "_algo"][i], fd.decomposition[e]["algo"])
            self.assertEqual(with_fd["fd_bayes_idg"][i], fd.bayes_optimal["idg"])
            self.assertEqual(with_fd["fd_valid"][i], 1.0 if fd.valid else 0.0)

    def test_not_covered_points_are_nan_and_switches_need_finite_dim(self):
        # tau = 0.999 is the interpolation peak at D = 20 (N = 400 = D^2); 0.6 is covered
        r = icl.sweep(icl.Params(), "tau", [0.6, 0.999], method="letey", finite_dim=20)
        self.assertFalse(math.isnan(r["fd_idg"][0]))
        self.assertTrue(math.isnan(r["fd_idg"][1]))
        self.assertTrue(r["converged"].all())
        with self.assertRaises(icl.InvalidParams) as c:
            icl.sweep(icl.Params(), "alpha", [1.0], sphere_queries=True)
        self.assertEqual(c.exception.field, "sphere_queries")


if __name__ == "__main__":
    unittest.main()
