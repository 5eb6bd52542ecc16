"""Figure 5: the phase transition at rho = kappa. TM / IDG / ODG against rho for several alpha
(sigma 0.3 and 0), the (rho, kappa) phase diagram with the boundary rho = kappa, and the
specialization-robustness trade-off (TM/IDG against ODG as rho varies)."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
th, m = fl.load(d, "phase")
sim, ms = fl.load(d, "phase_sim")
pdg, mp = fl.load(d, "phase_diagram")
p = m["params"]
kappa, tau = p["kappa"], p["tau"]
alphas = sorted(set(th["alpha"]))
cmap = plt.get_cmap("plasma")
acolor = {al: cmap(0.85 * i / max(1, len(alphas) - 1)) for i, al in enumerate(alphas)}

fig, axes = plt.subplots(3, 3, figsize=(12.5, 11.5))
for row, sg in enumerate([0.3, 0.0]):
    for col, q in enumerate(["tm", "idg", "odg"]):
        ax = axes[row, col]
        for al in alphas:
            sel = (th["sigma"] == sg) & (th["alpha"] == al)
            ax.plot(th["rho"][sel], th[q][sel], "-", color=acolor[al],
                    label=r"$\alpha=%s$" % fl.fmt(al))
            fl.mark_failed(ax, th["rho"][sel], th["converged"][sel], label=False)
            ss = (sim["sigma"] == sg) & (sim["alpha"] == al)
            if ss.any():
                fl.sim_points(ax, sim["rho"][ss], sim["sim_" + q][ss], sim["sim_" + q + "_sem"][ss],
                              acolor[al], ms=4)
        if q == "idg" and sg == 0.0:
            r = np.linspace(0.01, 1, 400)
            lim = np.where(r < kappa, 0.0, (1 - kappa / r) * (1 + kappa / (tau - 1)))
            ax.plot(r, lim, "--", color="k", lw=1.2,
                    label=r"$\alpha\to\infty$: $(1-\kappa/\rho)(1+\kappa/(\tau-1))$")
        ax.axvline(kappa, color="0.5", ls=":", lw=1)
        ax.text(kappa, 0.98, r" $\rho=\kappa$", transform=ax.get_xaxis_transform(), va="top",
                fontsize=7, color="0.3")
        ax.set_yscale("log")
        ax.set_xlabel(r"task rank $\rho = r/D$")
        ax.set_ylabel("%s error" % fl.LABELS[q])
        ax.set_title(r"(%s) %s, $\sigma=%s$" % ("abcdef"[3 * row + col], fl.LABELS[q], fl.fmt(sg)))
        if col == 1:
            ax.legend(loc="lower right", ncol=2 if sg == 0.0 else 1, fontsize=7)
        nbad = int((th["converged"][th["sigma"] == sg] == 0).sum())
        if nbad and col == 0:
            fl.corner(ax, "%d theory points not converged (red x)" % nbad, loc="lower right")

# (g), (h) phase diagram
rho_u = np.unique(pdg["rho"])
kap_u = np.unique(pdg["kappa"])
def grid(key):
    z = np.full((len(kap_u), len(rho_u)), np.nan)
    for r in pdg:
        z[np.searchsorted(kap_u, r["kappa"]), np.searchsorted(rho_u, r["rho"])] = r[key]
    return z
pgp = mp["params"]
for ax, key, label, title, log in [
        (axes[2, 0], "idg", r"$\log_{10}$ IDG", "(g) IDG on the $(\\rho,\\kappa)$ plane", True),
        (axes[2, 1], "m0", r"$m_0$", r"(h) $m_0=\mathrm{tr}(A^T\Gamma A)/r$", False)]:
    z = grid(key)
    if log:
        z = np.log10(z)
    ax.grid(False)
    im = ax.pcolormesh(rho_u, kap_u, z, shading="nearest", cmap="viridis")
    fig.colorbar(im, ax=ax, label=label, pad=0.02)
    bad = grid("converged") == 0
    if bad.any():
        kk, rr = np.nonzero(bad)
        ax.plot(rho_u[rr], kap_u[kk], "x", color="red", ms=5, label="not converged")
    x = np.linspace(0, 1, 10)
    ax.plot(x, x, "w--", lw=1.8)
    ax.text(0.2, 1.2, "task-rich\n" + r"$\rho<\kappa$", color="w", fontsize=8, ha="center")
    ax.text(0.75, 0.25, "task-poor\n" + r"$\rho>\kappa$", color="w", fontsize=8, ha="center")
    ax.set_xlim(rho_u[0], rho_u[-1])
    ax.set_ylim(kap_u[0], kap_u[-1])
    ax.set_xlabel(r"$\rho$")
    ax.set_ylabel(r"$\kappa$")
    ax.set_title(title)
fl.corner(axes[2, 0], fl.params_text(pgp, keys=("alpha", "tau", "sigma", "lambda")),
          loc="upper left", fontsize=6.5)

# (i) trade-off: TM / IDG against ODG as rho varies (task-rich side marked)
ax = axes[2, 2]
for al, ls in [(8.0, "-"), (32.0, "--")]:
    sel = (th["sigma"] == 0.3) & (th["alpha"] == al)
    for q in ["tm", "idg"]:
        ax.plot(th["odg"][sel], th[q][sel], ls, color=fl.COLORS[q],
                label=r"%s, $\alpha=%s$" % (fl.LABELS[q], fl.fmt(al)))
    rr = th["rho"][sel]
    for rv in [0.1, 0.3, 0.5, 0.7, 0.9]:
        i = np.argmin(np.abs(rr - rv))
        ax.plot(th["odg"][sel][i], th["idg"][sel][i], "o", color=fl.COLORS["idg"], ms=3.5)
        if al == 32.0:
            ax.annotate(r"$\rho=%s$" % fl.fmt(rv), (th["odg"][sel][i], th["idg"][sel][i]),
                        textcoords="offset points", xytext=(4, -9), fontsize=6.5)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("ODG error (robustness)")
ax.set_ylabel("TM / IDG error (specialization)")
ax.set_title(r"(i) trade-off along $\rho$ ($\sigma=0.3$, $\kappa=%s$)" % fl.fmt(kappa))
ax.legend(loc="upper left", fontsize=7)
fl.title(fig, r"Phase transition at $\rho=\kappa$ (task-rich $\rho<\kappa$, task-poor $\rho>\kappa$)",
         "(a)-(f): " + fl.params_text(p, keys=("tau", "kappa", "lambda")) +
         r", $\alpha_{test}=\alpha$; lines: theory; points: " + fl.sim_desc(ms))
fl.footer(fig, d, "phase")
fig.tight_layout(rect=(0, 0.02, 1, 0.965))
fl.save(fig, d, "phase")
