"""Run every shell code block of the given Markdown files, line by line, as a user would.

    run_doc_shell_blocks.py BUILD_DIR WORK_DIR FILE.md [FILE.md ...]   (ctest docs_shell_blocks)

The ```sh (or ```bash, ```shell) lines of each file run with `bash -c`, in order, in a scratch
folder of that file (WORK_DIR/<file>, emptied first), with BUILD_DIR/cli on PATH (so `icl` is the
built program) and `./build/` meaning BUILD_DIR; every line must exit 0. A line ending in `\`
continues on the next one. Lines too slow for a test run in a quick variant: the substitutions
in QUICK below (printed when applied). Four kinds of lines are not run here, each with its
reason printed: the two setup commands of README.md (`apt-get ...`: .ci/run runs the test
command verbatim and tests/readme_ci_sync.cmake checks both), the offline pip install
(tests/pip_install_check.sh), the Jupyter kernel of that venv (KERNEL_ROUTE: run verbatim by
tests/python/jupyter_kernel_check.py), and `icl figs all` (ctest figs_quick_pipeline runs the
quick pipeline). A number with decimals in a line's trailing comment must be one the line
prints (STATED below; lines run as written only). A line needing GNU parallel is skipped when
`parallel` is not installed (CI installs it). A failed line is reported as FILE:LINE with its exit status and stderr; the rest of that
file is not run (later lines may need its output), the other files are.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the source tree

# (pattern, quick replacement): slow settings of the documented examples -> seconds-long ones.
QUICK = [
    (r"--train-steps \d+", "--train-steps 20"),
    (r"--dim \d+ --seeds \d+", "--dim 10 --seeds 2"),
    (r"--vary alpha=0\.5:8:64", "--vary alpha=0.5:8:8"),
    (r"--context 400 --prompts 8", "--context 40 --prompts 2"),
    (r"--prompts 64 --sgd-steps 1,10,100", "--prompts 4 --sgd-steps 1,10"),
    (r"--m 1,4,16,64,256 --heldout 256", "--m 1,4 --heldout 16"),
    (r"--sweep-rho 0\.1:1\.0:10", "--sweep-rho 0.1:1.0:3"),
    (r"(\./build/bench/bench_\w+)", r"\1 --benchmark_list_tests=true"),
]
# The Jupyter kernel of the pip-installed venv (install, run a notebook in it, list, remove).
KERNEL_ROUTE = r"ipykernel install|kernel_name=icl-theory|jupyter_client\.kernelspecapp"
NOT_HERE = [
    (r"^apt-get ", "setup/test command: run verbatim by .ci/run, checked by tests/readme_ci_sync.cmake"),
    (r"pip install", "the offline pip install: tests/pip_install_check.sh"),
    (KERNEL_ROUTE, "the venv's Jupyter kernel: tests/python/jupyter_kernel_check.py, verbatim"),
    (r"^icl figs all", "the whole figure pipeline: ctest figs_quick_pipeline"),
]
FENCE = re.compile(r"^```(sh|bash|shell)[ \t]*$")


# A number with decimals in a line's trailing comment ("# optimal ridge: 0.691") states what the
# line prints: it must be in the line's stdout at that precision (not a section number "§18.2").
STATED = re.compile(r"(?<![§\d.])\d+\.\d+")
PRINTED = re.compile(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?")


def unprinted(comment, stdout):
    """The numbers the comment states that stdout has at no precision of theirs."""
    printed = [float(x) for x in PRINTED.findall(stdout)]
    return [n for n in STATED.findall(comment)
            if not any("%.*f" % (len(n.split(".")[1]), x) == n for x in printed)]


def shell_lines(path):
    """(line number, command) for every command of the file's shell blocks, comments removed."""
    return [(start, code) for start, code, _ in commented_shell_lines(path)]


def commented_shell_lines(path):
    """(line number, command, trailing comment of its last line) for every command."""
    lines = open(path, encoding="utf-8").read().splitlines()
    inside, pending, start = False, "", 0
    for number, line in enumerate(lines, 1):
        if not inside:
            inside = bool(FENCE.match(line))
            continue
        if line.startswith("```"):
            inside = False
            continue
        code, _, comment = line.partition(" #") if not line.lstrip().startswith("#") else ("", "", "")
        code = code.strip()
        if not code:
            continue
        if not pending:
            start = number
        if code.endswith("\\"):
            pending += code[:-1].rstrip() + " "
            continue
        yield start, pending + code, comment
        pending = ""


def run_file(path, build, work, env):
    """Run one file's lines in order; returns (lines run, failure message or None)."""
    name = os.path.relpath(path, ROOT)
    name = path if name.startswith("..") else name  # a file outside the source tree
    stem = name[:-3] if name.endswith(".md") else name
    scratch = os.path.join(work, re.sub(r"[^A-Za-z0-9_.-]", "_", stem.lstrip("/")))
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    found = list(commented_shell_lines(path))
    print("== %s: %d shell lines, in %s" % (name, len(found), scratch), flush=True)
    ran = 0
    for number, line, comment in found:
        where = "%s:%d" % (name, number)
        reason = next((why for pat, why in NOT_HERE if re.search(pat, line)), None)
        if reason:
            print("%s: not here: %s\n    (%s)" % (where, line[:90], reason))
            continue
        if line.startswith("parallel ") and shutil.which("parallel") is None:
            print("%s: skipped (GNU parallel not installed): %s" % (where, line))
            continue
        cmd = line
        for pat, rep in QUICK:
            cmd = re.sub(pat, rep, cmd)
        cmd = cmd.replace("./build/", build + "/")
        print(("%s: $ %s" % (where, cmd)) if cmd == line else
              ("%s: $ %s\n    (quick variant of: %s)" % (where, cmd, line)), flush=True)
        r = subprocess.run(["bash", "-c", cmd], cwd=scratch, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=600)
        if r.returncode != 0:
            return ran, "FAILED: %s (exit %d): %s\n%s" % (where, r.returncode, cmd, r.stderr[-2000:])
        missing = unprinted(comment, r.stdout) if cmd == line else []
        if missing:
            return ran, "FAILED: %s: the comment states %s, the line does not print it:\n%s" % (
                where, ", ".join(missing), r.stdout[-2000:])
        ran += 1
    return ran, None


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    build, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "cli") + os.pathsep + env.get("PATH", "")
    env["SLURM_ARRAY_TASK_ID"] = "0"  # the Slurm example's array index
    total, failures = 0, []
    for path in sys.argv[3:]:
        ran, failure = run_file(os.path.abspath(path), build, work, env)
        total += ran
        if failure:
            print(failure, flush=True)
            failures.append(failure.splitlines()[0])
    if total == 0 and not failures:
        print("no shell line ran: the files have no sh blocks?")
        return 1
    print("%d shell lines ran in %d files" % (total, len(sys.argv) - 3))
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
