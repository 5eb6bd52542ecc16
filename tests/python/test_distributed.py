"""icl_theory.distributed: a simulation sweep on a dask LocalCluster (two worker processes on
the loopback interface) equals `icl sweep --simulate` (unsharded) bit for bit. Skipped when
dask.distributed is not installed or ICL_EXE (the icl program) is not given."""
import csv
import math
import os
import subprocess
import tempfile
import time
import unittest

import icl_theory as icl

try:
    import distributed
except ImportError:
    distributed = None

ICL_EXE = os.environ.get("ICL_EXE")

# A small sweep (5 points at D = 12, 3 seeds: well under a second of simulation) across the
# phase transition rho = kappa of the default point, so both regimes are simulated.
SWEEP = dict(name="rho", start=0.5, stop=1.0, count=5, dim=12, seeds=3, seed=7)


def read_tsv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, body = rows[0], rows[1:]
    return {c: [float(r[i]) for r in body] for i, c in enumerate(header)}


@unittest.skipIf(distributed is None,
                 "dask.distributed is not installed (optional; Debian: python3-distributed)")
@unittest.skipIf(not ICL_EXE, "ICL_EXE (the icl program) is not set")
class DistributedSweepTest(unittest.TestCase):
    def test_equals_the_cli_sweep_bit_for_bit(self):
        s = SWEEP
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sweep.tsv")
            subprocess.run([ICL_EXE, "sweep", "--vary",
                            f"{s['name']}={s['start']}:{s['stop']}:{s['count']}", "--simulate",
                            "--dim", str(s["dim"]), "--seeds", str(s["seeds"]), "--seed",
                            str(s["seed"]), "--quiet", "--out", out], check=True)
            cli = read_tsv(out)
        values = cli[s["name"]]
        started = time.perf_counter()
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            got = icl.distributed.simulate_sweep(client, icl.Params(), s["name"], values,
                                                 dim=s["dim"], seeds=s["seeds"], seed=s["seed"])
        print(f"dask LocalCluster sweep ({s['count']} points, cluster start included): "
              f"{time.perf_counter() - started:.1f} s")
        self.assertTrue(all(got["sim_converged"]))
        compared = [c for c in cli if c != "index"]
        self.assertIn("sim_idg", compared)
        for c in compared:
            self.assertIn(c, got, c)
            for k, (a, b) in enumerate(zip(cli[c], got[c])):
                b = float(b)
                self.assertTrue(a == b or (math.isnan(a) and math.isnan(b)),
                                f"{c}[{k}]: cli {a!r} dask {b!r}")

    def test_switches_and_finite_dim_match_the_cli_and_the_in_process_sweep(self):
        # One procedure (verify/lowrank/sweep.hpp) behind the CLI, sweep(simulate=True) and the
        # dask engine: with the finite-D columns and a switch, all three agree bit for bit.
        s = dict(SWEEP, count=3)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sweep.tsv")
            subprocess.run([ICL_EXE, "sweep", "--vary",
                            f"{s['name']}={s['start']}:{s['stop']}:{s['count']}", "--simulate",
                            "--dim", str(s["dim"]), "--seeds", str(s["seeds"]), "--seed",
                            str(s["seed"]), "--finite-dim", "12", "--assignment", "balanced",
                            "--quiet", "--out", out], check=True)
            cli = read_tsv(out)
        values = cli[s["name"]]
        options = dict(dim=s["dim"], seeds=s["seeds"], seed=s["seed"], finite_dim=12,
                       assignment="balanced")
        local = icl.sweep(icl.Params(), s["name"], values, simulate=True, **options)
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            got = icl.distributed.simulate_sweep(client, icl.Params(), s["name"], values,
                                                 **options)
        self.assertIn("fd_idg", got)
        for c in (c for c in cli if c != "index"):
            for k, a in enumerate(cli[c]):
                for name, r in (("dask", got), ("sweep", local)):
                    b = float(r[c][k])
                    self.assertTrue(a == b or (math.isnan(a) and math.isnan(b)),
                                    f"{c}[{k}]: cli {a!r} {name} {b!r}")

    def test_missing_arguments_are_errors(self):
        with self.assertRaises(TypeError):  # dim, seeds, seed have no defaults
            icl.distributed.simulate_sweep(None, icl.Params(), "rho", [0.5])


if __name__ == "__main__":
    unittest.main()
