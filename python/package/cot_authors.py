"""The test-time iteration against its authors' stored simulations (docs/multistep.md §5).

    /usr/bin/python3 -m icl_theory.cot_authors DATA_DIR [--quick] [--out F.tsv] [--threads N]

DATA_DIR is tests/data/cot_authors of the source tree (their HDF5 files as TSV). For every
(alpha, tau, sigma, D) they simulated, this runs the project's simulator at the same D, lambda,
number of test tasks and number of seeds (their trials), and compares per step t:

- before the breakdown: z = (ours - theirs) / sqrt(sem_ours^2 + sem_theirs^2), both the mean over
  seeds (trials) of the per-seed mean E_t, with its standard error;
- from the breakdown on, in log scale: the same z on ln(per-seed mean E_t).

The breakdown step of a point is the first t at which either simulator's seed-to-seed spread
(standard deviation / mean of the per-seed means) exceeds 0.5: from there the mean is carried by
rare seeds whose I - A S has a direction outside the unit disc, and a z-score on the linear scale
no longer has its normal reference. --quick: only D = 100 and t <= 15. Exit 1 when a |z| before
the breakdown exceeds 4 (a flagrant disagreement), else 0; the table goes to --out (TSV) or
stdout.
"""
import argparse
import math
import os
import sys

import numpy as np

from . import cot

SPREAD_LIMIT = 0.5  # the breakdown: seed-to-seed coefficient of variation above this
Z_LIMIT = 4.0


def _stats(per_seed):
    """mean, sem of per-seed values (rows: seeds)."""
    per_seed = np.asarray(per_seed, dtype=float)
    n = per_seed.shape[0]
    mean = per_seed.mean(axis=0)
    sem = per_seed.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full_like(mean, np.nan)
    return mean, sem


def compare(data_dir, quick=False, threads=0, seed=1, progress=None, max_dim=None):
    """A pandas DataFrame, one row per (alpha, tau, sigma, dim, t): theirs_mean, theirs_sem,
    ours_mean, ours_sem, theory (the D -> infinity series), breakdown (bool), z (linear scale)
    and z_log (log scale)."""
    import pandas as pd

    sims = pd.read_csv(os.path.join(data_dir, "simulations.tsv"), sep="\t")
    if quick:
        sims = sims[(sims["dim"] == 100) & (sims["t"] <= 15)]
    if max_dim:
        sims = sims[sims["dim"] <= max_dim]
    keys = ["alpha", "tau", "sigma", "lambda", "dim", "test_tasks"]
    rows = []
    groups = list(sims.groupby(keys, dropna=False))
    for n, (key, g) in enumerate(groups):
        alpha, tau, sigma, lam, dim, test_tasks = key
        lam = 1e-5 if not np.isfinite(lam) else lam  # (the alpha = 1 file stores no lambda)
        test_tasks = int(test_tasks) if test_tasks > 0 else 2000
        table = g.pivot_table(index="trial", columns="t", values="error")
        steps = int(table.columns.max())
        theirs = table.to_numpy()
        ours = cot(alpha=alpha, tau=tau, sigma=sigma, lambda_=lam, steps=steps, simulate=True,
                   dim=int(dim), seeds=theirs.shape[0], test_tasks=test_tasks, threads=threads,
                   seed=seed + n)["simulation"]
        mine = np.asarray(ours["seed_means"], dtype=float)
        theory = cot(alpha=alpha, tau=tau, sigma=sigma, steps=steps)
        m1, s1 = _stats(theirs)
        m2, s2 = _stats(mine)
        l1, ls1 = _stats(np.log(theirs))
        l2, ls2 = _stats(np.log(mine))
        spread = np.maximum(theirs.std(axis=0, ddof=1) / m1, mine.std(axis=0, ddof=1) / m2)
        broken = np.maximum.accumulate(spread > SPREAD_LIMIT)
        for t in range(steps + 1):
            rows.append(dict(alpha=alpha, tau=tau, sigma=sigma, dim=int(dim), t=t,
                             theirs_mean=m1[t], theirs_sem=s1[t], ours_mean=m2[t],
                             ours_sem=s2[t], theory=theory["error"][t],
                             regime=theory["regime"], breakdown=bool(broken[t]),
                             z=(m2[t] - m1[t]) / math.hypot(s1[t], s2[t]),
                             z_log=(l2[t] - l1[t]) / math.hypot(ls1[t], ls2[t])))
        if progress:
            progress(n + 1, len(groups), "point")
    return pd.DataFrame(rows)


def summary(frame):
    """Per point: steps before the breakdown, the largest |z| there, the largest |z_log| after."""
    out = []
    for key, g in frame.groupby(["alpha", "tau", "sigma", "dim"]):
        before, after = g[~g["breakdown"]], g[g["breakdown"]]
        out.append(dict(zip(["alpha", "tau", "sigma", "dim"], key),
                        regime=g["regime"].iloc[0],
                        breakdown_t=int(after["t"].min()) if len(after) else None,
                        max_abs_z=float(before["z"].abs().max()) if len(before) else float("nan"),
                        max_abs_z_log_after=float(after["z_log"].abs().max()) if len(after)
                        else float("nan")))
    import pandas as pd
    return pd.DataFrame(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m icl_theory.cot_authors",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("--quick", action="store_true", help="D = 100 only, t <= 15")
    ap.add_argument("--out", help="the per-step table as TSV (default: stdout)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-dim", type=int, help="only the points at D <= this")
    a = ap.parse_args(argv)
    frame = compare(a.data_dir, quick=a.quick, threads=a.threads, seed=a.seed, max_dim=a.max_dim,
                    progress=lambda d, n, w: print("%s %d/%d" % (w, d, n), file=sys.stderr))
    if a.out:
        tmp = a.out + ".tmp"
        frame.to_csv(tmp, sep="\t", index=False)
        os.replace(tmp, a.out)
    else:
        frame.to_csv(sys.stdout, sep="\t", index=False)
    s = summary(frame)
    print(s.to_string(index=False), file=sys.stderr)
    bad = s["max_abs_z"] > Z_LIMIT
    if bad.any():
        print("disagreement before the breakdown (|z| > %g) at:\n%s" % (Z_LIMIT, s[bad]),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
