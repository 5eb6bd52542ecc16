"""One home per rule (issue "One home per rule"): every input the command line refuses, Python
refuses too, naming the same field. Each row sends one bad input through both front ends: the
CLI must exit 2 with a one-line message that names the field (as the library's
'invalid parameter <field>:' or as the flag --<field with dashes>), and Python must raise
icl_theory.InvalidParams whose .field is that field. Run with unittest; ICL_EXE is the icl
program (the test is skipped without it)."""
import math
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
    ("solve --method letey --tau 1.01 --finite-dim 2",  # the interpolation peak: N = D^2
     lambda: icl.solve_finite_dim(P(tau=1.01), 2), "tau"),
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
    ("simulate --dim 10 --seeds 1 --seed -1", lambda: icl.simulate(P(), dim=10, seeds=1, seed=-1),
     "seed"),
    # A sweep's simulation is validated at every point before any work (SweepOptions::validate).
    ("sweep --vary lambda=0:0.1:2 --tau 0.5 --simulate --dim 10 --seeds 1",
     lambda: icl.sweep(P(tau=0.5), "lambda_", [0, 0.1], simulate=True, dim=10, seeds=1),
     "lambda"),
    ("sweep --vary alpha=1:2:2 --shard 3/2", None, "shard"),
    ("sweep --vary beta=1:2:2", lambda: icl.sweep(P(), "beta", [1, 2]), "name"),
    ("phase --x beta=1:2:2 --y rho=0.2:0.5:2",
     lambda: icl.phase_grid(P(), "beta", [1, 2], "rho", [0.2, 0.5]), "x_name"),
    ("simulate --dim 10 --seeds 1 --threads 300",
     lambda: icl.simulate(P(), dim=10, seeds=1, threads=300), "threads"),
    ("phase --x rho=0.2:0.5:2 --y kappa=1:2:2 --threads 300",
     lambda: icl.phase_grid(P(), "rho", [0.2, 0.5], "kappa", [1, 2], threads=300), "threads"),
    # optimize and boundary (OptimizeOptions/BoundaryOptions::validate, docs/errors_phases.md
    # §18-§19).
    ("optimize --over beta", lambda: icl.optimize(P(), "beta"), "over"),
    ("optimize --over lambda --minimize foo", lambda: icl.optimize(P(), "lambda", minimize="foo"),
     "objective"),
    ("optimize --over lambda --minimize shift",
     lambda: icl.optimize(P(), "lambda", minimize="shift"), "objective"),
    ("optimize --over lambda --range -1:1", lambda: icl.optimize(P(), "lambda", range=(-1, 1)),
     "lo"),
    ("optimize --over lambda --range 1:0.5", lambda: icl.optimize(P(), "lambda", range=(1, 0.5)),
     "hi"),
    ("optimize --over rho --range 0.1:2", lambda: icl.optimize(P(), "rho", range=(0.1, 2)), "hi"),
    ("optimize --over lambda --scan-points 2",
     lambda: icl.optimize(P(), "lambda", scan_points=2), "scan_points"),
    ("optimize --over rho --task-spectrum powerlaw:1:8",
     lambda: icl.optimize(spectrum_params(), "rho"), "rho"),
    ("boundary --x rho=0.1:1 --y alpha=1:2:2 --steepest foo",
     lambda: icl.boundary(P(), "rho", "alpha", [1, 2], criterion="steepest", quantity="foo"),
     "quantity"),
    ("boundary --x rho=0.1:1 --y rho=0.1:0.2:2 --steepest idg",
     lambda: icl.boundary(P(), "rho", "rho", [0.1, 0.2], criterion="steepest"), "y"),
    ("boundary --x beta=0.1:1 --y alpha=1:2:2 --steepest idg",
     lambda: icl.boundary(P(), "beta", "alpha", [1, 2], criterion="steepest"), "x"),
    ("boundary --x rho=0.5:0.1 --y alpha=1:2:2 --steepest idg",
     lambda: icl.boundary(P(), "rho", "alpha", [1, 2], criterion="steepest", range=(0.5, 0.1)),
     "hi"),
    ("boundary --x lambda=0:1 --log-x --y alpha=1:2:2 --steepest idg",
     lambda: icl.boundary(P(), "lambda_", "alpha", [1, 2], criterion="steepest", range=(0, 1),
                          log_x=True), "log_x"),
    ("boundary --x rho=0.1:1 --y alpha=-1:2:2 --steepest idg",
     lambda: icl.boundary(P(), "rho", "alpha", [-1, 2], criterion="steepest"), "alpha"),
    ("boundary --x rho=0.1:1 --y alpha=1:2:2 --level idg=inf",
     lambda: icl.boundary(P(), "rho", "alpha", [1, 2], criterion="level", level=math.inf),
     "level"),
    # The rank-1 patch (the options' validate(), docs/patch.md §2, §14).
    ("patch check --d 0", lambda: icl.patch_check(d=0), "d"),
    ("patch check --layers 0", lambda: icl.patch_check(layers=0), "layers"),
    ("patch check --heads 0", lambda: icl.patch_check(heads=0), "heads"),
    ("patch check --kind lstm", lambda: icl.patch_check(kind="lstm"), "kind"),
    ("patch check --block prenorm", lambda: icl.patch_check(block="prenorm"), "block"),
    ("patch check --norm batchnorm", lambda: icl.patch_check(norm="batchnorm"), "norm"),
    ("patch check --block plain --norm rmsnorm",
     lambda: icl.patch_check(block="plain", norm="rmsnorm"), "norm"),
    ("patch check --mlp swiglu --mlp-depth 1",
     lambda: icl.patch_check(mlp="swiglu", mlp_depth=1), "mlp_depth"),
    ("patch check --context 0", lambda: icl.patch_check(context=0), "context"),
    ("patch check --pos 99 --context 5", lambda: icl.patch_check(pos=99, context=5), "pos"),
    ("patch check --chunk 9:3", lambda: icl.patch_check(chunk=(9, 3)), "chunk"),
    ("patch check --tol 0", lambda: icl.patch_check(tol=0), "tol"),
    ("patch check --weights /nonexistent/w.txt",
     lambda: icl.patch_check(weights="/nonexistent/w.txt"), "weights"),
    ("patch dynamics --context 1", lambda: icl.patch_dynamics(context=1), "context"),
    ("patch dynamics --mlp mish", lambda: icl.patch_dynamics(mlp="mish"), "mlp"),
    # The softmax check (SoftmaxOptions::validate; no Python binding: the library's field).
    ("softmax --dim 8 --seeds 1 --epochs 0", None, "epochs"),
    ("softmax --dim 8 --seeds 1 --attn-dim 0", None, "attn_dim"),
    # The test-time iteration (theory::CotParams / CotOptions::validate, the simulator's options).
    ("cot --tau 0.9", lambda: icl.cot(tau=0.9), "tau"),
    ("cot --alpha -1", lambda: icl.cot(alpha=-1.0), "alpha"),
    ("cot --sigma -0.5", lambda: icl.cot(sigma=-0.5), "sigma"),
    ("cot --lambda 0.1", lambda: icl.cot(lambda_=0.1), "lambda"),
    ("cot --steps -1", lambda: icl.cot(steps=-1), "steps"),
    ("cot --max-bits 100", lambda: icl.cot(max_bits=100), "max_bits"),
    ("cot --simulate --seeds 0", lambda: icl.cot(simulate=True, seeds=0), "seeds"),
    ("cot --simulate --test-tasks 0", lambda: icl.cot(simulate=True, test_tasks=0), "test_tasks"),
    ("cot --phase --x beta=1:2:2 --y tau=2:3:2", None, "x"),
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
