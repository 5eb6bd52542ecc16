#!/usr/bin/python3
"""Errors vs task rank rho across the phase boundary rho = kappa (notebook-style example).

The low-rank replica theory's phase-transition curve (docs/errors_phases.md §10): with
kappa = 0.5 (M0 = D/2 pretraining tasks), the empirical task covariance loses rank inside the
task subspace once rho > kappa, and the in-distribution error IDG rises steeply there, more so
for longer contexts. Theory curves (D -> infinity) from icl_theory.sweep, finite-D simulation
points from icl_theory.simulate (skip them with --no-sim), saved as a PNG. At D = 40 with
kappa = 0.5 there are only M0 = 20 tasks, so the points sit visibly above the curves (the O(1/D)
finite-size bias of docs/simulation.md §14; raise --dim to watch it shrink).

Run (after building the module into build/python):
    PYTHONPATH=build/python /usr/bin/python3 python/example_idg_vs_rho.py --out idg_vs_rho.png
"""
# %% setup
import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import icl_theory as icl  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--out", default="idg_vs_rho.png", help="PNG file to write")
parser.add_argument("--no-sim", action="store_true", help="theory curves only")
parser.add_argument("--dim", type=int, default=40, help="simulation dimension D")
parser.add_argument("--seeds", type=int, default=3, help="simulation seeds per point")
args = parser.parse_args()

base = icl.Params(alpha=2.0, tau=1.5, kappa=0.5, sigma=0.3)
alphas = [1.0, 2.0, 4.0]
# Rounded so that the grid hits rho = kappa = 0.5 exactly: within ~1e-9 of the boundary (but not
# on it) the saddle point's GSL quadrature currently reports a roundoff error (not converged).
rhos = np.round(np.linspace(0.05, 1.0, 39), 12)
print(f"base: {base!r}; rho_c = {icl.critical_rho(base)}, "
      f"transition reachable: {icl.has_transition(base)}")

# %% theory: one sweep over rho per context length (the GIL is released inside)
curves = {}
t0 = time.perf_counter()
for a in alphas:
    p = base.copy()
    p.alpha = a
    curves[a] = icl.sweep(p, "rho", rhos)
    bad = int((~curves[a]["converged"]).sum())
    print(f"alpha {a}: {len(rhos)} points, {bad} not converged")
print(f"theory: {time.perf_counter() - t0:.2f} s")

# %% simulation at finite D (mean +- standard error over seeds)
sims = {}
if not args.no_sim:
    t0 = time.perf_counter()
    sim_rhos = [0.2, 0.4, 0.6, 0.8, 1.0]
    for a in alphas:
        pts = []
        for r in sim_rhos:
            p = base.copy()
            p.alpha, p.rho = a, r
            est = icl.simulate(p, dim=args.dim, seeds=args.seeds, seed=1, threads=2)
            pts.append(est["error.idg"])
        sims[a] = (np.array(sim_rhos), np.array(pts))
    print(f"simulation (D = {args.dim}, {args.seeds} seeds): {time.perf_counter() - t0:.1f} s")

# %% plot
fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
for c, a in zip(colors, alphas):
    out = curves[a]
    axes[0].plot(out["rho"], out["idg"], color=c, label=f"alpha = {a:g}")
    if a in sims:
        r, pts = sims[a]
        axes[0].errorbar(r, pts[:, 0], yerr=pts[:, 1], fmt="o", color=c, ms=4, capsize=2)
    axes[1].plot(out["rho"], out["m0"], color=c, label=f"alpha = {a:g}")
axes[1].plot(rhos, np.minimum(rhos, base.kappa) / rhos, "k--", lw=1,
             label="alpha -> inf: min(rho, kappa)/rho")
for ax in axes:
    ax.axvline(icl.critical_rho(base), color="grey", ls=":", lw=1)
    ax.set_xlabel("task rank rho = r / D")
    ax.legend(frameon=False)
axes[0].set_ylabel("in-distribution error IDG")
axes[0].set_title(f"kappa = {base.kappa:g}, tau = {base.tau:g}, sigma = {base.sigma:g}"
                  + ("" if args.no_sim else f"\n(points: simulation at D = {args.dim})"), fontsize=10)
axes[1].set_ylabel("in-subspace overlap m0")
axes[1].set_title("kink at rho = kappa appears as alpha grows", fontsize=10)
fig.savefig(args.out, dpi=120)
print(f"wrote {args.out}")
