"""icl_theory: results pickle (also through a multiprocessing Pool), vectorized solves
(SolutionArray), to_pandas() (skipped without pandas) and progress callbacks (run with
unittest)."""
import math
import multiprocessing
import pickle
import unittest
import warnings

import numpy as np

import icl_theory as icl

try:
    import pandas
except ImportError:
    pandas = None
try:
    import tqdm
except ImportError:
    tqdm = None


def same(a, b):
    """Equal bit for bit, NaN equal to NaN (nested dicts, lists, tuples, arrays, floats)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def solve_in_worker(p):
    """Top-level (picklable) worker: a Params in, a Solution out."""
    return icl.solve(p)


class PickleTest(unittest.TestCase):
    def assert_round_trip(self, obj, as_dict=lambda x: x):
        back = pickle.loads(pickle.dumps(obj))
        self.assertIs(type(back), type(obj))
        self.assertTrue(same(as_dict(back), as_dict(obj)))
        return back

    def test_solution_round_trip_bit_for_bit(self):
        s = icl.solve(icl.Params(alpha=3.5, rho=0.25, lambda_=1e-3))
        back = self.assert_round_trip(s, lambda x: x.to_dict())
        self.assertEqual(back.params, s.params)
        self.assertEqual((back.converged, back.status, back.iterations, back.method),
                         (s.converged, s.status, s.iterations, s.method))
        for method in ("reduced", "letey"):
            self.assert_round_trip(icl.solve(icl.Params(), method=method), lambda x: x.to_dict())

    def test_non_converged_solution_keeps_nan_and_last_iterate(self):
        s = icl.solve(icl.Params(), max_iterations=1, residual_tolerance=1e-300)
        self.assertFalse(s.converged)
        back = self.assert_round_trip(s, lambda x: x.to_dict())
        self.assertTrue(math.isnan(back.error["idg"]))
        self.assertTrue(same(back.last_iterate, s.last_iterate))
        self.assertEqual(back.message, s.message)

    def test_sweep_phase_vectorized_and_simulation_results(self):
        p = icl.Params()
        sw = self.assert_round_trip(icl.sweep(p, "alpha", [1.0, 2.0]), dict)
        self.assertEqual((sw.name, sw.params), ("alpha", p))
        ph = self.assert_round_trip(icl.phase_grid(p, "kappa", [0.5, 1.5], "rho", [0.3, 0.9]),
                                    dict)
        self.assertEqual((ph.x_name, ph.y_name), ("kappa", "rho"))
        a = icl.solve(p, alpha=[1.0, 2.0])
        b = self.assert_round_trip(a, lambda x: (x.shape, x.inputs, x._columns))
        self.assertEqual(b.params, p)
        sim = icl.simulate(p, dim=12, seeds=2, seed=3)
        back = self.assert_round_trip(sim, dict)
        self.assertTrue(same(back.comparison, sim.comparison))
        self.assertTrue(same(back.to_dict(), sim.to_dict()))
        self.assertEqual(back.theory.to_dict(), sim.theory.to_dict())

    def test_multiprocessing_pool_of_two(self):
        # Params go to the workers and Solutions come back by pickle (spawn: a fresh
        # interpreter per worker, as on macOS/Windows and in dask).
        params = [icl.Params(alpha=a) for a in (1.0, 2.0, 3.0, 4.0)]
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            got = pool.map(solve_in_worker, params)
        for p, s in zip(params, got):
            self.assertEqual(s.to_dict(), icl.solve(p).to_dict())


class VectorizedSolveTest(unittest.TestCase):
    def test_broadcast_shape_and_each_point_equals_the_scalar_solve(self):
        p = icl.Params()
        alpha = np.array([0.5, 2.0, 6.0])[:, None]
        rho = np.array([0.2, 0.9])
        a = icl.solve(p, alpha=alpha, rho=rho, lambda_=1e-3)
        self.assertIsInstance(a, icl.SolutionArray)
        self.assertEqual(a.shape, (3, 2))
        self.assertEqual(a.error["idg"].shape, (3, 2))
        self.assertEqual(a.converged.dtype, bool)
        self.assertEqual(sorted(a.inputs), ["alpha", "lambda_", "rho"])
        for i in range(3):
            for j in range(2):
                s = icl.solve(icl.Params(alpha=alpha[i, 0], rho=rho[j], lambda_=1e-3))
                self.assertEqual(a.converged[i, j], s.converged)
                # Same computation (each point from its own closed form): bit for bit.
                self.assertEqual(a.error["idg"][i, j], s.error["idg"])
                self.assertEqual(a.decomposition["odg"]["struct"][i, j],
                                 s.decomposition["odg"]["struct"])
                self.assertEqual(a.order["q0"][i, j], s.order["q0"])
                self.assertEqual(a["z"][i, j], s.z)
                self.assertEqual(a.regime[i, j], s.regime)

    def test_threads_do_not_change_the_result(self):
        kw = dict(alpha=np.linspace(0.5, 4, 7), rho=np.linspace(0.1, 1, 5)[:, None])
        one = icl.solve(icl.Params(), threads=1, **kw)
        two = icl.solve(icl.Params(), threads=2, **kw)
        for k in one.columns():
            self.assertTrue(same(one[k], two[k]), k)

    def test_non_converged_points_are_nan(self):
        a = icl.solve(icl.Params(), kappa=[1.5, 1e-300])
        self.assertEqual(a.converged.tolist(), [True, False])
        self.assertTrue(math.isfinite(a.error["idg"][0]))
        for k in a.columns():
            if k not in ("converged", "residual", "iterations", "regime"):
                self.assertTrue(math.isnan(a[k][1]), k)

    def test_gamma_alpha_test_and_scalars(self):
        p = icl.Params(kappa=2.0)
        a = icl.solve(p, gamma=[1.0, 1.5], kappa=[2.0, 3.0])  # gamma applies after kappa
        self.assertEqual(a.error["tm"][1], icl.solve(icl.Params(kappa=3.0, gamma=1.5)).error["tm"])
        b = icl.solve(p, alpha=[1.0, 2.0], alpha_test=None)
        self.assertEqual(b.error["idg"][0], icl.solve(icl.Params(kappa=2.0, alpha=1.0)).error["idg"])
        s = icl.solve(p, alpha=3.0)  # all scalars: a Solution
        self.assertIsInstance(s, icl.Solution)
        self.assertEqual(s.params.alpha, 3.0)

    def test_bad_input(self):
        with self.assertRaisesRegex(icl.InvalidParams, "rho") as cm:
            icl.solve(icl.Params(), rho=[0.5, 1.5])
        self.assertEqual(cm.exception.field, "rho")
        self.assertIn("point 1", str(cm.exception))
        with self.assertRaises(icl.InvalidParams) as cm:
            icl.solve(icl.Params(), tau=[1.0, 2.0], gamma=1.0)
        self.assertEqual(cm.exception.field, "gamma")
        with self.assertRaises(ValueError):  # shapes that do not broadcast
            icl.solve(icl.Params(), alpha=[1.0, 2.0], rho=[0.1, 0.2, 0.3])
        with self.assertRaises(TypeError):
            icl.solve(icl.Params(), alhpa=[1.0, 2.0])


@unittest.skipIf(pandas is None, "pandas is not installed (optional; Debian: python3-pandas)")
class PandasTest(unittest.TestCase):
    def test_sweep_phase_vectorized_simulation(self):
        p = icl.Params()
        sw = icl.sweep(p, "alpha", [1.0, 2.0, 3.0])
        df = sw.to_pandas()
        self.assertEqual(list(df.columns[:2]), ["alpha", "converged"])
        self.assertEqual(len(df), 3)
        self.assertTrue(same(df["idg"].to_numpy(), sw["idg"]))
        ph = icl.phase_grid(p, "kappa", [0.5, 1.5], "rho", [0.3, 0.6, 0.9])
        dfp = ph.to_pandas()
        self.assertEqual(len(dfp), 6)
        self.assertEqual(list(dfp.columns[:2]), ["kappa", "rho"])
        # long format, x slowest: row 1 is (kappa 0.5, rho 0.6)
        self.assertEqual((dfp["kappa"][1], dfp["rho"][1]), (0.5, 0.6))
        self.assertEqual(dfp["regime"][1], "task-poor")
        a = icl.solve(p, alpha=[1.0, 2.0], rho=[[0.3], [0.9]])
        dfa = a.to_pandas()
        self.assertEqual(len(dfa), 4)
        self.assertTrue(same(dfa["idg"].to_numpy(), a.error["idg"].ravel()))
        sim = icl.simulate(p, dim=12, seeds=2, seed=3)
        dfs = sim.to_pandas()
        self.assertEqual(dfs.loc["error.idg", "mean"], sim["error.idg"][0])
        self.assertEqual(dfs.loc["error.idg", "theory"], sim.theory.error["idg"])


@unittest.skipIf(pandas is None, "SKIP: pandas is not installed")
class TidyFramesTest(unittest.TestCase):
    """Every to_pandas() carries every input parameter of its points; optimize and boundary
    have one; the Bayes-optimal and finite-D columns sit next to the D -> infinity theory."""

    NAMES = ("alpha", "alpha_test", "tau", "gamma", "kappa", "rho", "sigma", "sigma_test",
             "lambda")

    def has_every_parameter(self, frame, varied=()):
        for name in self.NAMES:
            self.assertTrue(name in frame.columns or name + "_" in frame.columns, name)
        for name in varied:
            self.assertGreater(frame[name].nunique(), 1, name)

    def test_sweeps_concatenate_without_losing_a_parameter(self):
        frames = [icl.sweep(icl.Params(alpha=a), "rho", [0.5, 0.9]).to_pandas() for a in (1, 4)]
        both = pandas.concat(frames)
        self.has_every_parameter(both, varied=("alpha", "rho"))
        self.assertEqual(sorted(both["alpha"].unique()), [1.0, 4.0])
        # alpha_test follows alpha (it is not given), as the library's Params says per point.
        self.assertTrue((both["alpha_test"] == both["alpha"]).all())
        tau = icl.sweep(icl.Params(), "tau", [1.5, 3.0]).to_pandas()
        self.assertTrue(np.allclose(tau["gamma"], tau["tau"] / tau["kappa"]))  # per point
        lam = icl.sweep(icl.Params(), "lambda_", [0.1, 1.0]).to_pandas()
        self.has_every_parameter(lam, varied=("lambda_",))
        self.assertNotIn("lambda", lam.columns)  # the varied one under the caller's name

    def test_grids_and_vectorized_solves(self):
        ph = icl.phase_grid(icl.Params(), "alpha", [1.0, 2.0], "tau", [2.0, 3.0]).to_pandas()
        self.has_every_parameter(ph, varied=("alpha", "tau", "gamma", "alpha_test"))
        a = icl.solve(icl.Params(sigma=0.3), alpha=[1.0, 2.0, 4.0], finite_dim=30)
        df = a.to_pandas()
        self.has_every_parameter(df, varied=("alpha",))
        for col in ("idg", "bayes_idg", "bayes_odg", "fd_tm", "fd_idg", "fd_odg", "fd_valid"):
            self.assertIn(col, df.columns)
        for k, alpha in enumerate([1.0, 2.0, 4.0]):  # each point's prediction is solve_finite_dim
            fd = icl.solve_finite_dim(icl.Params(alpha=alpha, sigma=0.3), 30)
            self.assertEqual(df["fd_idg"][k], fd.error["idg"])
            self.assertEqual(df["fd_valid"][k], 1.0 if fd.valid else 0.0)
            self.assertEqual(df["bayes_idg"][k], icl.solve(icl.Params(alpha=alpha, sigma=0.3))
                             .bayes_optimal["idg"])
        one = icl.solve(icl.Params(), finite_dim=40)  # scalars too: a SolutionArray of shape ()
        self.assertEqual(one.shape, ())
        self.assertEqual(float(one["fd_idg"]), icl.solve_finite_dim(icl.Params(), 40).error["idg"])

    def test_optimize_and_boundary(self):
        o = icl.optimize(icl.Params(), "lambda", minimize="idg")
        self.assertIsInstance(o, dict)  # still the `icl optimize --json` object
        row = o.to_pandas()
        self.assertEqual(len(row), 1)
        self.assertEqual(row["argmin"][0], o["argmin"])
        self.has_every_parameter(row)
        q = icl.Params(kappa=0.5, sigma=0, lambda_=0)
        b = icl.boundary(q, "rho", "alpha", [10, 100], criterion="steepest", quantity="idg",
                         range=(0.05, 1))
        frame = b.to_pandas()
        self.assertEqual(list(frame["rho"]), [pt["rho"] for pt in b["points"]])
        self.assertEqual(frame["derivative"][0], "d idg / d rho")
        self.has_every_parameter(frame, varied=("alpha", "rho", "alpha_test"))


class OptionalPackagesMissingTest(unittest.TestCase):
    """Without pandas / tqdm (hidden through sys.modules) the messages say how to install them."""

    def test_to_pandas_without_pandas(self):
        import unittest.mock
        sw = icl.sweep(icl.Params(), "alpha", [1.0])
        with unittest.mock.patch.dict("sys.modules", {"pandas": None}):
            with self.assertRaisesRegex(ImportError, "python3-pandas"):
                sw.to_pandas()

    def test_progress_without_tqdm(self):
        import io
        import unittest.mock
        with unittest.mock.patch.dict("sys.modules", {"tqdm": None}):
            with self.assertRaisesRegex(ImportError, "python3-tqdm"):
                icl.sweep(icl.Params(), "alpha", [1.0], progress="tqdm")
            err = io.StringIO()
            with unittest.mock.patch("sys.stderr", err):  # True: a plain stderr line instead
                icl.sweep(icl.Params(), "alpha", [1.0, 2.0], progress=True)
            self.assertIn("2/2 point", err.getvalue())


class ProgressTest(unittest.TestCase):
    def test_callback_sees_every_point_in_order(self):
        calls = []
        icl.sweep(icl.Params(), "alpha", [1.0, 2.0, 3.0],
                  progress=lambda d, n, w: calls.append((d, n, w)))
        self.assertEqual(calls, [(1, 3, "point"), (2, 3, "point"), (3, 3, "point")])
        calls.clear()
        icl.solve(icl.Params(), alpha=np.linspace(1, 3, 5), threads=2,
                  progress=lambda d, n, w: calls.append(d))
        self.assertEqual(calls, [1, 2, 3, 4, 5])  # serialized, increasing
        calls.clear()
        icl.simulate(icl.Params(), dim=10, seeds=3, seed=1, threads=1,
                     progress=lambda d, n, w: calls.append((d, n, w)))
        self.assertEqual([c for c in calls if c[2] == "seed"],
                         [(1, 3, "seed"), (2, 3, "seed"), (3, 3, "seed")])
        # Within each seed its CG iterations, a stage of their own (docs/simulation.md §13.4).
        cg = [c for c in calls if c[2] != "seed"]
        self.assertEqual({c[2] for c in cg}, {f"seed {k} CG iteration" for k in range(3)})
        self.assertTrue(all(d <= n for d, n, _ in cg))

    def test_an_exception_in_the_callback_stops_the_call_and_propagates(self):
        class Stop(Exception):
            pass

        seen = []

        def stop_at_2(done, total, what):
            if "CG iteration" in what:  # a simulation's seeds report their CG iterations too
                return
            seen.append(done)
            if done == 2:
                raise Stop()

        with self.assertRaises(Stop):
            icl.sweep(icl.Params(), "alpha", np.linspace(1, 3, 50), progress=stop_at_2)
        self.assertEqual(seen, [1, 2])  # cancelled at once: no further point reported
        seen.clear()
        with self.assertRaises(Stop):
            icl.solve(icl.Params(), alpha=np.linspace(1, 3, 50), threads=2, progress=stop_at_2)
        self.assertEqual(seen, [1, 2])
        seen.clear()
        with self.assertRaises(Stop):  # worker threads: no new seed after the cancelling report
            icl.simulate(icl.Params(), dim=10, seeds=4, seed=1, progress=stop_at_2)
        self.assertEqual(seen, [1, 2])

    def test_ctrl_c_in_simulate_returns_the_finished_seeds(self):
        # KeyboardInterrupt from the progress report (Ctrl-C lands there): the seeds in progress
        # finish and the finished ones, a prefix 0..k-1, are the result, status 'interrupted'
        # with a warning; they equal a run of k seeds bit for bit (seed k is derive_seed(seed, k)).
        def interrupt_at_2(done, total, what):
            if what == "seed" and done == 2:
                raise KeyboardInterrupt

        for threads in (1, 2):
            with self.assertWarnsRegex(UserWarning, r"interrupted after \d+ of 6 seeds"):
                r = icl.simulate(icl.Params(), dim=10, seeds=6, seed=1, threads=threads,
                                 progress=interrupt_at_2)
            self.assertEqual(r.status, "interrupted")
            k = r.to_dict()["seeds_finished"]
            self.assertIn(k, (2, 3))  # 2 reported, and with 2 threads possibly one in progress
            full = icl.simulate(icl.Params(), dim=10, seeds=k, seed=1)
            self.assertEqual(r["error.idg"], full["error.idg"])
            self.assertEqual(repr(r.comparison), repr(full.comparison))  # NaN-safe

        # Ctrl-C at the last seed's report: every seed finished, the result is complete.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            last = icl.simulate(icl.Params(), dim=10, seeds=2, seed=1, threads=1,
                                progress=interrupt_at_2)
        self.assertEqual(last.status, "converged")

    def test_sweep_simulations_resume_from_a_checkpoint(self):
        # checkpoint=PATH keeps each point's simulation in PATH.partial/ (the layout of
        # `icl sweep --out PATH --resume`); after an interrupt the same call continues and
        # gives the uninterrupted result; other options are refused naming 'checkpoint'.
        import os
        import tempfile
        args = dict(simulate=True, dim=8, seeds=2, seed=5)
        values = [1.0, 2.0, 3.0]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "alpha_sweep")
            folder = path + ".partial"
            calls = []

            def interrupt_at_second_simulation(done, total, what):
                if what == "simulation":
                    calls.append(done)
                    if len(calls) == 2:
                        raise KeyboardInterrupt

            with self.assertRaises(KeyboardInterrupt):
                icl.sweep(icl.Params(), "alpha", values, checkpoint=path,
                          progress=interrupt_at_second_simulation, **args)
            kept = sorted(f for f in os.listdir(folder) if f.startswith("unit_"))
            self.assertEqual(kept, ["unit_point_0.json", "unit_point_1.json"])
            with self.assertRaises(icl.InvalidParams) as c:
                icl.sweep(icl.Params(), "alpha", values, checkpoint=path, **dict(args, seeds=3))
            self.assertEqual(c.exception.field, "checkpoint")
            self.assertIn("seeds", str(c.exception))
            resumed = icl.sweep(icl.Params(), "alpha", values, checkpoint=path, **args)
            self.assertFalse(os.path.exists(folder))  # complete: removed
            plain = icl.sweep(icl.Params(), "alpha", values, **args)
            for k in plain:
                np.testing.assert_array_equal(resumed[k], plain[k], err_msg=k)
            with self.assertRaises(icl.InvalidParams) as c:
                icl.sweep(icl.Params(), "alpha", values, checkpoint=path)  # no simulation
            self.assertEqual(c.exception.field, "checkpoint")

    def test_ctrl_c_interrupts_a_long_call(self):
        # A vectorized solve of 10^6 points (~30 s) in a child; SIGINT once it is computing must
        # end it with KeyboardInterrupt within 20 ms (checked even without a callback).
        # The 60 s limit only catches a hang; it is not a speed assertion.
        import os
        import signal
        import subprocess
        import sys
        code = ("import sys, numpy as np, icl_theory as icl\n"
                "print('start', flush=True)\n"
                "icl.solve(icl.Params(), alpha=np.linspace(0.5, 4, 10**6), threads=2)\n"
                "print('finished', flush=True)\n")
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        try:
            self.assertEqual(child.stdout.readline().strip(), "start")
            import time
            time.sleep(1.0)  # inside the solve
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        self.assertNotIn("finished", out)
        self.assertIn("KeyboardInterrupt", err)

    def test_bad_progress_argument(self):
        with self.assertRaises(TypeError):
            icl.sweep(icl.Params(), "alpha", [1.0], progress="bar")

    @unittest.skipIf(tqdm is None, "tqdm is not installed (optional; Debian: python3-tqdm)")
    def test_tqdm(self):
        import io
        import unittest.mock
        err = io.StringIO()
        with unittest.mock.patch("sys.stderr", err):
            icl.sweep(icl.Params(), "alpha", [1.0, 2.0, 3.0], progress="tqdm")
        self.assertIn("3/3", err.getvalue())


if __name__ == "__main__":
    unittest.main()
