#!/usr/bin/env bash
# `pip install .` works offline from Debian packages, as a user would run it:
#   copy the source (git-tracked and new, not ignored, files) to WORK/src,
#   PYTHON -m venv --system-site-packages WORK/venv, pip install --no-build-isolation --no-index,
#   then import icl_theory from another folder and solve the default parameters.
# Usage: pip_install_check.sh SOURCE_DIR WORK_DIR [PYTHON]   (PYTHON default /usr/bin/python3)
# The build uses ccache when available (or CMAKE_CXX_COMPILER_LAUNCHER) and
# CMAKE_BUILD_PARALLEL_LEVEL (default 2); WORK_DIR is fixed so ccache hits on a rerun.
set -euo pipefail
src=$1 work=$2 python=${3:-/usr/bin/python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PYTHONHOME PIP_FIND_LINKS PIP_EXTRA_INDEX_URL PIP_INDEX_URL
export PIP_CONFIG_FILE=/dev/null   # offline and hermetic: no wheel folders from the environment

rm -rf "$work"
mkdir -p "$work/src" "$work/elsewhere"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
     xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
     tar --null -T - -cf -) | tar -xf - -C "$work/src"
else
  (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$work/src"
fi

start=$(date +%s)
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-build-isolation --no-index -v "$work/src"
echo "pip install took $(( $(date +%s) - start )) s"

cd "$work/elsewhere"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import sys, pathlib, importlib.metadata
import icl_theory as icl
venv = pathlib.Path(sys.argv[1]).resolve()
where = pathlib.Path(icl.__file__).resolve()
assert venv in where.parents, f"icl_theory imported from {where}, not from the venv {venv}"
assert importlib.metadata.version("icl-theory") == icl.__version__, icl.__version__
s = icl.solve(icl.Params())
assert s.converged, s
# The pure-Python layer came with the compiled core (the package's .py files).
import icl_theory.distributed
a = icl.solve(icl.Params(), alpha=[1.0, 2.0])
assert isinstance(a, icl.SolutionArray) and a.converged.all(), a
print("icl_theory", icl.__version__, "from", where)
print(s.error)
PY
