"""Execute one example notebook as a user would (jupyter nbconvert --execute), fail on any error.

Usage: run_notebook.py NOTEBOOK OUTDIR [MODULE ...]

The notebook must be committed with its outputs stripped (checked first). It runs in a kernel
whose Python is this interpreter (a kernelspec written under OUTDIR, so a user's own kernels
do not matter) and which finds icl_theory through PYTHONPATH. Exit 77 (ctest SKIP_RETURN_CODE)
with the reason when nbconvert, ipykernel or one of the MODULEs the notebook needs is missing.
"""
import importlib.util
import json
import os
import subprocess
import sys
import time

SKIP = 77


def main():
    notebook, outdir, needs = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(notebook) as f:
        nb = json.load(f)
    dirty = [i for i, c in enumerate(nb["cells"])
             if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    if dirty:
        sys.exit(f"{notebook}: outputs not stripped in code cells {dirty} "
                 "(jupyter nbconvert --clear-output --inplace)")
    for module in ["nbconvert", "ipykernel"] + needs:
        if importlib.util.find_spec(module) is None:
            print(f"SKIP: {module} is not installed for {sys.executable} "
                  "(Debian: jupyter-nbconvert python3-ipykernel python3-pandas "
                  "python3-distributed)")
            sys.exit(SKIP)

    # One kernelspec folder per notebook: the notebook tests run in parallel.
    jupyter_dir = os.path.join(outdir, "jupyter-" + os.path.splitext(os.path.basename(notebook))[0])
    kernel_dir = os.path.join(jupyter_dir, "kernels", "icl-python3")
    os.makedirs(kernel_dir, exist_ok=True)
    with open(os.path.join(kernel_dir, "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                            "{connection_file}"],
                   "display_name": "icl-theory tests", "language": "python"}, f)
    env = dict(os.environ)
    env["JUPYTER_PATH"] = jupyter_dir + os.pathsep + env.get("JUPYTER_PATH", "")
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.kernel_name=icl-python3", "--ExecutePreprocessor.timeout=600",
         "--output-dir", outdir, notebook], env=env)
    print(f"{os.path.basename(notebook)}: executed in {time.perf_counter() - start:.1f} s "
          f"(exit {run.returncode})")
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
