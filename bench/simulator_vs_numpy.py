"""Side by side: `icl simulate --threads 1` against its numpy peer (bench/peer_simulator_numpy.py)
on one thread, CPU seconds per seed of data + training (each program's own timers, and the
process's CPU time), alternating the programs `--rounds` times; the median of the rounds.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/simulator_vs_numpy.py --icl build/cli/icl \\
        [--other-icl OLD/icl] [--dims 60:4,100:2,200:1] [--rounds 3]

Prints a TSV (one header row): dim, seeds, program, data_s, train_s, cpu_s (per seed, the whole
process including the theory and measurements for icl), cg_iterations.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def icl_row(icl, dim, seeds):
    out, cpu = run([icl, "simulate", "--dim", str(dim), "--seeds", str(seeds), "--threads", "1",
                    "--no-theory", "--prompts", "0", "--json", "--quiet"])
    j = json.loads(out)
    t = j["timing"]
    return (t["data_seconds"]["mean"], t["train_seconds"]["mean"], cpu / seeds,
            j["cg"]["iterations"]["mean"])


def numpy_row(dim, seeds):
    out, cpu = run([sys.executable, os.path.join(HERE, "peer_simulator_numpy.py"), "--dim",
                    str(dim), "--seeds", str(seeds)])
    rows = [json.loads(line) for line in out.splitlines()]
    mean = lambda k: statistics.mean(r[k] for r in rows)
    return mean("data_seconds"), mean("train_seconds"), cpu / seeds, mean("cg_iterations")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icl", required=True)
    ap.add_argument("--other-icl", help="a second icl build (e.g. the version before a change)")
    ap.add_argument("--dims", default="60:4,100:2,200:1")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        sys.exit("set OPENBLAS_NUM_THREADS=1 (numpy on one thread, as icl --threads 1)")
    programs = [("icl", lambda d, s: icl_row(a.icl, d, s))]
    if a.other_icl:
        programs.append(("icl_other", lambda d, s: icl_row(a.other_icl, d, s)))
    programs.append(("numpy", numpy_row))
    print("dim\tseeds\tprogram\tdata_s\ttrain_s\tcpu_s\tcg_iterations")
    for spec in a.dims.split(","):
        dim, seeds = map(int, spec.split(":"))
        results = {name: [] for name, _ in programs}
        for _ in range(a.rounds):
            for name, f in programs:
                results[name].append(f(dim, seeds))
        for name, rows in results.items():
            med = [statistics.median(r[i] for r in rows) for i in range(4)]
            print(f"{dim}\t{seeds}\t{name}\t{med[0]:.3f}\t{med[1]:.3f}\t{med[2]:.3f}\t{med[3]:.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
