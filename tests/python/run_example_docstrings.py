"""Each python/example_*.py runs as its docstring says (ctest python_examples_as_documented).

Usage: run_example_docstrings.py SOURCE_DIR BUILD_DIR WORK_DIR

The docstring's commands (its indented lines that name the example) run verbatim with bash in
WORK_DIR/<example>, where `build` links to BUILD_DIR and `python` to SOURCE_DIR/python, as from
the repository root after the README's build, with PYTHONPATH unset: a command that names
another build folder (the example once said build-py/python) fails there. Exit 77 (skipped)
without matplotlib, which the examples plot with.
"""
import ast
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import time

SKIP = 77


def commands(path):
    """The indented docstring lines of the example that run it."""
    doc = ast.get_docstring(ast.parse(open(path, encoding="utf-8").read()), clean=False) or ""
    name = "python/" + os.path.basename(path)
    return [line.strip() for line in doc.splitlines()
            if line.startswith("    ") and name in line]


def main():
    source, build, work = (os.path.abspath(a) for a in sys.argv[1:4])
    if importlib.util.find_spec("matplotlib") is None:
        print("SKIP: matplotlib is not installed for %s (Debian: python3-matplotlib)" % sys.executable)
        return SKIP
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    examples = sorted(glob.glob(os.path.join(source, "python", "example_*.py")))
    if not examples:
        sys.exit("FAILED: no python/example_*.py in %s" % source)
    for path in examples:
        stem = os.path.splitext(os.path.basename(path))[0]
        found = commands(path)
        if not found:
            sys.exit("FAILED: %s: its docstring gives no indented command running it" % path)
        scratch = os.path.join(work, stem)
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
        os.symlink(build, os.path.join(scratch, "build"))
        os.symlink(os.path.join(source, "python"), os.path.join(scratch, "python"))
        for cmd in found:
            print("%s: $ %s" % (stem, cmd), flush=True)
            start = time.perf_counter()
            r = subprocess.run(["bash", "-c", cmd], cwd=scratch, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            print("    exit %d, %.1f s" % (r.returncode, time.perf_counter() - start), flush=True)
            if r.returncode != 0:
                sys.exit("FAILED: %s's documented command (exit %d): %s\n%s"
                         % (stem, r.returncode, cmd, r.stdout[-3000:]))
    print("%d examples ran as their docstrings say" % len(examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
