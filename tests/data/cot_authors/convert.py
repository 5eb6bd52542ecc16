#!/usr/bin/python3
"""Convert the stored HDF5 results of the authors of the test-time iteration model (their
repository's theory_vs_experiment/, simplified_linear_dynamics/ and theory_phase_diagram/data/
folders at commit 1ed6569) into the TSV tables of this folder (one header row each).

    /usr/bin/python3 convert.py H5_FOLDER   (needs Debian's python3-tables)

Their files are written by Julia (column-major): PyTables reads the axes reversed, e.g. the
simulations (n_D, n_trials, T + 1) in Julia as [t, trial, D] here."""
import glob
import os
import sys

import numpy as np
import tables

HERE = os.path.dirname(os.path.abspath(__file__))


def read(path):
    with tables.open_file(path) as h:
        return {n._v_name: np.asarray(n.read()) for n in h.walk_nodes("/", "Array")}


def main(folder):
    theory = ["alpha\ttau\tsigma\tt\terror\tsource"]
    sims = ["alpha\ttau\tsigma\tlambda\tdim\ttest_tasks\ttrial\tt\terror\tsource"]
    for path in sorted(glob.glob(os.path.join(folder, "simplified_linear_dynamics_theory_experiment*.h5"))):
        d, name = read(path), os.path.basename(path)
        sigma = float(d["sigma"])
        # (the alpha = 1 file does not store lambda and n_test: nan and 0 here)
        lam = float(d["lambda"]) if "lambda" in d else float("nan")
        n_test = int(d["n_test"]) if "n_test" in d else 0
        e_th, e_sim = d["generalization_error_theory"], d["generalization_error_experiment"]
        if "Ds" in d:  # one (alpha, tau), several D: theory [t], simulations [t, trial, D]
            pts = [(float(d["alpha"]), float(d["tau"]), int(D), e_th, e_sim[:, :, k])
                   for k, D in enumerate(d["Ds"])]
            theory += [f"{pts[0][0]!r}\t{pts[0][1]!r}\t{sigma!r}\t{t}\t{e!r}\t{name}"
                       for t, e in enumerate(e_th)]
        else:  # one D, several alpha or tau: theory [t, k], simulations [t, trial, k]
            key = "alphas" if "alphas" in d else "taus"
            pts = []
            for k, v in enumerate(d[key]):
                a = float(v) if key == "alphas" else float(d["alpha"])
                tau = float(v) if key == "taus" else float(d["tau"])
                pts.append((a, tau, int(d["D"]), e_th[:, k], e_sim[:, :, k]))
                theory += [f"{a!r}\t{tau!r}\t{sigma!r}\t{t}\t{e!r}\t{name}"
                           for t, e in enumerate(e_th[:, k])]
        for a, tau, D, _, s in pts:
            for trial in range(s.shape[1]):
                sims += [f"{a!r}\t{tau!r}\t{sigma!r}\t{lam!r}\t{D}\t{n_test}\t{trial}\t{t}\t{e!r}\t{name}"
                         for t, e in enumerate(s[:, trial])]
    d = read(os.path.join(folder, "phase_diagram_theory.h5"))
    phase = ["alpha\ttau\tsigma\tt\terror"]
    e = d["errors_at_fixed_t"]  # Julia [alpha, tau] -> [tau, alpha] here
    for i, a in enumerate(d["alphas_trial"]):
        for j, tau in enumerate(d["taus_trial"]):
            phase.append(f"{float(a)!r}\t{float(tau)!r}\t{float(d['sigma'])!r}\t{int(d['t_max'])}\t{float(e[j, i])!r}")
    boundary = ["alpha\tsigma\ttau_c"] + [f"{float(a)!r}\t0.01\t{float(t)!r}"
                                          for a, t in zip(d["alphas"], d["taus_critical"])]
    for name, rows in (("theory", theory), ("simulations", sims), ("phase_theory", phase),
                       ("tau_c", boundary)):
        with open(os.path.join(HERE, name + ".tsv"), "w") as f:
            f.write("\n".join(rows) + "\n")
        print(name, len(rows) - 1, "rows")


if __name__ == "__main__":
    main(sys.argv[1])
