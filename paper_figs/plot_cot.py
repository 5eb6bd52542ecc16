"""Figure 20 (beyond the papers): the test-time iteration (docs/multistep.md). Left: E_t against
t for the four behaviours (theory lines, simulations at two D as points with s.e.). Right: the
regimes in the (alpha, tau) plane (log10 E_T from the theory, the boundaries tau_c and
tau_monotone as lines)."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
th, m = fl.load(d, "cot_dynamics")
sim = fl.read(d, "cot_dynamics_sim")
ms = fl.meta(d, "cot_dynamics_sim")["simulation"]
fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.0, 4.2))
colors = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd"]
markers = ["o", "s"]
for c in m["curves"]:
    k, col = c["curve"], colors[c["curve"] % len(colors)]
    sel = th["curve"] == k
    ax.semilogy(th["t"][sel], th["error"][sel], "-", color=col,
                label=r"%s ($\alpha$=%g, $\tau$=%g)" % (c["label"], c["alpha"], c["tau"]))
    fl.mark_failed(ax, th["t"][sel], th["converged"][sel])
    for dim, mk in zip(ms["dims"], markers):
        s = (sim["curve"] == k) & (sim["dim"] == dim)
        ax.errorbar(sim["t"][s], sim["mean"][s], yerr=sim["sem"][s], fmt=mk, ms=3,
                    mfc="none" if mk == "s" else col, color=col, lw=0.8)
for dim, mk in zip(ms["dims"], markers):
    ax.plot([], [], mk, color="gray", mfc="none" if mk == "s" else "gray",
            label="simulation D = %d" % dim)
ax.set_xlabel("test-time step t")
ax.set_ylabel(r"$E_t = |w - w_t|^2 / D$")
ax.set_title(r"$E_t$ against $t$ ($\sigma$ = %g)" % m["curves"][0]["sigma"])
ax.legend(fontsize=6.5, loc="upper left")

g, gm = fl.load(d, "cot_regimes")
b = fl.read(d, "cot_boundaries")
alphas, taus = np.unique(g["alpha"]), np.unique(g["tau"])
z = np.log10(np.clip(g["error_last"], 1e-12, 1e12)).reshape(len(alphas), len(taus)).T
im = bx.pcolormesh(alphas, taus, z, shading="nearest", cmap="viridis")
fig.colorbar(im, ax=bx, label=r"$\log_{10} E_T$, T = %d" % gm["steps"])
bx.plot(b["alpha"], b["tau_c"], "w-", lw=1.5, label=r"$\tau_c$ (oscillatory)")
bx.plot(b["alpha"], b["tau_monotone"], "w--", lw=1.5, label=r"$\tau_{mono}$ (monotone)")
bx.set_ylim(taus.min(), taus.max())
bx.set_xlim(alphas.min(), alphas.max())
bx.set_xlabel(r"$\alpha = L/D$")
bx.set_ylabel(r"$\tau = M/D$")
bx.set_title(r"regimes ($\sigma$ = %g): convergent above both lines" % gm["params"]["sigma"])
bx.legend(fontsize=7, loc="upper right")
fl.footer(fig, d, "cot_dynamics")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "cot")
