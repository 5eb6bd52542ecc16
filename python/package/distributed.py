"""Simulation sweeps on dask.distributed (an optional dependency), one task per point.

simulate_sweep(client, params, name, values, dim=..., seeds=..., seed=..., ...) computes what
sweep(params, name, values, simulate=True, ...) and `icl sweep --vary NAME=... --simulate`
compute, and gives the same numbers bit for bit: the library's sweep procedure
(verify/lowrank/sweep.hpp) solves the theory (and finite_dim=D predictions) here, then point k
is simulated on a worker by the library's simulate_point, with the seed derive_seed(seed, k) --
the seeding of `--shard`, under which a point's result does not depend on how the points are
spread (numerics/seed.hpp). Any client works: a LocalCluster, a dask-jobqueue Slurm cluster, a
scheduler address.
"""
from . import _core
from ._progress import reporter as _reporter


def _simulate_point(params, index, options):
    """One point (runs on a worker): the `icl sweep --simulate` cells, NaN when a seed's
    training did not converge."""
    return _core._simulate_sweep_point(params, index, **options)


def simulate_sweep(client, params, name, values, *, dim, seeds, seed, threads=1,
                   method="saddle", finite_dim=None, progress=None, **options):
    """sweep(params, name, values, simulate=True, ...) with the simulations as dask tasks;
    returns the same SweepResult (the sweep columns, fd_* with finite_dim, the simulation
    columns sim_<q>, sim_<q>_sem, sim_converged and .sim_messages). dim, seeds, seed: as the
    CLI's --dim, --seeds, --seed (no defaults here, so that a comparison states them);
    threads: per task (results do not depend on it); options: the finite-D switches and the
    other simulator options of simulate(). progress: None | True | 'tqdm' |
    callable(done, total, what), as points finish.
    """
    try:
        from distributed import as_completed
    except ImportError as e:
        raise ImportError("icl_theory.distributed needs dask.distributed, an optional "
                          "dependency: pip install distributed (Debian: apt-get install "
                          "python3-distributed)") from e
    import numpy as np

    from . import _sweep_result

    sim = dict(options, dim=dim, seeds=seeds, seed=seed, threads=threads)
    run = _core.sweep(params, name, list(np.asarray(values, dtype=float).ravel()),
                      method=method, finite_dim=finite_dim, simulate=True, _simulations=False,
                      **sim)
    futures = [client.submit(_simulate_point, p, index, sim, pure=False)
               for index, p in run.points()]
    with _reporter(progress, f"simulate sweep {name}") as report:
        if report is not None:
            for done, _ in enumerate(as_completed(futures), start=1):
                report(done, len(futures), "point")
        rows = client.gather(futures)
    for i, (cells, converged, message) in enumerate(rows):
        run.set_simulation(i, cells, converged, message)
    run.summarize()
    return _sweep_result(run, params, name)
