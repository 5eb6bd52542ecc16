"""One-line argument errors for every public function of icl_theory (internal).

pybind11 answers a mistyped keyword with a dump of every overload's signature, and a Python
function with a bare "unexpected keyword argument". `friendly(fn)` checks the keywords first,
naming the unknown one and the closest known name (the library's rule,
numerics::closest_name, as the command line's "did you mean"), refuses a first argument that
should be Params with what was given, and turns pybind11's "incompatible function arguments"
into one line with the expected signature.
"""
import functools
import inspect
import re

from . import _core

# "name: type" at the top level of a pybind11 signature "f(a: T, *, b: U = 1) -> R".
_SIGNATURE = re.compile(r"^\s*(?:\d+\.\s*)?(\w+)\((.*)\)\s*->", re.M)
_ARGUMENT = re.compile(r"(?:^|[(,])\s*(\*{0,2}\w+)\s*:")


def _accepted(fn):
    """The keyword names fn accepts, or None when it takes any (**kwargs)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a pybind11 function: read its docstring's signatures
        names = []
        for m in _SIGNATURE.finditer(fn.__doc__ or ""):
            for name in _ARGUMENT.findall("(" + m.group(2)):
                if name.startswith("**"):
                    return None
                if not name.startswith("*"):
                    names.append(name)
        return names or None
    params = sig.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _first_is_params(fn, accepted):
    try:
        first = next(iter(inspect.signature(fn).parameters), None)
    except (TypeError, ValueError):
        first = accepted[0] if accepted else None
    return first in ("params", "base")


def friendly(fn, name=None):
    name = name or fn.__name__
    accepted = _accepted(fn)
    wants_params = _first_is_params(fn, accepted)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if accepted is not None:
            for key in kwargs:
                if key not in accepted:
                    raise TypeError(f"{name}() got an unexpected keyword argument '{key}'"
                                    + _core._did_you_mean(key, accepted)) from None
        if wants_params and args and args[0] is not None and not isinstance(args[0], _core.Params):
            raise TypeError(f"{name}(): params must be an icl_theory.Params "
                            f"(e.g. Params(alpha=2)), got {type(args[0]).__name__} "
                            f"{args[0]!r:.60}") from None
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if "incompatible function arguments" not in str(e):
                raise
            got = ", ".join([type(a).__name__ for a in args]
                            + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
            first = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else name + "(...)"
            raise TypeError(f"{name}(): arguments of the wrong type ({got}); "
                            f"expected {first}") from None
    return call


def wrap_public_functions(namespace):
    """Every public function of the module namespace (not the classes) through friendly()."""
    for key, value in list(namespace.items()):
        if key.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
            continue
        if callable(value) and not getattr(value, "_icl_friendly", False):
            wrapped = friendly(value, key)
            wrapped._icl_friendly = True
            namespace[key] = wrapped
