"""The Jupyter kernel route of the pip-installed venv, as README.md and python/README.md give it.

Usage: jupyter_kernel_check.py SOURCE_DIR VENV WORK_DIR   (ctest python_jupyter_kernel, after
python_pip_install has made VENV)

Jupyter's default kernel is Debian's /usr/bin/python3, which does not see a venv's packages. The
documented lines that matter here (every shell line of the two files matching KERNEL_ROUTE of
tests/run_doc_shell_blocks.py, which therefore does not run them) run verbatim with bash, in
order, in WORK_DIR/user: a folder outside the source with `venv` (a link to VENV) and
`examples/01_theory_quickstart.ipynb` (a copy), HOME and the Jupyter folders in WORK_DIR (the
user's own kernels are neither read nor touched), PYTHONPATH unset. Checked: the notebook fails
with ModuleNotFoundError in the default kernel (unless /usr/bin/python3 imports icl_theory by
itself: said and not checked), the kernel the venv installs runs the venv's Python, the notebook
executes in it, the kernel is listed, and removed. Exit 77 (ctest SKIP_RETURN_CODE) with the
reason when Debian's jupyter, nbconvert or ipykernel is missing.
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from run_doc_shell_blocks import KERNEL_ROUTE, shell_lines  # noqa: E402

SKIP = 77
NOTEBOOK = "examples/01_theory_quickstart.ipynb"
KERNEL = "icl-theory"
KERNEL_FLAG = "--ExecutePreprocessor.kernel_name=" + KERNEL


def documented_lines(source):
    """(file:line, command) of the kernel route in README.md, then python/README.md."""
    found = []
    for name in ("README.md", "python/README.md"):
        for number, line in shell_lines(os.path.join(source, name)):
            if re.search(KERNEL_ROUTE, line):
                found.append(("%s:%d" % (name, number), line))
    return found


def run(where, cmd, cwd, env, expect_ok=True):
    print("%s: $ %s" % (where, cmd), flush=True)
    start = time.perf_counter()
    r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    print("    exit %d, %.1f s" % (r.returncode, time.perf_counter() - start), flush=True)
    if expect_ok and r.returncode != 0:
        sys.exit("FAILED: %s (exit %d): %s\n%s" % (where, r.returncode, cmd, r.stdout[-3000:]))
    return r


def main():
    source, venv, work = (os.path.abspath(a) for a in sys.argv[1:4])
    # The route is that of Debian's Jupyter (README.md's packages), whatever else is on PATH.
    jupyter = shutil.which("jupyter", path="/usr/bin")
    missing = [m for m in ("nbconvert", "ipykernel", "jupyter_client")
               if importlib.util.find_spec(m) is None]
    if jupyter is None or missing:
        print("SKIP: Debian's jupyter nbconvert / ipykernel missing (%s; apt-get install "
              "jupyter-nbconvert python3-ipykernel)" % ", ".join(missing or ["/usr/bin/jupyter"]))
        return SKIP

    lines = documented_lines(source)
    kinds = {kind: [w for w, line in lines if re.search(pattern, line)] for kind, pattern in
             [("install", r"ipykernel install --user --name %s\b" % KERNEL),
              ("execute", re.escape(KERNEL_FLAG)), ("list", r"kernelspecapp list"),
              ("remove", r"kernelspecapp remove -y %s\b" % KERNEL)]}
    absent = [kind for kind, where in kinds.items() if not where]
    if absent:
        sys.exit("FAILED: the docs have no kernel-route line to %s (found: %s)" % (absent, lines))

    shutil.rmtree(work, ignore_errors=True)
    user = os.path.join(work, "user")
    os.makedirs(os.path.join(user, "examples"))
    os.symlink(venv, os.path.join(user, "venv"))
    shutil.copy(os.path.join(source, NOTEBOOK), os.path.join(user, NOTEBOOK))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "JUPYTER", "IPYTHON", "XDG_"))}
    data = os.path.join(work, "jupyter-data")
    env.update(HOME=os.path.join(work, "home"), JUPYTER_DATA_DIR=data,
               JUPYTER_CONFIG_DIR=os.path.join(work, "jupyter-config"),
               JUPYTER_RUNTIME_DIR=os.path.join(work, "jupyter-runtime"),
               IPYTHONDIR=os.path.join(work, "ipython"), PYTHONDONTWRITEBYTECODE="1",
               PATH="/usr/bin:" + env.get("PATH", ""),
               PYDEVD_DISABLE_FILE_VALIDATION="1")  # the debugger's frozen-modules note
    os.makedirs(env["HOME"])

    # Without the kernel: the failure this route is for (the test could not fail otherwise).
    where, execute = next((w, line) for w, line in lines if KERNEL_FLAG in line)
    plain = subprocess.run(["/usr/bin/python3", "-c", "import icl_theory"], cwd=user, env=env,
                           capture_output=True)
    if plain.returncode == 0:
        print("note: /usr/bin/python3 imports icl_theory by itself (installed system-wide), "
              "so the default kernel would too: that check is left out")
    else:
        r = run(where + " without " + KERNEL_FLAG, execute.replace(KERNEL_FLAG, ""), user, env,
                expect_ok=False)
        if r.returncode == 0 or "ModuleNotFoundError: No module named 'icl_theory'" not in r.stdout:
            sys.exit("FAILED: the default kernel should not import icl_theory:\n" + r.stdout[-3000:])
        print("    ModuleNotFoundError in the default kernel, as expected", flush=True)

    spec = os.path.join(data, "kernels", KERNEL, "kernel.json")
    ran = {}
    for where, line in lines:
        if line in ran:  # the two files give the same command: run once
            print("%s: same as %s" % (where, ran[line]))
            continue
        ran[line] = where
        r = run(where, line, user, env)
        if where in kinds["install"]:
            argv0 = json.load(open(spec))["argv"][0]
            if os.path.realpath(argv0) != os.path.realpath(os.path.join(venv, "bin", "python")):
                sys.exit("FAILED: the kernel runs %s, not the venv's python" % argv0)
        elif where in kinds["list"] and not re.search(r"^\s*%s\s+%s" % (KERNEL, re.escape(
                os.path.dirname(spec))), r.stdout, re.M):
            sys.exit("FAILED: %s is not listed in %s:\n%s" % (KERNEL, data, r.stdout))
        elif where in kinds["remove"] and os.path.exists(os.path.dirname(spec)):
            sys.exit("FAILED: %s is still installed after %s" % (KERNEL, where))
    print("kernel route: %d documented lines ran (%d distinct), the notebook executed in the "
          "venv's kernel" % (len(lines), len(ran)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
