"""Figure 13 (beyond the papers): where the IDG transition sits at finite context length.

The steepest point rho* of IDG along rho (max of |d IDG / d rho| on the linear rho axis, `icl
boundary --steepest idg`, docs/errors_phases.md §19) against alpha for several kappa, at sigma = 0,
lambda = 0, tau = 2.25: (a) rho* with the alpha -> infinity transition rho = kappa dashed; (b) the
distance (rho* - kappa)/kappa on log-log axes; (c) the largest slope against its alpha -> infinity
value (1 + kappa/(tau - 1)) / kappa (docs/errors_phases.md §10.2, §19.2)."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "transition_alpha")
p = m["params"]
tau = p["tau"]
kappas = sorted(set(t["kappa"]))
colors = plt.cm.viridis(np.linspace(0.1, 0.85, len(kappas)))

fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.0))
for c, kappa in zip(colors, kappas):
    s = t[t["kappa"] == kappa]
    ok = s["converged"] == 1
    a, rho, slope = s["alpha"], s["rho"], s["slope"]
    axes[0].plot(a[ok], rho[ok], "o-", ms=3, color=c, label=r"$\kappa=%s$" % fl.fmt(kappa))
    axes[0].axhline(kappa, ls="--", lw=1, color=c)
    fl.mark_failed(axes[0], a, s["converged"], label=False)
    dist = (rho - kappa) / kappa
    pos = ok & (dist > 0)
    axes[1].loglog(a[pos], dist[pos], "o-", ms=3, color=c, label=r"$\kappa=%s$" % fl.fmt(kappa))
    axes[2].plot(a[ok], slope[ok], "o-", ms=3, color=c, label=r"$\kappa=%s$" % fl.fmt(kappa))
    axes[2].axhline((1 + kappa / (tau - 1)) / kappa, ls="--", lw=1, color=c)

axes[0].set_xscale("log")
axes[0].set_xlabel(r"$\alpha$")
axes[0].set_ylabel(r"$\rho^*$ (steepest IDG along $\rho$)")
axes[0].set_title(r"(a) $\rho^*$; dashed: $\rho=\kappa$ ($\alpha\to\infty$)")
axes[0].legend(loc="lower right")
axes[1].set_xlabel(r"$\alpha$")
axes[1].set_ylabel(r"$(\rho^*-\kappa)/\kappa$")
axes[1].set_title(r"(b) distance to the $\alpha\to\infty$ transition")
axes[1].legend(loc="lower left")
axes[2].set_xscale("log")
axes[2].set_xlabel(r"$\alpha$")
axes[2].set_ylabel(r"max $|d\,$IDG$/d\rho|$")
axes[2].set_title(r"(c) largest slope; dashed: $(1+\kappa/(\tau-1))/\kappa$")
axes[2].legend(loc="lower right")
fl.corner(axes[0], fl.params_text(p, skip=("alpha", "alpha_test", "kappa", "rho", "gamma")),
          loc="upper left")
fl.title(fig, "Finite-$\\alpha$ position of the IDG transition (beyond the papers)",
         r"steepest point of IDG along $\rho\in[0.05,1]$ (the exact slope in $\rho$ "
         r"maximized by Brent), theory ($D\to\infty$)")
fig.tight_layout(rect=(0, 0.03, 1, 0.93))
fl.footer(fig, d, "transition_alpha")
fl.save(fig, d, "transition_alpha")
