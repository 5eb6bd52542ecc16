"""One home per rule (issue "One home per rule"): every input the command line refuses, Python
refuses too, naming the same field. Each row sends one bad input through both front ends: the
CLI must exit 2 with a one-line message that names the field (as the library's
'invalid parameter <field>:' or as the flag --<field with dashes>), and Python must raise
icl_theory.InvalidParams whose .field is that field. Run with unittest; ICL_EXE is the icl
program (the test is skipped without it)."""
import os
import subprocess
import unittest

import icl_theory as icl

ICL = os.environ.get("ICL_EXE", "")
P = icl.Params


def spectrum_params(**kw):
    return P(task_spectrum="powerlaw:1:8", **kw)


# (CLI arguments, Python call, field). The Python call is a function of no arguments.
ROWS = [
    # Params::validate (docs/model.md §1.6), through theory::ParamInput on both sides.
    ("solve --tau 0.5", lambda: icl.solve(P(tau=0.5)), "lambda"),
    ("solve --method letey --lambda 0.1", lambda: icl.solve(P(lambda_=0.1), method="letey"),
     "lambda"),
    ("solve --task-spectrum 1:0.5,2:0.6", lambda: icl.solve(P(task_spectrum=[(1, 0.5), (2, 0.6)])),
     "task_spectrum"),
    ("solve --task-spectrum powerlaw:-1:3", lambda: P(task_spectrum="powerlaw:-1:3"),
     "task_spectrum"),
    ("solve --rho 0.5 --task-spectrum powerlaw:1:10",
     lambda: P(task_spectrum="powerlaw:1:10", rho=0.5), "rho"),
    ("solve --rho 0.5 --task-spectrum 0.5:0.5,1.5:0.5",
     lambda: P(task_spectrum=[(0.5, 0.5), (1.5, 0.5)], rho=0.5), "rho"),
    ("solve --test-overlap 0.5 --rho 1", lambda: icl.solve(P(test_overlap=0.5, rho=1.0)),
     "test_overlap"),
    ("solve --task-spectrum powerlaw:1:4 --test-overlap 0.5",
     lambda: icl.solve(spectrum_params(test_overlap=0.5)), "test_overlap"),
    ("solve --task-spectrum powerlaw:1:2 --test-levels 1,2,3",
     lambda: icl.solve(spectrum_params(test_levels=[1, 2, 3])), "test_levels"),
    # Varying rho under a spectrum (Params::set) refuses in every entry.
    ("sweep --vary rho=0.2:0.8:3 --task-spectrum powerlaw:1:4",
     lambda: icl.sweep(spectrum_params(), "rho", [0.2, 0.5]), "rho"),
    ("phase --x rho=0.2:0.8:3 --y kappa=0.5:1:2 --task-spectrum powerlaw:1:4",
     lambda: icl.phase_grid(spectrum_params(), "rho", [0.2], "kappa", [0.5]), "rho"),
    ("phase --x kappa=0.5:1:2 --y rho=0.2:0.8:2 --task-spectrum powerlaw:1:4",
     lambda: icl.solve(spectrum_params(), rho=[0.3, 0.6]), "rho"),
    # The two axes of a grid (theory::phase_grid).
    ("phase --x rho=0.2:0.8:3 --y rho=0.3:0.9:3",
     lambda: icl.phase_grid(P(), "rho", [0.2, 0.5], "rho", [0.3, 0.6]), "y_name"),
    ("phase --x gamma=1:2:2 --y kappa=0.5:1:2",
     lambda: icl.phase_grid(P(), "gamma", [1, 2], "kappa", [0.5, 1]), "y_name"),
    ("phase --x tau=1.5:2:2 --y gamma=1:2:2",
     lambda: icl.phase_grid(P(), "tau", [1.5, 2], "gamma", [1, 2]), "y_name"),
    # The finite-D prediction and its switches (theory::finite_dim_request).
    ("solve --sphere-queries", lambda: icl.sweep(P(), "alpha", [1], sphere_queries=True),
     "sphere_queries"),
    ("solve --assignment balanced", lambda: icl.sweep(P(), "alpha", [1], assignment="balanced"),
     "assignment"),
    ("solve --finite-dim 40 --assignment magic",
     lambda: icl.solve_finite_dim(P(), 40, assignment="magic"), "assignment"),
    ("solve --method letey --tau 0.6 --finite-dim 40",
     lambda: icl.solve_finite_dim(P(tau=0.6), 40), "lambda"),
    # The simulator (SimOptions::validate).
    ("simulate --dim 30 --seeds 2 --lambda 0 --tau 0.5",
     lambda: icl.simulate(P(tau=0.5), dim=30, seeds=2), "lambda"),
    ("simulate --dim 50 --seeds 1 --solver direct",
     lambda: icl.simulate(P(), dim=50, seeds=1, solver="direct"), "solver"),
    ("simulate --dim 10 --seeds 1 --odg subspace --task-spectrum powerlaw:1:4",
     lambda: icl.simulate(spectrum_params(), dim=10, seeds=1, odg="subspace"), "odg"),
    ("simulate --dim 10 --seeds 1 --gaussian-context --sampler direct",
     lambda: icl.simulate(P(), dim=10, seeds=1, gaussian_context=True, sampler="direct"),
     "gaussian_context"),
    ("simulate --dim 2001 --seeds 1", lambda: icl.simulate(P(), dim=2001, seeds=1), "dim"),
    ("simulate --dim 10 --seeds 0", lambda: icl.simulate(P(), dim=10, seeds=0), "seeds"),
    # A sweep's simulation is validated at every point before any work (SweepOptions::validate).
    ("sweep --vary lambda=0:0.1:2 --tau 0.5 --simulate --dim 10 --seeds 1",
     lambda: icl.sweep(P(tau=0.5), "lambda_", [0, 0.1], simulate=True, dim=10, seeds=1),
     "lambda"),
    ("sweep --vary alpha=1:2:2 --shard 3/2", None, "shard"),
]


def cli(args):
    return subprocess.run([ICL] + args.split(), capture_output=True, text=True, timeout=120)


@unittest.skipUnless(ICL and os.path.exists(ICL), "needs ICL_EXE (the icl program)")
class FrontEndParityTest(unittest.TestCase):
    def test_every_refused_input_is_refused_by_both_naming_the_field(self):
        for args, call, field in ROWS:
            with self.subTest(cli=args, field=field):
                r = cli(args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                flag = "--" + field.replace("_", "-")
                self.assertTrue(f"invalid parameter {field}:" in r.stderr or flag in r.stderr,
                                r.stderr)
                if call is None:  # no Python equivalent (a CLI syntax)
                    continue
                with self.assertRaises(icl.InvalidParams) as ctx:
                    call()
                self.assertEqual(ctx.exception.field, field, str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
