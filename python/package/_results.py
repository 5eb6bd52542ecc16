"""Result types of the Python layer: plain numpy arrays and dicts (so they pickle), with
to_pandas() when pandas is installed (an optional dependency)."""
import numpy as np

_ERRORS = ("tm", "idg", "odg")
_PIECES = ("algo", "mem", "struct")
_BAYES = ("bayes_idg", "bayes_odg", "bayes_shift")  # the Bayes-optimal baselines
# The per-point columns that are facts of the solve rather than values of the solution.
_FACTS = ("converged", "residual", "iterations", "regime")
REGIMES = ("task-rich", "task-poor", "boundary")  # the codes 0, 1, 2 of the regime arrays


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError("to_pandas() needs pandas, an optional dependency: pip install pandas "
                          "(Debian: apt-get install python3-pandas)") from e
    return pandas


def _nan_if_none(v):
    return float("nan") if v is None else v


def parameter_columns(params):
    """Every input parameter as a scalar column {name: value} from a Params or its to_dict():
    lists (task_spectrum, test_levels) as their text, so that a concatenation of frames keeps
    every parameter."""
    d = params if isinstance(params, dict) else params.to_dict()
    return {k: (str(v) if isinstance(v, (list, tuple)) else v) for k, v in d.items()}


def _with_parameters(frame, parameters):
    """frame plus every input parameter it lacks as a column: `parameters` is {name: array}
    per point (the library's Params::get of each solved point: alpha_test as it follows alpha,
    gamma = tau/kappa) or a dict of scalars for one point; the columns the frame has (the
    varied ones, lambda_ for lambda) are kept."""
    if parameters is None:
        return frame
    for k, v in parameters.items():
        if k not in frame.columns and k + "_" not in frame.columns:
            frame[k] = np.asarray(v).ravel() if np.ndim(v) else v
    return frame


class SweepResult(dict):
    """Result of sweep(): a dict of 1-D numpy arrays (the columns of `icl sweep`: the varied
    parameter under its name, converged, residual, iterations, tm, idg, odg, the decomposition
    pieces tm_algo ... odg_struct, the order parameters, z, e; NaN where a point did not
    converge). `.params` is the base Params, `.name` the varied parameter. to_pandas(): one row
    per point. icl_theory.distributed.simulate_sweep adds the simulation columns sim_*."""

    def __init__(self, columns, params=None, name=None):
        columns = dict(columns)
        self.parameters = columns.pop("_parameters", None)  # every input, per point
        self.gradient = columns.pop("_gradient", None)  # gradient=True: {output: {param: array}}
        super().__init__(columns)
        self.params, self.name = params, name

    def to_pandas(self):
        """A pandas DataFrame, one row per point, one column per array (varied parameter first),
        then every other input parameter of .params as a constant column (so that frames of
        several sweeps concatenate without losing what distinguishes them)."""
        pd = _pandas()
        keys = ([self.name] if self.name in self else []) + [k for k in self if k != self.name]
        return _with_parameters(pd.DataFrame({k: self[k] for k in keys}), self.parameters)

    def __reduce__(self):
        return (type(self), (dict(self), self.params, self.name), self.__dict__)


class PhaseResult(dict):
    """Result of phase_grid(): a dict of 2-D numpy arrays of shape (len(xs), len(ys)) (element
    [i, j] at x = xs[i], y = ys[j]): the quantities of sweep(), both parameters under their
    names and regime (0 task-rich, 1 task-poor, 2 boundary). to_pandas(): one row per grid
    point (long format, x varying slowest)."""

    def __init__(self, columns, params=None, x_name=None, y_name=None):
        columns = dict(columns)
        self.parameters = columns.pop("_parameters", None)  # every input, per grid point
        self.gradient = columns.pop("_gradient", None)  # gradient=True: {output: {param: array}}
        super().__init__(columns)
        self.params, self.x_name, self.y_name = params, x_name, y_name

    def to_pandas(self):
        """A pandas DataFrame with one row per grid point; regime as strings."""
        pd = _pandas()
        first = [k for k in (self.x_name, self.y_name) if k in self]
        keys = first + [k for k in self if k not in first]
        cols = {k: np.asarray(self[k]).ravel() for k in keys}
        if "regime" in cols:
            cols["regime"] = pd.Categorical.from_codes(cols["regime"], REGIMES)
        return _with_parameters(pd.DataFrame(cols), self.parameters)

    def __reduce__(self):
        return (type(self), (dict(self), self.params, self.x_name, self.y_name),
                self.__dict__)


class SolutionArray:
    """Result of solve() when some parameter is an array: every value as a numpy array of the
    broadcast shape of the inputs, NaN where a point did not converge.

    shape, size, ndim    the broadcast shape of the array inputs
    inputs               {name: array of that shape} for every parameter given to solve()
    params               the base Params (the scalar parameters)
    converged            bool array; residual_norm (float) and iterations (int) arrays
    error                {"tm", "idg", "odg": array}
    decomposition        {"tm"|"idg"|"odg": {"algo", "mem", "struct": array}}
    order                {"q", "m", "chi", "qbar", "chibar", "mbar", "m0", "q0", "qhat", ...: array}
    z, e                 arrays; regime: array of "task-rich" | "task-poor" | "boundary"
    gradient             with gradient=True: {output: {parameter: array}} (docs/sensitivity.md §22);
                         the columns d_<E>_d_<x>, el_<E>_<x> of the errors are in columns()
    a["idg"], a["odg_struct"], a["q"], ...: any column of `icl sweep` by name (columns())
    to_pandas()          one row per point: the inputs, then every column
    a[i, j] is not supported: index the arrays (a.error["idg"][i, j]).
    """

    def __init__(self, columns, shape, inputs, params):
        columns = dict(columns)
        parameters = columns.pop("_parameters", {})
        self.parameters = {k: np.asarray(v).reshape(shape) for k, v in parameters.items()}
        gradient = columns.pop("_gradient", None)  # gradient=True: {output: {param: array}}
        self.gradient = None if gradient is None else {
            out: {x: np.asarray(v).reshape(shape) for x, v in row.items()}
            for out, row in gradient.items()}
        self._columns = {k: np.asarray(v).reshape(shape) for k, v in columns.items()}
        self.shape = tuple(shape)
        self.inputs = {k: np.broadcast_to(np.asarray(v, dtype=float), shape).copy()
                       for k, v in inputs.items()}
        self.params = params

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def columns(self):
        """Names usable with a[name]: the per-point columns of `icl sweep` and regime."""
        return list(self._columns)

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise TypeError("SolutionArray[name] takes a column name (columns()); index the "
                            "arrays themselves, e.g. a.error['idg'][i, j]")
        return self._columns[name]

    @property
    def converged(self):
        return self._columns["converged"]

    @property
    def residual_norm(self):
        return self._columns["residual"]

    @property
    def iterations(self):
        return self._columns["iterations"]

    @property
    def error(self):
        return {k: self._columns[k] for k in _ERRORS}

    @property
    def decomposition(self):
        return {k: {p: self._columns[f"{k}_{p}"] for p in _PIECES} for k in _ERRORS}

    @property
    def order(self):
        skip = set(_FACTS) | set(_ERRORS) | set(_BAYES) | {"z", "e"} | {
            f"{k}_{p}" for k in _ERRORS for p in _PIECES}
        derived = ("fd_", "d_", "el_", "shift")  # finite-D, gradient, shifted-protocol columns
        return {k: v for k, v in self._columns.items()
                if k not in skip and not k.startswith(derived)}

    @property
    def z(self):
        return self._columns["z"]

    @property
    def e(self):
        return self._columns["e"]

    @property
    def regime(self):
        return np.asarray(REGIMES, dtype=object)[self._columns["regime"]]

    def to_pandas(self):
        """A pandas DataFrame with one row per point (C order): the inputs, then every column
        (regime as strings)."""
        pd = _pandas()
        cols = {k: v.ravel() for k, v in self.inputs.items()}
        for k, v in self._columns.items():
            cols[k] = v.ravel()
        cols["regime"] = pd.Categorical.from_codes(cols["regime"], REGIMES)
        return _with_parameters(pd.DataFrame(cols), self.parameters)

    def __repr__(self):
        n_ok = int(np.count_nonzero(self.converged))
        return (f"<SolutionArray shape={self.shape} inputs={list(self.inputs)} "
                f"converged={n_ok}/{self.size}>")


class SimulationResult(dict):
    """Result of simulate(): {name: (mean, sem)} over seeds for every simulated quantity
    ("error.idg", "order.q0", "cg.iterations", ...; sem NaN for one seed), plus

    status       "converged", or "interrupted" after Ctrl-C: the estimates are then over the
                 finished seeds (to_dict()["seeds_finished"]; a UserWarning says so)
    params       the parameters as given (a dict, as Params.to_dict())
    simulated_params  the ratios of the integer sizes at D (r/D, M0/D, N/D^2, L/D): the
                 theory is compared there, not at `params` (docs/simulation.md §13.1)
    sizing       [{name, nominal, simulated, relative_change}] for every ratio the rounding
                 can move; a change beyond 1% is also a warning (UserWarning) and in `notes`
    theory       the theory Solution at simulated_params (saddle point, or the ridgeless
                 Letey/Lu branch for lambda = 0, tau < 1), None with theory=False or where the
                 theory does not apply
    finite_dim   the finite-D prediction at D (a FiniteDimResult), None where it does not apply
    comparison   [{quantity, mean, sem, theory, z, finite_dim, z_finite_dim, bayes_optimal}]
                 for the compared quantities (the errors and order parameters enforced by
                 `icl verify`); empty without a converged theory
    to_dict()    everything, as `icl simulate --json` writes it
    to_pandas()  the comparison as a DataFrame indexed by quantity, with every given parameter,
                 dim, seeds and every simulated ratio (simulated_<name>) as columns
    """

    def __init__(self, estimates, json=None, theory=None, comparison=()):
        super().__init__(estimates)
        self.json, self.theory, self.comparison = json, theory, list(comparison)

    def to_dict(self):
        return self.json

    params = property(lambda self: self.json["params"] if self.json else None)
    status = property(lambda self: self.json["status"] if self.json else None)
    simulated_params = property(lambda self: self.json["simulated_params"] if self.json else None)
    sizing = property(lambda self: self.json["sizing"] if self.json else [])
    notes = property(lambda self: self.json["notes"] if self.json else [])

    @property
    def finite_dim(self):
        fd = self.json.get("finite_dim") if self.json else None
        return FiniteDimResult(fd) if fd is not None else None

    def to_pandas(self):
        pd = _pandas()
        cols = ("quantity", "mean", "sem", "theory", "z", "finite_dim", "z_finite_dim",
                "bayes_optimal")
        frame = pd.DataFrame([[_nan_if_none(r[c]) for c in cols] for r in self.comparison],
                             columns=cols).set_index("quantity")
        if self.json:
            extra = dict(parameter_columns(self.json["params"]))
            extra.update(dim=self.json["dim"], seeds=self.json["seeds"])
            for s in self.json["sizing"]:
                extra["simulated_" + s["name"]] = s["simulated"]
            for k, v in extra.items():
                frame[k] = v
        return frame

    def __reduce__(self):
        return (type(self), (dict(self), self.json, self.theory, self.comparison),
                self.__dict__)


class FiniteDimResult:
    """Result of solve_finite_dim(): the finite-D prediction at token dimension D
    (docs/finite_dim.md §21), read from its one serializer (to_dict(), the "finite_dim" block of
    `icl solve --json --finite-dim D`).

    dim, status, message, residual_norm, converged
    sized        the parameters at the integer sizes of D (a dict, as Params.to_dict())
    error        {"tm", "idg", "odg"}: the D -> infinity limit at `sized` plus every correction
                 and second_order
    limit        {"tm", "idg", "odg"}: that limit; slope: d error / d(1/D), summed over sources
    second_order {"tm", "idg", "odg"}: the per-sample channel beyond O(1/D) at this D, in `error`
                 (docs/finite_dim.md §21.18; 0 for a general task spectrum)
    order        {"q", "m", "qbar", "mbar", "m0", "q0"}, corrected
    sources      {name: {"slope": {tm, idg, odg[, shift]}, "correction": {...}}} (shift with a
                 shifted protocol, docs/finite_dim.md §21.11), in order
    omitted      names of the finite-D effects not derived (listed, never estimated)
    switches     {"sphere_queries", "fixed_norm_tasks", "assignment", "gaussian_context"}
    uncertainty  {"tm", "idg", "odg"}: the error bar on `error`, the estimated O(1/D^2) rest
                 (docs/finite_dim.md §21.12; the same numbers as validity["remainder"])
    bayes_optimal {"idg", "odg", "limit": {"idg", "odg"}}: the Bayes-optimal baselines at D and
                 their limit, with "shift" in both under a shifted protocol (docs/finite_dim.md
                 §21.16; NaN where not derived: noiseless test prompts short of a general prior's
                 rank)
    decomposition {"tm"|"idg"|"odg": {"algo", "mem", "struct"}}: "algo" is the error at D of the
                 deterministic predictor S (S - z)^{-1} (docs/finite_dim.md §21.17), so error - algo
                 is the excess (memorization + structural) at D; "mem" and "struct" are NaN (not
                 separable at finite D)
    test_shift   {"error", "limit", "uncertainty", "decomposition"}: the shifted protocol's error
                 at D, its limit, its estimated O(1/D^2) rest and its decomposition as above (docs/finite_dim.md §21.11, §21.17), None without a
                 shifted protocol (any test levels); mem and struct NaN
    valid        True inside the O(1/D) expansion's range (docs/finite_dim.md §21.9)
    validity     {"valid", "reason" (why not), "relative_correction": {tm, idg, odg} (the
                 sources' |corrections| over the limit), "remainder": {tm, idg, odg} (the
                 estimated O(1/D^2) rest), "max_relative_correction"}
    Not converged: every value NaN (status and message say why), valid False.
    """

    def __init__(self, json):
        self._json = json

    def to_dict(self):
        return self._json

    # The blocks of to_dict(), as attributes.
    dim = property(lambda self: self._json["dim"])
    status = property(lambda self: self._json["status"])
    message = property(lambda self: self._json["message"])
    residual_norm = property(lambda self: self._json["residual_norm"])
    sized = property(lambda self: self._json["sized"])
    error = property(lambda self: self._json["error"])
    limit = property(lambda self: self._json["limit"])
    slope = property(lambda self: self._json["slope"])
    second_order = property(lambda self: self._json["second_order"])
    order = property(lambda self: self._json["order"])
    sources = property(lambda self: self._json["sources"])
    omitted = property(lambda self: self._json["omitted"])
    switches = property(lambda self: self._json["finite_d_switches"])
    validity = property(lambda self: self._json["validity"])
    test_shift = property(lambda self: self._json.get("test_shift"))
    decomposition = property(lambda self: self._json["decomposition"])
    uncertainty = property(lambda self: self._json["uncertainty"])
    bayes_optimal = property(lambda self: self._json["bayes_optimal"])
    valid = property(lambda self: self._json["validity"]["valid"])

    @property
    def converged(self):
        return self._json["status"] == "converged"

    def __reduce__(self):
        return (type(self), (self._json,))

    def __repr__(self):
        e = self._json["error"]
        return (f"<FiniteDimResult dim={self._json['dim']} {self._json['status']} "
                f"tm={e['tm']:.6g} idg={e['idg']:.6g} odg={e['odg']:.6g}"
                f"{'' if self.valid else ' NOT VALID'}>")


class OptimizeResult(dict):
    """Result of optimize(): the dict of `icl optimize --json` (objective, over, argmin,
    minimum, converged, status, message, evaluations, interior_minima, range, scale, params).
    to_pandas(): one row with these and every parameter of the point (params, at argmin)."""

    def to_pandas(self):
        pd = _pandas()
        row = {k: v for k, v in self.items() if k not in ("params", "range")}
        row["lo"], row["hi"] = self["range"]
        row.update(parameter_columns(self["params"]))  # the point at argmin
        return pd.DataFrame([row])


class BoundaryResult(dict):
    """Result of boundary(): the dict of `icl boundary --json` (criterion, x, y, range, scale,
    [derivative,] converged, status, message, points, params).
    to_pandas(): one row per y value (the columns of its point: y, x (NaN where none), value,
    [slope,] converged, status, message, candidates, evaluations), then the criterion and every
    other parameter of the base point as constant columns. trace_to_pandas(): the traced curve
    (trace=True)."""

    def to_pandas(self):
        pd = _pandas()
        frame = pd.DataFrame([{k: _nan_if_none(v) for k, v in pt.items()} for pt in self["points"]])
        c = self["criterion"]
        frame["criterion"] = c["type"]
        frame["quantity"] = c["quantity"]
        if "level" in c:
            frame["level"] = c["level"]
        if "derivative" in self:
            frame["derivative"] = self["derivative"]
        return _with_parameters(frame, self._parameters_of(self["points"]))

    def _parameters_of(self, points):
        """Every parameter of each point {x: .., y: ..} by the library's Params.set from the
        base point (boundary() keeps it: alpha_test follows alpha, gamma = tau / kappa), or
        the base point's values (a result unpickled without it)."""
        base = getattr(self, "base", None)
        if base is None:
            return parameter_columns(self["params"])
        rows = []
        x, y = self["x"], self["y"]
        for pt in points:
            q = base.copy()
            q.set(y, pt[y])
            if pt[x] is not None:
                q.set(x, pt[x])
            rows.append(parameter_columns(q))
        return {k: np.array([r[k] for r in rows]) for k in rows[0]} if rows else {}

    def trace_to_pandas(self):
        """With trace=True: the traced curve, one row per point (x, y, value, residual,
        arclength), then the criterion and the base point's other parameters."""
        pd = _pandas()
        if "trace" not in self:
            raise ValueError("boundary(..., trace=True) has a trace; this result has none")
        frame = pd.DataFrame(self["trace"]["points"])
        frame["criterion"] = self["criterion"]["type"]
        frame["quantity"] = self["criterion"]["quantity"]
        return _with_parameters(frame, self._parameters_of(self["trace"]["points"]))


class CotResult(dict):
    """Result of cot(): the dict of `icl cot --json` (docs/multistep.md §6): steps, error (E_t),
    error_tau_infinity, tau_c, tau_monotone, tau_crit, regime, limit, growth_rate, t_opt,
    error_t_opt, converged, status, message, precision_bits, params; with simulate=True a
    "simulation" dict (mean, sem, median per step, spectral_radius per seed, dim, seeds, ...).
    to_pandas(): one row per step t with the theory's columns and the simulation's as sim_*."""

    def to_pandas(self):
        pd = _pandas()
        sim = self.get("simulation") or {}
        steps = self.get("steps") or list(range(len(sim.get("mean", []))))
        frame = pd.DataFrame({"t": np.asarray(steps, dtype=int)})
        for key in ("error", "error_tau_infinity"):
            if key in self:
                frame[key] = [_nan_if_none(v) for v in self[key]]
        for key in ("mean", "sem", "median"):
            if key in sim:
                frame["sim_" + key] = [_nan_if_none(v) for v in sim[key]]
        for k, v in self["params"].items():
            frame[k] = v
        return frame
