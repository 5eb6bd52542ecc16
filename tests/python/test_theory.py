"""icl_theory: Params, solve, sweep, phase_grid and the phase helpers (run with unittest)."""
import copy
import math
import pickle
import unittest

import numpy as np

import icl_theory as icl

QUANTITIES = ["tm", "idg", "odg", "tm_algo", "tm_mem", "tm_struct", "idg_algo", "idg_mem",
              "idg_struct", "odg_algo", "odg_mem", "odg_struct", "q", "m", "mbar", "qbar", "m0",
              "q0", "z", "e"]


def flat(sol):
    """The sweep columns of one Solution, by name."""
    d = {"tm": sol.error["tm"], "idg": sol.error["idg"], "odg": sol.error["odg"],
         "z": sol.z, "e": sol.e}
    for proto, comp in sol.decomposition.items():
        for piece, v in comp.items():
            d[proto + "_" + piece] = v
    d.update(sol.order)
    return d


class ParamsTest(unittest.TestCase):
    def test_defaults_are_the_papers(self):
        p = icl.Params()
        self.assertEqual((p.alpha, p.alpha_test, p.tau, p.kappa, p.rho, p.sigma, p.sigma_test,
                          p.lambda_), (2.0, -1.0, 2.25, 1.5, 0.9, 0.3, 0.0, 0.0))
        self.assertAlmostEqual(p.gamma, 1.5, places=15)
        self.assertEqual(p.effective_alpha_test, 2.0)
        self.assertAlmostEqual(p.nu, (1 + 0.3 ** 2) / 2, places=15)

    def test_gamma_lambda_and_names(self):
        p = icl.Params(kappa=2.0, gamma=1.5)
        self.assertAlmostEqual(p.tau, 3.0, places=14)
        p.gamma = 2.0
        self.assertAlmostEqual(p.tau, 4.0, places=14)
        q = icl.Params(**{"lambda": 0.25})
        self.assertEqual(q.lambda_, 0.25)
        self.assertEqual(getattr(q, "lambda"), 0.25)
        self.assertEqual(q.get("lambda"), 0.25)
        q.set("rho", 0.5)
        self.assertEqual(q.rho, 0.5)
        self.assertIn("gamma", icl.Params.names())
        with self.assertRaises(TypeError):
            icl.Params(alhpa=1.0)
        with self.assertRaises(TypeError):
            icl.Params(2.0)  # keyword arguments only

    def test_repr_pickle_copy_eq(self):
        p = icl.Params(alpha=3.5, rho=0.25, lambda_=1e-3)
        self.assertEqual(eval(repr(p), {"Params": icl.Params}), p)
        self.assertEqual(pickle.loads(pickle.dumps(p)), p)
        c = copy.copy(p)
        c.alpha = 1.0
        self.assertNotEqual(c, p)
        self.assertEqual(p.to_dict()["rho"], 0.25)

    def test_invalid_params_raise_value_error_naming_the_field(self):
        p = icl.Params(rho=1.5)
        with self.assertRaises(ValueError) as cm:
            p.validate()
        self.assertIn("rho", str(cm.exception))
        self.assertIsInstance(cm.exception, icl.InvalidParams)
        self.assertEqual(cm.exception.field, "rho")
        with self.assertRaisesRegex(ValueError, "^rho: "):
            icl.solve(p)
        with self.assertRaisesRegex(ValueError, "alpha"):
            icl.solve(icl.Params(alpha=float("nan")))
        with self.assertRaisesRegex(ValueError, "method"):
            icl.solve(icl.Params(), method="newton")
        with self.assertRaisesRegex(ValueError, "lambda|tau"):
            icl.Params(tau=0.5).validate_for_saddle_point()


    def test_tau_and_gamma_together_raise_naming_gamma(self):
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.Params(tau=2.0, gamma=1.5)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(cm.exception.field, "gamma")
        self.assertEqual(icl.Params(tau=3.0).tau, 3.0)
        self.assertAlmostEqual(icl.Params(gamma=2.0).tau, 3.0, places=14)

    def test_alpha_test_none_means_same_as_alpha(self):
        p = icl.Params(alpha=3.0, alpha_test=None)
        self.assertEqual(p.effective_alpha_test, 3.0)
        self.assertEqual(p, icl.Params(alpha=3.0))
        self.assertEqual(icl.Params(alpha=3.0, alpha_test=1.5).effective_alpha_test, 1.5)
        p.alpha_test = 0.5
        self.assertEqual(p.effective_alpha_test, 0.5)
        p.alpha_test = None
        self.assertEqual(p.effective_alpha_test, 3.0)
        self.assertEqual(p.to_dict()["alpha_test"], 3.0)

    def test_get_set_accept_lambda_(self):
        p = icl.Params(lambda_=0.5)
        self.assertEqual(p.get("lambda_"), 0.5)
        p.set("lambda_", 0.25)
        self.assertEqual(p.lambda_, 0.25)


NUMBERS = ["order", "error", "decomposition"]


def leaves(d):
    """Every number of a nested dict."""
    for v in d.values():
        if isinstance(v, dict):
            yield from leaves(v)
        else:
            yield v


class NotConvergedTest(unittest.TestCase):
    def check_all_nan(self, s):
        self.assertFalse(s.converged)
        for part in (s.order, s.error, s.decomposition):
            for v in leaves(part):
                self.assertIsInstance(v, float)
                self.assertTrue(math.isnan(v), f"{part}")
        self.assertTrue(math.isnan(s.z) and math.isnan(s.e))
        self.assertAlmostEqual(s.nu, s.params.nu, places=15)  # a function of params, kept
        d = s.to_dict()
        self.assertTrue(math.isnan(d["error"]["idg"]))

    def test_tiny_kappa_gives_nan_not_zeros(self):
        s = icl.solve(icl.Params(kappa=1e-300))
        self.check_all_nan(s)
        self.assertNotEqual(s.status, "converged")
        self.assertIn("NOT converged", repr(s))

    def test_unreachable_tolerance_keeps_the_last_iterate(self):
        ref = icl.solve(icl.Params())
        self.assertIsNone(ref.last_iterate)
        self.assertNotIn("last_iterate", ref.to_dict())
        s = icl.solve(icl.Params(), residual_tolerance=1e-300, max_iterations=3)
        self.check_all_nan(s)
        self.assertEqual(s.status, "not_converged")
        last = s.last_iterate
        self.assertEqual(set(last), {"order", "error", "decomposition", "z", "e"})
        self.assertEqual(s.to_dict()["last_iterate"], last)
        for part in NUMBERS:
            for v in leaves(last[part]):
                self.assertTrue(math.isfinite(v))
        self.assertAlmostEqual(last["error"]["idg"], ref.error["idg"], delta=1e-9)
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.solve(icl.Params(), start=s)  # NaN is no warm start
        self.assertEqual(cm.exception.field, "start")


class SolveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = icl.Params()
        cls.saddle = icl.solve(cls.p)
        cls.reduced = icl.solve(cls.p, method="reduced")

    def test_bayes_optimal_baseline(self):
        # docs/errors_phases.md §17: noisy test prompts shorter than the task rank leave an error
        # that no predictor removes; linear attention sits above it.
        p = icl.Params(alpha=2, tau=2.25, kappa=1.5, rho=0.9, sigma=0.3, sigma_test=0.3,
                       alpha_test=0.5)
        s = icl.solve(p)
        b = s.bayes_optimal
        self.assertEqual(set(b), {"idg", "odg"})
        self.assertEqual(s.to_dict()["bayes_optimal"], b)
        self.assertLess(b["idg"], s.error["idg"])
        self.assertLess(b["odg"], s.error["odg"])
        self.assertLess(b["idg"], b["odg"])
        self.assertGreater(b["idg"], 0.3 ** 2)  # at least the query label's noise
        noiseless = icl.solve(icl.Params(alpha_test=0.5, rho=0.9)).bayes_optimal
        self.assertAlmostEqual(noiseless["idg"], 1 - 0.5 / 0.9, places=14)  # undetermined share
        self.assertAlmostEqual(noiseless["odg"], 0.5, places=14)

    def test_converged_with_facts(self):
        s = self.saddle
        self.assertTrue(s.converged)
        self.assertEqual(s.status, "converged")
        self.assertLess(s.residual_norm, 1e-10)
        self.assertGreaterEqual(s.iterations, 0)  # 0 when the reduced start is already a root
        self.assertEqual(s.method, "saddle")
        self.assertEqual(s.regime, "task-rich")
        self.assertEqual(s.params, self.p)
        self.assertEqual(set(s.order), {"q", "m", "chi", "qbar", "chibar", "mbar", "m0", "q0",
                                        "qhat", "mhat", "chihat", "qbarhat", "chibarhat"})
        self.assertAlmostEqual(s.nu, self.p.nu, places=15)
        d = s.to_dict()  # the `icl solve --json` layout (theory::to_json)
        self.assertEqual(d["error"], s.error)
        self.assertEqual(d["order"], s.order)
        self.assertEqual(d["decomposition"], s.decomposition)
        self.assertEqual((d["status"], d["message"], d["iterations"]),
                         (s.status, s.message, s.iterations))
        self.assertEqual(d["params"], self.p.to_dict())
        # test_overlap is in the JSON only when set (docs/general_covariance.md §20)
        self.assertEqual(list(self.p.to_dict()),
                         [n for n in icl.Params.names() if n != "test_overlap"])
        self.assertEqual(d["effective_ridge"], -s.z)
        self.assertIn("converged", repr(s))

    def test_reduced_agrees_with_saddle(self):
        a, b = flat(self.saddle), flat(self.reduced)
        for k in QUANTITIES:
            self.assertTrue(math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-9),
                            f"{k}: saddle {a[k]!r} vs reduced {b[k]!r}")

    def test_saddle_from_a_far_start_agrees_with_reduced(self):
        # The default saddle start is the reduced solution itself; start far away instead so that
        # Ceres really iterates on the ten quadrature-based equations.
        far = icl.solve(icl.Params(alpha=6.0, sigma=0.8, kappa=3.0))
        s = icl.solve(self.p, start=far)
        self.assertTrue(s.converged)
        self.assertGreater(s.iterations, 0)
        a, b = flat(s), flat(self.reduced)
        for k in QUANTITIES:
            self.assertTrue(math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-9),
                            f"{k}: saddle {a[k]!r} vs reduced {b[k]!r}")

    def test_exact_moments_agree_with_quadrature(self):
        s = icl.solve(self.p, moments="exact")
        for k in ("tm", "idg", "odg"):
            self.assertAlmostEqual(s.error[k], self.saddle.error[k], delta=1e-9)

    def test_decomposition_sums_to_error(self):
        for proto, comp in self.saddle.decomposition.items():
            self.assertAlmostEqual(comp["algo"] + comp["mem"] + comp["struct"],
                                   self.saddle.error[proto], delta=1e-10)

    def test_warm_start_and_letey(self):
        w = icl.solve(icl.Params(alpha=2.1), start=self.saddle)
        self.assertTrue(w.converged)
        self.assertAlmostEqual(w.error["idg"],
                               icl.solve(icl.Params(alpha=2.1)).error["idg"], delta=1e-9)
        letey = icl.solve(self.p, method="letey")
        self.assertTrue(letey.converged)
        self.assertNotIn("chi", letey.order)  # ridgeless: not defined

    def test_errors_behave_physically(self):
        # A longer context lowers the in-distribution error; more noise raises it.
        self.assertLess(icl.solve(icl.Params(alpha=4.0)).error["idg"], self.saddle.error["idg"])
        self.assertGreater(icl.solve(icl.Params(sigma=0.6)).error["idg"], self.saddle.error["idg"])


class SweepTest(unittest.TestCase):
    def test_sweep_matches_individual_solves(self):
        p = icl.Params()
        values = [0.5, 1.0, 2.0, 4.0]
        out = icl.sweep(p, "alpha", values)
        self.assertTrue(np.array_equal(out["alpha"], values))
        self.assertEqual(out["converged"].dtype, np.bool_)
        self.assertTrue(out["converged"].all())
        self.assertTrue((out["residual"] < 1e-10).all())
        for i, a in enumerate(values):
            p.alpha = a
            ref = flat(icl.solve(p))
            for k in QUANTITIES:
                self.assertTrue(math.isclose(out[k][i], ref[k], rel_tol=1e-8, abs_tol=1e-9),
                                f"alpha={a} {k}: sweep {out[k][i]!r} vs solve {ref[k]!r}")

    def test_sweep_gamma_and_reduced(self):
        gammas = np.linspace(1.0, 3.0, 3)
        out = icl.sweep(icl.Params(), "gamma", gammas, method="reduced")
        self.assertEqual(out["tm"].shape, (3,))
        self.assertTrue(out["converged"].all())
        for i, g in enumerate(gammas):  # gamma sets tau = gamma * kappa
            ref = icl.solve(icl.Params(tau=g * 1.5), method="reduced")
            self.assertAlmostEqual(out["idg"][i], ref.error["idg"], delta=1e-12)

    def test_sweeps_in_python_threads(self):
        # The GIL is released inside sweep(): concurrent sweeps give the sequential results.
        import threading
        values = np.linspace(0.5, 4.0, 8)
        ref = [icl.sweep(icl.Params(sigma=s), "alpha", values)["idg"] for s in (0.1, 0.5)]
        got = [None, None]

        def run(k, s):
            got[k] = icl.sweep(icl.Params(sigma=s), "alpha", values)["idg"]
        threads = [threading.Thread(target=run, args=(k, s)) for k, s in enumerate((0.1, 0.5))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k in range(2):
            self.assertTrue(np.array_equal(got[k], ref[k]))

    def test_sweep_and_phase_grid_accept_lambda_(self):
        lambdas = [0.1, 0.2]
        out = icl.sweep(icl.Params(), "lambda_", lambdas, method="reduced")
        self.assertTrue(np.array_equal(out["lambda_"], lambdas))
        ref = icl.solve(icl.Params(lambda_=0.2), method="reduced")
        self.assertAlmostEqual(out["idg"][1], ref.error["idg"], delta=1e-12)
        grid = icl.phase_grid(icl.Params(), "lambda_", lambdas, "rho", [0.5], method="reduced")
        self.assertAlmostEqual(grid["idg"][1, 0],
                               icl.solve(icl.Params(lambda_=0.2, rho=0.5),
                                         method="reduced").error["idg"], delta=1e-12)

    def test_sweep_rejects_an_invalid_point(self):
        with self.assertRaisesRegex(ValueError, "rho"):
            icl.sweep(icl.Params(), "rho", [0.5, 1.5])
        with self.assertRaises(ValueError):
            icl.sweep(icl.Params(), "not_a_parameter", [1.0])

    def test_phase_grid(self):
        xs, ys = [0.5, 1.2], [0.3, 0.6, 0.9]
        out = icl.phase_grid(icl.Params(), "kappa", xs, "rho", ys, method="reduced", threads=2)
        self.assertEqual(out["idg"].shape, (2, 3))
        self.assertTrue(out["converged"].all())
        self.assertTrue(np.array_equal(out["kappa"][:, 0], xs))
        self.assertTrue(np.array_equal(out["rho"][0, :], ys))
        ref = icl.solve(icl.Params(kappa=0.5, rho=0.9), method="reduced")
        self.assertAlmostEqual(out["idg"][0, 2], ref.error["idg"], delta=1e-12)
        # regime: rho < kappa task-rich (0), rho > kappa task-poor (1)
        self.assertEqual(out["regime"][0, 2], 1)
        self.assertEqual(out["regime"][1, 0], 0)


class PhaseHelpersTest(unittest.TestCase):
    def test_regime_and_boundary(self):
        poor = icl.Params(kappa=0.5, rho=0.9)
        self.assertEqual(icl.regime(poor), "task-poor")
        self.assertEqual(icl.regime(icl.Params()), "task-rich")
        self.assertEqual(icl.regime(icl.Params(kappa=0.5, rho=0.5)), "boundary")
        self.assertEqual(icl.critical_rho(poor), 0.5)
        self.assertTrue(icl.has_transition(poor))
        self.assertFalse(icl.has_transition(icl.Params()))
        self.assertAlmostEqual(icl.atom_mass(poor), 1 - 0.5 / 0.9, places=15)
        self.assertEqual(icl.atom_mass(icl.Params()), 0.0)
        self.assertEqual(icl.interpolation_tau(), 1.0)


class BeyondThePaperTest(unittest.TestCase):
    """General task spectra and the shifted test protocol (docs/general_covariance.md §12, §20) from Python."""

    def test_task_spectrum_matches_the_cli_builders(self):
        spec = icl.power_law_spectrum(1.0, 4)
        self.assertEqual(len(spec), 4)
        self.assertAlmostEqual(sum(w * t for t, w in spec), 1.0, places=14)
        p = icl.Params(task_spectrum=spec)
        self.assertEqual(p.task_spectrum, spec)
        s = icl.solve(p)
        self.assertTrue(s.converged)
        self.assertEqual(s.to_dict()["params"]["task_spectrum"], [list(a) for a in spec])
        # The Bayes baseline is defined for general priors (docs/errors_phases.md §17.3).
        self.assertTrue(math.isfinite(s.bayes_optimal["idg"]))
        self.assertLess(s.bayes_optimal["idg"], s.error["idg"])

    def test_test_overlap_limits_and_solution_block(self):
        base = icl.solve(icl.Params())
        self.assertIsNone(base.test_shift)
        for c, ref in [(1.0, "idg"), (0.9, "odg")]:  # C = 1 is IDG, C = rho = 0.9 is ODG
            s = icl.solve(icl.Params(test_overlap=c))
            self.assertAlmostEqual(s.test_shift["error"], base.error[ref], places=11)
            self.assertEqual(s.test_shift["overlap"], c)
        s = icl.solve(icl.Params(test_overlap=0.0))
        d = s.test_shift["decomposition"]
        self.assertAlmostEqual(d["algo"] + d["mem"] + d["struct"], s.test_shift["error"], places=12)
        self.assertIn("shift", s.bayes_optimal)
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.solve(icl.Params(test_overlap=1.5))
        self.assertEqual(cm.exception.field, "test_overlap")

    def test_test_levels_and_vectorized_overlap(self):
        spec = icl.low_rank_plus_complement_spectrum(0.4, 0.2)
        s = icl.solve(icl.Params(task_spectrum=spec, kappa=0.8, lambda_=0.1,
                                 test_levels=[0.5, 4.0 / 3.0]))
        self.assertTrue(s.converged)
        self.assertTrue(math.isnan(s.test_shift["overlap"]))
        self.assertEqual(s.test_shift["levels"], [0.5, 4.0 / 3.0])
        cs = np.linspace(0, 1, 5)
        arr = icl.solve(icl.Params(), test_overlap=cs)
        for i, c in enumerate(cs):
            one = icl.solve(icl.Params(test_overlap=float(c)))
            self.assertEqual(arr["shift"][i], one.test_shift["error"])
        sw = icl.sweep(icl.Params(), "test_overlap", cs)
        self.assertTrue(np.allclose(sw["shift"], arr["shift"], rtol=1e-12))

    def test_params_and_solution_with_shift_pickle_and_repr(self):
        p = icl.Params(task_spectrum=icl.power_law_spectrum(1.0, 3), test_levels=[3.0, 0.0, 0.0])
        self.assertEqual(pickle.loads(pickle.dumps(p)), p)
        self.assertEqual(eval(repr(p), {"Params": icl.Params}), p)
        q = icl.Params(test_overlap=0.25)
        self.assertNotEqual(q, icl.Params())
        s = icl.solve(q)
        t = pickle.loads(pickle.dumps(s))
        self.assertEqual(t.test_shift, s.test_shift)
        self.assertEqual(t.bayes_optimal, s.bayes_optimal)


if __name__ == "__main__":
    unittest.main()
