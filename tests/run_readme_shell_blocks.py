"""Run every shell code block of README.md, line by line, as a user would (ctest readme_shell_blocks).

    run_readme_shell_blocks.py README.md BUILD_DIR WORK_DIR

Each ```sh line runs with `bash -c` in WORK_DIR (emptied first), in order, with BUILD_DIR/cli on
PATH (so `icl` is the built program) and `./build/` meaning BUILD_DIR; every line must exit 0.
Lines too slow for a test run in a quick variant: the substitutions in QUICK below (printed when
applied). Three kinds of lines are not run here, each with its reason printed: the two setup
commands (`apt-get ...`: .ci/run runs the test command verbatim and tests/readme_ci_sync.cmake
checks both), the offline pip install (tests/pip_install_check.sh), and `icl figs all`
(ctest figs_quick_pipeline runs the quick pipeline). A line needing GNU parallel is skipped when
`parallel` is not installed (CI installs it).
"""
import os
import re
import shutil
import subprocess
import sys

# (pattern, quick replacement): slow settings of the README's examples -> seconds-long ones.
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
NOT_HERE = [
    (r"^apt-get ", "setup/test command: run verbatim by .ci/run, checked by tests/readme_ci_sync.cmake"),
    (r"pip install", "the offline pip install: tests/pip_install_check.sh"),
    (r"^icl figs all", "the whole figure pipeline: ctest figs_quick_pipeline"),
]


def shell_lines(readme):
    text = open(readme, encoding="utf-8").read()
    for block in re.findall(r"```(?:sh|bash|shell)\n(.*?)```", text, re.S):
        for line in block.splitlines():
            code = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
            if code:
                yield code


def main():
    readme, build, work = sys.argv[1:4]
    build = os.path.abspath(build)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "cli") + os.pathsep + env.get("PATH", "")
    env["SLURM_ARRAY_TASK_ID"] = "0"  # the Slurm example's array index
    ran = 0
    for line in shell_lines(readme):
        reason = next((why for pat, why in NOT_HERE if re.search(pat, line)), None)
        if reason:
            print("not here: %s\n    (%s)" % (line[:90], reason))
            continue
        if line.startswith("parallel ") and shutil.which("parallel") is None:
            print("skipped (GNU parallel not installed): " + line)
            continue
        cmd = line
        for pat, rep in QUICK:
            cmd = re.sub(pat, rep, cmd)
        cmd = cmd.replace("./build/", build + "/")
        print(("$ " + cmd) if cmd == line else ("$ %s\n    (quick variant of: %s)" % (cmd, line)),
              flush=True)
        r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=600)
        if r.returncode != 0:
            print("FAILED (exit %d): %s\n%s" % (r.returncode, cmd, r.stderr[-2000:]))
            return 1
        ran += 1
    if ran == 0:
        print("no shell line ran: the README has no sh blocks?")
        return 1
    print("%d README shell lines ran" % ran)
    return 0


if __name__ == "__main__":
    sys.exit(main())
