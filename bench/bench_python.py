"""Per-point cost of the theory from Python: single solves, reading their outputs, and sweeps.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py

CPU time (time.process_time), the best of 9 runs, per point, for 40 and 400 values of alpha at
the paper's point: `solve` alone, `solve` + one output (`.error`), + three outputs (`.error`,
`.bayes_optimal`, `.decomposition`), + `to_dict()`, and one `sweep` over the same values.
"""
import time

import numpy as np

import icl_theory as icl


def best(f, runs=9):
    times = []
    for _ in range(runs):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return min(times)


def main():
    p = icl.Params()
    for n in (40, 400):
        values = list(np.linspace(0.5, 8, n))
        points = [icl.Params(alpha=v) for v in values]
        cases = {
            "solve": lambda: [icl.solve(q) for q in points],
            "solve + .error": lambda: [icl.solve(q).error for q in points],
            "solve + 3 outputs": lambda: [
                (lambda s: (s.error, s.bayes_optimal, s.decomposition))(icl.solve(q))
                for q in points],
            "solve + to_dict()": lambda: [icl.solve(q).to_dict() for q in points],
            "sweep": lambda: icl.sweep(p, "alpha", values),
        }
        for name, f in cases.items():
            print("n = %3d  %-20s %6.1f us/point" % (n, name, best(f) / n * 1e6))


if __name__ == "__main__":
    main()
