"""Replica theory of in-context learning (icl-theory) from Python.

Params, solve, sweep, phase_grid, regime, critical_rho, atom_mass, has_transition: the
low-rank replica theory; solve_finite_dim: its finite-D prediction at token dimension D
(docs/finite_dim.md §21). MarchenkoPastur, GeneralizedMarchenkoPastur, resolvent_moment,
integrate: spectral measures. simulate, LowRankSimulator: the finite-D simulator (with the
theory next to it). patch_check, rank1_patch: the exact rank-1 patch of a contextual block.
optimize: the parameter value that minimizes TM, IDG or ODG. cot: the test-time iteration of a
trained linear-attention map (docs/multistep.md), theory and simulation; depth: L layers as L
steps of gradient descent (docs/multistep_depth.md). icl_theory.distributed: simulation
sweeps on dask.distributed, equal to `icl sweep --simulate`.

solve() takes numpy arrays for any parameter (broadcast together) and then returns a
SolutionArray. Results pickle (multiprocessing, joblib, dask); sweep/phase_grid/vectorized/
simulation results have to_pandas() when pandas is installed. Long calls take
progress=True | "tqdm" | callable(done, total, what), release the GIL, and stop on Ctrl-C.

Bad parameters raise InvalidParams (a ValueError) naming the field; numerical failures raise
NumericalError (a RuntimeError). The compiled core is icl_theory._core.
"""
import functools
import inspect
import warnings

import numpy as np

from . import _core
from ._core import *  # noqa: F401,F403  (Params, Solution, the spectral and patch functions, ...)
from ._core import InvalidParams, NumericalError, Params, Solution
from ._progress import reporter as _reporter
from ._results import (BoundaryResult, CotResult, FiniteDimResult, OptimizeResult, PhaseResult,
                       SimulationResult, SolutionArray, SweepResult)

__version__ = _core.__version__

# Params' constructor names, in the order solve() applies array values (gamma last: it sets
# tau = gamma * kappa from the final kappa, as the constructor does).
PARAM_NAMES = ("alpha", "alpha_test", "tau", "kappa", "rho", "sigma", "sigma_test", "lambda_",
               "test_overlap", "gamma")


def solve(params=None, *, method="saddle", moments="quadrature", residual_tolerance=1e-10,
          max_iterations=200, start=None, threads=0, progress=None, finite_dim=None,
          gradient=False, **values):
    """Solve the theory at `params` (default Params()) and return a Solution.

    method: 'saddle' (full replica saddle point), 'reduced' (scalar closed forms) or 'letey'
    (Letey/Lu deterministic equivalent). moments: 'quadrature' | 'exact' spectral moments for
    the saddle point. start: a previous converged Solution to warm-start from. Raises
    InvalidParams (ValueError) for bad parameters; non-convergence is reported in
    .converged/.status, never raised (then every value is NaN, see last_iterate).

    Vectorized: parameters given by keyword (alpha=..., rho=..., lambda_=..., gamma=...;
    PARAM_NAMES) override those of `params`; when any of them is an array (numpy broadcasting
    applies between them), every point is solved independently from its own closed-form start
    (theory::solve_points, on `threads` threads, 0 = every core) and a SolutionArray of the
    broadcast shape is returned (NaN where a point did not converge; .converged says where).
    progress: None | True | 'tqdm' | callable(done, total, what), per point.

    finite_dim=D adds the finite-D prediction at every point as the columns fd_tm, fd_idg,
    fd_odg, fd_*_algo, fd_bayes_* and fd_valid (those of `icl sweep --finite-dim D`: solve_finite_dim, NaN where it
    failed or does not cover the point); it always returns a SolutionArray (of shape () for
    scalar parameters). The Bayes-optimal baselines are the columns bayes_idg, bayes_odg;
    to_pandas() has every input parameter of every point.

    gradient=True adds the exact derivatives of every output with respect to every parameter
    (implicit differentiation through the root, docs/sensitivity.md §22): Solution.gradient
    {output: {parameter: value}} with .gradient_status; a SolutionArray's .gradient holds
    arrays, and its columns (and to_pandas()) d_<E>_d_<x> and the elasticities el_<E>_<x> of
    the errors E.
    """
    base = Params() if params is None else params.copy()
    unknown = set(values) - set(PARAM_NAMES)
    if unknown:
        key = sorted(unknown)[0]
        known = [n for n in inspect.signature(solve).parameters if n not in ("params", "values")]
        known += list(PARAM_NAMES)
        raise TypeError(f"solve() got an unexpected keyword argument '{key}'"
                        + (_core._did_you_mean(key, known) or f"; parameters are {PARAM_NAMES}"))
    if "tau" in values and "gamma" in values:
        Params(tau=1.0, gamma=1.0)  # raises the constructor's InvalidParams naming gamma
    arrays = {k: np.asarray(v, dtype=float) for k, v in values.items()
              if k != "alpha_test" or v is not None}
    if values.get("alpha_test", 0) is None:
        arrays["alpha_test"] = np.asarray(-1.0)  # None = same as alpha
    if finite_dim is None and all(a.ndim == 0 for a in arrays.values()):
        for k in PARAM_NAMES:  # scalars: one Solution, as before
            if k in arrays:
                base.set(k, float(arrays[k]))
        return _core.solve(base, method=method, moments=moments,
                           residual_tolerance=residual_tolerance, max_iterations=max_iterations,
                           start=start, gradient=gradient)
    if start is not None:
        e = InvalidParams("start: a warm start applies to one point; vectorized solves start "
                          "every point from its own closed form")
        e.field = "start"
        raise e
    names = [k for k in PARAM_NAMES if k in arrays]
    shape = np.broadcast_shapes(*(arrays[k].shape for k in names))
    table = np.stack([np.broadcast_to(arrays[k], shape).ravel() for k in names], axis=1) \
        if names else np.zeros((1, 0))
    with _reporter(progress, "solve") as report:
        cols = _core._solve_points(base, names, table, method=method, moments=moments,
                                   residual_tolerance=residual_tolerance,
                                   max_iterations=max_iterations, threads=threads,
                                   finite_dim=finite_dim, gradient=gradient, progress=report)
    return SolutionArray(cols, shape, {k: arrays[k] for k in names}, base)


def sweep(params, name, values, *, method="saddle", moments="quadrature", warm_start=True,
          max_halvings=6, residual_tolerance=1e-10, progress=None, finite_dim=None,
          simulate=False, checkpoint=None, gradient=False, **options):
    """Solve along one parameter (`name` in Params.names(), or lambda_) over `values`, with
    continuation (each point from its closed form, else warm-started from the previous
    converged point with step halving) -- the library's one sweep procedure, the same as
    `icl sweep` (verify/lowrank/sweep.hpp).

    Returns a SweepResult: a dict of 1-D numpy arrays (the varied parameter under its own
    name, converged (bool), residual, iterations, tm, idg, odg, the decomposition pieces
    (tm_algo, tm_mem, tm_struct, idg_*, odg_*), the order parameters, z and e; NaN where a
    point did not converge), with to_pandas(), .converged and .message (the first failure).
    Every point is validated first (InvalidParams names the bad one). progress: None | True |
    'tqdm' | callable(done, total, what), one count over the stages.

    finite_dim=D adds fd_tm, fd_idg, fd_odg, the algo part at D fd_tm_algo, fd_idg_algo,
    fd_odg_algo (§21.17), the Bayes baselines at D fd_bayes_idg, fd_bayes_odg (§21.16; with a
    shifted protocol also fd_shift, fd_bayes_shift) and fd_valid (1 inside the expansion's range,
    docs/finite_dim.md §21.9): the finite-D prediction of solve_finite_dim at every point (NaN
    where it failed or does not cover the point), as `icl sweep --finite-dim D`. simulate=True adds a finite-D simulation of every point, as `icl sweep --simulate`:
    the columns sim_<q>, sim_<q>_sem (simulation_columns()), sim_converged (bool) and
    .sim_messages; point k is simulated with seed derive_seed(seed, k). Keyword options: the
    finite-D switches sphere_queries, fixed_norm_tasks, assignment ('random' | 'balanced'),
    gaussian_context (for finite_dim and the simulation, which switch off the same sources;
    a switch needs one of them), and with simulate=True the simulator's options of
    simulate() (dim, seeds, seed, threads, ...; defaults those of `icl sweep --simulate`,
    dim 40).

    gradient=True adds the columns d_<E>_d_<x> and el_<E>_<x> of `icl sweep --gradient` (the
    exact derivatives and elasticities of the errors, docs/sensitivity.md §22) and .gradient,
    {output: {parameter: array}} for every output.

    checkpoint=PATH (with simulate=True): each point's simulation is kept in PATH.partial/ as
    it finishes (the folder of `icl sweep --out PATH --resume`); after Ctrl-C or a crash the
    same call continues from it (the same options are required: InvalidParams 'checkpoint'
    names the ones that differ) and gives the result of an uninterrupted run; the folder is
    removed when the sweep completes.
    """
    with _reporter(progress, f"sweep {name}") as report:
        run = _core.sweep(params, name, list(np.asarray(values, dtype=float).ravel()),
                          method=method, moments=moments, warm_start=warm_start,
                          max_halvings=max_halvings, residual_tolerance=residual_tolerance,
                          finite_dim=finite_dim, simulate=simulate, checkpoint=checkpoint,
                          gradient=gradient, progress=report, **options)
    return _sweep_result(run, params, name)


def _sweep_result(run, params, name):
    result = SweepResult(run.columns(), params.copy(), name)
    result.converged, result.message = run.converged, run.message
    if "sim_converged" in result:
        result.sim_messages = run.simulation_messages()
    return result


def solve_finite_dim(params, dim, **switches):
    """The finite-D prediction of the errors at token dimension `dim` >= 2 (docs/finite_dim.md
    §21): the D -> infinity saddle point at the integer sizes of D plus the O(1/D) correction
    of each derived finite-D source; `icl solve --finite-dim D`.

    Keyword switches (the simulator's, simulate(), docs/simulation.md §13.7): sphere_queries,
    fixed_norm_tasks, gaussian_context (True/False) and assignment ('random' | 'balanced'); a
    source they remove is predicted as 0. Returns a FiniteDimResult (.error, .limit, .slope,
    .sources, .omitted, .status, .converged, .to_dict()); NaN values when not converged.
    Raises InvalidParams naming the field for bad parameters, dim < 2 ('dim') and the ridgeless
    branch lambda = 0, tau <= 1 ('lambda').
    """
    return FiniteDimResult(_core._solve_finite_dim(params, dim, **switches))


def phase_grid(params, x_name, xs, y_name, ys, *, method="saddle", moments="quadrature",
               threads=0, gradient=False, progress=None):
    """Solve on the grid xs x ys of two parameters (names as in sweep()). Returns a
    PhaseResult: a dict of 2-D numpy arrays of shape (len(xs), len(ys)) (element [i, j] at
    x = xs[i], y = ys[j]): the quantities of sweep(), the two parameters under their names,
    and regime (0 task-rich, 1 task-poor, 2 boundary), with to_pandas(). threads = 0 uses
    every core; results do not depend on it. progress: as in sweep(). gradient=True: as in
    sweep() (the d_ and el_ columns, .gradient).
    """
    with _reporter(progress, "phase") as report:
        cols = _core.phase_grid(params, x_name, list(np.asarray(xs, dtype=float).ravel()),
                                y_name, list(np.asarray(ys, dtype=float).ravel()),
                                method=method, moments=moments, threads=threads,
                                gradient=gradient, progress=report)
    return PhaseResult(cols, params.copy(), x_name, y_name)


@functools.wraps(_core.optimize)
def optimize(*args, **kwargs):
    return OptimizeResult(_core.optimize(*args, **kwargs))  # the dict, with to_pandas()


@functools.wraps(_core.boundary)
def boundary(*args, **kwargs):
    result = BoundaryResult(_core.boundary(*args, **kwargs))  # the dict, with to_pandas()
    params = args[0] if args else kwargs.get("params")
    result.base = params.copy()  # to_pandas(): every parameter of each row's point
    return result


def propagate(params, cov, *, method="saddle", outputs=None):
    """Propagate parameter uncertainty to the outputs by the delta method (docs/errors_phases.md
    §22.5): Var(E) = g^T C g with g the exact gradient of E in the parameters of `cov`.

    cov: {name: variance} for independent parameters, or (names, matrix) with a covariance
    matrix over `names` (e.g. a fitted sigma with its standard error: {"sigma": 0.02**2}).
    Returns {output: (value, standard deviation)} for `outputs` (any output of the gradient;
    default: tm, idg, odg, and shift with a shifted protocol). First order: valid while the standard deviations are small
    against the scale on which the gradient changes. Raises InvalidParams (field 'cov') for an
    unknown name or a matrix that is not a symmetric positive semi-definite one of that size,
    NumericalError when the gradient is not available (e.g. the solve did not converge).
    """
    s = _core.solve(params, method=method, gradient=True)
    status = s.gradient_status
    if status["status"] != "converged":
        raise NumericalError(f"propagate: no gradient ({status['message']})")
    if isinstance(cov, dict):
        names = list(cov)
        matrix = np.diag([float(cov[n]) for n in names])
    else:
        names, matrix = list(cov[0]), np.asarray(cov[1], dtype=float)
    names = ["lambda" if n == "lambda_" else n for n in names]

    def refuse(why):
        e = InvalidParams(f"cov: {why}")
        e.field = "cov"
        return e

    unknown = [n for n in names if n not in status["parameters"]]
    if unknown:
        raise refuse(f"'{unknown[0]}' is not a parameter of this point's gradient "
                     f"({', '.join(status['parameters'])})")
    if matrix.shape != (len(names), len(names)) or not np.allclose(matrix, matrix.T) or \
            np.linalg.eigvalsh(matrix).min() < -1e-12 * max(1.0, np.abs(matrix).max()):
        raise refuse(f"needs a symmetric positive semi-definite {len(names)} x {len(names)} "
                     "covariance")
    if outputs is None:
        outputs = ["tm", "idg", "odg"] + (["shift"] if "shift" in s.gradient else [])
    out = {}
    for o in outputs:
        g = np.array([s.gradient[o][n] for n in names])
        out[o] = (s.quantity(o), float(np.sqrt(max(0.0, g @ matrix @ g))))
    return out


from . import distributed  # noqa: E402  (imports dask only when used)


def _simulation_result(raw, stacklevel):
    """stacklevel: of the user's call, for the warnings (simulate() is wrapped once more)."""
    result = SimulationResult(*raw)
    for note in result.notes:  # the library's warnings (e.g. a ratio moved by the sizes)
        if note.startswith("warning: "):
            warnings.warn(note[len("warning: "):], UserWarning, stacklevel=stacklevel)
    if result.status == "interrupted":  # Ctrl-C: the finished seeds, not all that were asked
        warnings.warn(f"simulate: {result.json['message']} (result status 'interrupted')",
                      UserWarning, stacklevel=stacklevel)
    return result


def simulate(params, *, progress=None, **options):
    """Simulate linear attention trained on low-rank regression tasks at finite D = dim, and
    (theory=True) solve the theory at the same point.

    Options (keyword; defaults those of `icl simulate`, the library's SimOptions::standalone()):
    dim=60, seeds=5, seed=20251, threads=2, odg='isotropic' | 'subspace',
    sampler='factorized' | 'direct', solver='cg' | 'direct', cg_tolerance=1e-6,
    cg_max_iterations, min_norm=False (allow lambda = 0 with tau < 1: the minimum-norm
    solution), theory=True, prediction_prompts=2000 (fresh prompts per protocol for the
    distribution of predictions), histogram_bins=16, bayes_prompts=0 (> 0: TM's Bayes-optimal
    dMMSE baseline by Monte Carlo on that many fresh prompts per seed, 'bayes_optimal.tm';
    docs/errors_phases.md §17.4), and the finite-D switches sphere_queries, fixed_norm_tasks,
    gaussian_context (True/False) and assignment ('random' | 'balanced') (finite-D sources
    switched off; same D -> infinity limit, docs/simulation.md §13.7). An unknown keyword is a
    TypeError naming it.

    Returns a SimulationResult: {name: (mean, sem)} over `seeds` seeds ('error.tm',
    'error.idg', 'error.odg', 'order.m', 'order.q', 'order.mbar', 'order.qbar', 'order.m0',
    'order.q0', 'error.shift' with Params.test_overlap / test_levels (docs/general_covariance.md §20),
    with the theory also the measured decomposition 'decomp.*', solver facts
    'cg.iterations', ...; sem is NaN for one seed), with .theory (the Solution at
    .simulated_params, the ratios of the integer sizes of D: r/D, M0/D, N/D^2, L/D; a ratio
    moved by more than 1% from the given one is a UserWarning), .finite_dim (the finite-D
    prediction at D), .comparison (mean, sem, theory, z, finite_dim, z_finite_dim,
    bayes_optimal per compared quantity), to_dict() (the `icl simulate --json` object) and
    to_pandas() (the comparison, with the given and simulated parameters as columns). Seed k
    is derive_seed(seed, k), so the result does not depend on `threads`. Raises NumericalError
    when a seed's training does not converge. progress: per seed, as in sweep().

    Ctrl-C (KeyboardInterrupt) stops after the seeds in progress and returns the finished ones:
    .status is 'interrupted', the estimates are over seeds 0..k-1 (to_dict()['seeds_finished'])
    and a UserWarning says so. (Ctrl-C is seen when a seed finishes.)
    """
    with _reporter(progress, "simulate") as report:
        return _simulation_result(_core.simulate(params, progress=report, **options), 4)


class LowRankSimulator(_core.LowRankSimulator):
    """The finite-D simulator as an object: LowRankSimulator(params, **options) with the
    options of simulate(); .run(progress=None) -> SimulationResult (see simulate())."""

    def run(self, progress=None):
        with _reporter(progress, "simulate") as report:
            return _simulation_result(super().run(progress=report), 3)


# Last: every public function gives one-line argument errors (package/_arguments.py).
from ._arguments import wrap_public_functions as _wrap_public_functions  # noqa: E402

_wrap_public_functions(globals())


def cot(**kwargs):
    """The test-time iteration ("chain of thought", docs/multistep.md): E_t for t = 0..steps
    from the D -> infinity theory (certified extended precision), the regime boundaries tau_c,
    tau_monotone, tau_crit, the regime, the large-t limit, the growth rate and t_opt.

    Keywords (defaults of the library, as `icl cot`): alpha, tau, sigma, lambda (or lambda_),
    steps, max_bits, relative_tolerance; simulate=True adds the simulator's mean, sem and median
    per step at dim, seeds, test_tasks, seed, threads (the theory needs tau > 1 and lambda = 0;
    outside them only the simulation runs). Returns a CotResult (a dict with to_pandas(): one
    row per step). Raises InvalidParams naming the field, as the CLI.

    >>> r = cot(alpha=3.0, tau=2.0, sigma=0.01, steps=3)
    >>> round(r["error"][1], 6), r["regime"]
    (0.500012, 'convergent')
    """
    return CotResult(_core.cot(**kwargs))
