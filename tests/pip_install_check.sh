#!/usr/bin/env bash
# `pip install .` works offline from Debian packages, as a user would run it:
#   copy the source (git-tracked and new, not ignored, files) to WORK/src,
#   PYTHON -m venv --system-site-packages WORK/venv, pip install --no-build-isolation --no-index,
#   then import icl_theory from another folder and solve the default parameters.
# pip runs on a terminal (the pty of util-linux `script`, where installed), as a user's does:
# setup.py's status ("[ NN%] file") must show there, and with -v the build's log; a build that
# fails (configure with a missing compiler) must fail pip with the log's tail and one line.
# WORK/venv is then the fixture of ctest python_jupyter_kernel.
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

"$python" -m venv --system-site-packages "$work/venv"
pip=("$work/venv/bin/python" -m pip install --no-build-isolation --no-index)
log=$work/src/build-python/build.log
on_terminal() {  # on_terminal TYPESCRIPT COMMAND...: run it on a pty, its screen output to TYPESCRIPT
  local typescript=$1; shift
  script -qec "$(printf '%q ' "$@")" "$typescript" </dev/null >/dev/null
}
if ! command -v script >/dev/null; then
  echo "note: no \`script\` (util-linux): pip runs without a terminal, its status is not checked"
  start=$(date +%s)
  "${pip[@]}" -v "$work/src"
  echo "pip install took $(( $(date +%s) - start )) s"
else
  if ICL_CMAKE_ARGS=-DCMAKE_CXX_COMPILER=/nonexistent/c++ on_terminal "$work/pip-fails.txt" "${pip[@]}" "$work/src"; then
    cat "$work/pip-fails.txt"; echo "FAIL: pip succeeded with a missing compiler"; exit 1
  fi
  for text in "icl_theory: the last lines of $log:" "is not a full path to an existing compiler" \
              "error: icl_theory: configuring failed (cmake exit 1); full log: $log"; do
    grep -qaF -- "$text" "$work/pip-fails.txt" ||
      { cat "$work/pip-fails.txt"; echo "FAIL: the failed pip does not say: $text"; exit 1; }
  done
  echo "a failing build fails pip with the log's tail and: $(grep -aoF "error: icl_theory: configuring failed" "$work/pip-fails.txt")"
  rm -rf "$work/src/build-python"   # its cache names the missing compiler

  start=$(date +%s)
  on_terminal "$work/pip-terminal.txt" "${pip[@]}" -v "$work/src" ||
    { cat "$work/pip-terminal.txt"; echo "FAIL: pip install"; exit 1; }
  echo "pip install took $(( $(date +%s) - start )) s"
  # The status is written after backspaces (setup.py's TerminalStatus; the first one after none),
  # the log after it (-v).
  for text in ' configuring' $'\b [100%]' $'\b installing' "Built target icl_theory_py"; do
    grep -qaF -- "$text" "$work/pip-terminal.txt" ||
      { cat "$work/pip-terminal.txt"; echo "FAIL: pip on a terminal does not show: ${text#$'\b'}"; exit 1; }
  done
  echo "pip on a terminal showed the status (configuring, [NN%] ..., installing) and, with -v, the log:"
  grep -a "Built target\|Linking" "$work/pip-terminal.txt" | tr -d '\r'
  grep -qF "[100%]" "$log" || { echo "FAIL: no build log $log"; exit 1; }
fi

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
