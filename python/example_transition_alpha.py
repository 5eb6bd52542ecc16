#!/usr/bin/python3
"""Where the IDG transition sits at finite context length (notebook-style example).

As alpha -> infinity (sigma = 0, lambda = 0, tau > 1) IDG has a kink at rho = kappa
(docs/errors_phases.md §10.2). At finite alpha the kink is smoothed; icl_theory.boundary finds, for each
alpha, the steepest point rho* of IDG along rho (the largest |d IDG / d rho| on the linear rho axis;
log_x=True would take d / d ln rho, docs/errors_phases.md §19). The same data as figure 13 (`icl figs transition_alpha`), from Python, saved as a PNG.

Run (after building the module into build/python):
    PYTHONPATH=build/python /usr/bin/python3 python/example_transition_alpha.py --out transition.png
"""
# %% setup
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import icl_theory as icl  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--out", default="transition_alpha.png", help="PNG file to write")
args = parser.parse_args()

alphas = np.logspace(0, 4, 17)
kappas = [0.3, 0.5, 0.7]

# %% the steepest point of IDG along rho, per alpha, for each kappa
curves = {}
for kappa in kappas:
    p = icl.Params(kappa=kappa, sigma=0.0, lambda_=0.0, tau=2.25)
    b = icl.boundary(p, "rho", "alpha", list(alphas), criterion="steepest", quantity="idg",
                     range=(0.05, 1.0), scan_points=81)
    print(f"kappa {kappa}: {b['message']}")
    rho = np.array([np.nan if pt["rho"] is None else pt["rho"] for pt in b["points"]])
    slope = np.array([pt["slope"] for pt in b["points"]])
    curves[kappa] = (rho, slope)
    print("  alpha  rho*    slope (limit %.3f)" % ((1 + kappa / 1.25) / kappa))
    for a, r, s in zip(alphas[::4], rho[::4], slope[::4]):
        print(f"  {a:7.0f} {r:.4f}  {s:.4f}")

# %% plot: rho* against alpha, and its distance to kappa
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
for kappa, (rho, _) in curves.items():
    line, = ax1.semilogx(alphas, rho, "o-", ms=3, label=f"kappa = {kappa}")
    ax1.axhline(kappa, ls="--", lw=1, color=line.get_color())
    ax2.loglog(alphas, (rho - kappa) / kappa, "o-", ms=3, color=line.get_color())
ax1.set(xlabel="alpha", ylabel="rho* (steepest IDG along rho)", title="dashed: rho = kappa")
ax2.set(xlabel="alpha", ylabel="(rho* - kappa) / kappa", title="approach to the alpha -> inf transition")
ax1.legend()
fig.tight_layout()
fig.savefig(args.out, dpi=110)
print(f"wrote {args.out}")
