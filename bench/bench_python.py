"""Speed of the Python entry points, in microseconds per solved point (best of `--repeat`).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--points 2000] [--repeat 5]

The same points (alpha on a grid at the default Params; the cost of a solve depends on the
point) are solved by: a Python loop over solve() with scalars (alone, then reading one output
`.error`, three outputs `.error`, `.bayes_optimal`, `.decomposition`, and `to_dict()`), one
vectorized solve() with an array (1 and 2 threads; then, on 1 thread, the reduced method at
lambda = 0 and lambda = 0.01, and Letey/Lu), sweep() (continuation, one thread) and phase_grid()
(2 threads).
"""
import argparse
import time

import numpy as np

import icl_theory as icl


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    p = icl.Params()
    ridge = icl.Params(lambda_=0.01)
    xs = np.linspace(0.5, 8.0, a.points)
    n = len(xs)
    points = [icl.Params(alpha=float(x)) for x in xs]
    rows = [
        ("solve(), Python loop over scalars", lambda: [icl.solve(p, alpha=x) for x in xs]),
        ("solve() + .error", lambda: [icl.solve(q).error for q in points]),
        ("solve() + 3 outputs", lambda: [
            (lambda s: (s.error, s.bayes_optimal, s.decomposition))(icl.solve(q)) for q in points]),
        ("solve() + to_dict()", lambda: [icl.solve(q).to_dict() for q in points]),
        ("solve(alpha=array), threads=1", lambda: icl.solve(p, alpha=xs, threads=1)),
        ("solve(alpha=array), threads=2", lambda: icl.solve(p, alpha=xs, threads=2)),
        ("solve(alpha=array), reduced, lambda=0",
         lambda: icl.solve(p, alpha=xs, threads=1, method="reduced")),
        ("solve(alpha=array), reduced, lambda=0.01",
         lambda: icl.solve(ridge, alpha=xs, threads=1, method="reduced")),
        ("solve(alpha=array), letey", lambda: icl.solve(p, alpha=xs, threads=1, method="letey")),
        ("sweep(p, 'alpha', values)", lambda: icl.sweep(p, "alpha", xs)),
        ("phase_grid(alpha x rho), threads=2",
         lambda: icl.phase_grid(p, "alpha", xs[: n // 10], "rho", np.linspace(0.1, 1.0, 10),
                                threads=2)),
    ]
    print(f"{n} points, best of {a.repeat}")
    for label, f in rows:
        print(f"{label:40s} {best(f, a.repeat) / n * 1e6:8.1f} us/point")


if __name__ == "__main__":
    main()
