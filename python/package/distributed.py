"""Simulation sweeps on dask.distributed (an optional dependency), one task per point.

simulate_sweep(client, params, name, values, dim=..., seeds=..., seed=...) computes what
`icl sweep --vary NAME=... --simulate --dim D --seeds S --seed B` computes, and gives the same
numbers bit for bit: the theory along the whole path is solved here, with continuation, as the
unsharded CLI does; point k is simulated on a worker at the same Params with the seed
derive_seed(B, k) -- the seeding of `--shard`, under which a point's result does not depend on
how the points are spread (numerics/seed.hpp). Any client works: a LocalCluster, a
dask-jobqueue Slurm cluster, a scheduler address.
"""
import numpy as np

from . import _core
from ._progress import reporter as _reporter
from ._results import SweepResult


def _simulate_point(params, dim, seeds, seed, threads):
    """One point (runs on a worker): the `icl sweep --simulate` cells, NaN when a seed's
    training did not converge."""
    row, converged, message = _core._simulation_row(params, dim=dim, seeds=seeds, seed=seed,
                                                    threads=threads)
    return row, converged, message


def simulate_sweep(client, params, name, values, *, dim, seeds, seed, threads=1,
                   method="saddle", progress=None):
    """The theory along `name` over `values` (sweep()) plus a finite-D simulation of every
    point as a dask task; returns a SweepResult with the sweep columns and the simulation
    columns of `icl sweep --simulate` (simulation_columns(): sim_<q>, sim_<q>_sem for the
    errors and order parameters), sim_converged (bool) and .sim_messages (one per point,
    empty when converged). dim, seeds, seed: as the CLI's --dim, --seeds, --seed (no defaults
    here, so that a comparison states them); threads: per task (results do not depend on it).
    progress: None | True | 'tqdm' | callable(done, total, what), as points finish.
    """
    try:
        from distributed import as_completed
    except ImportError as e:
        raise ImportError("icl_theory.distributed needs dask.distributed, an optional "
                          "dependency: pip install distributed (Debian: apt-get install "
                          "python3-distributed)") from e
    from . import sweep

    result = sweep(params, name, values, method=method)
    points = []
    for v in result[name]:
        p = params.copy()
        p.set(name, float(v))
        points.append(p)
    futures = [client.submit(_simulate_point, p, dim, seeds, _core.derive_seed(seed, k),
                             threads, pure=False)
               for k, p in enumerate(points)]
    with _reporter(progress, f"simulate sweep {name}") as report:
        if report is not None:
            for done, _ in enumerate(as_completed(futures), start=1):
                report(done, len(futures), "point")
        rows = client.gather(futures)

    cells = np.array([r[0] for r in rows], dtype=float).reshape(len(rows), -1)
    for c, column in enumerate(_core.simulation_columns()):
        result[column] = cells[:, c].copy()
    result["sim_converged"] = np.array([r[1] for r in rows], dtype=bool)
    result.sim_messages = [r[2] if not r[1] else "" for r in rows]
    return result
