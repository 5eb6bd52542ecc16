"""Figure 18 (beyond the papers): the finite-D prediction of the errors (docs/finite_dim.md §21)
against simulations at each D, without extrapolation, next to the D -> infinity theory. Left: the
paper's point; middle: the task-poor tau < 1 point of the verify grid (the largest 1/D slope);
right: the ridgeless minimum-norm point (docs/finite_dim.md §21.10)."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
fig, axes = plt.subplots(1, 3, figsize=(14, 4.0))
for ax, label, name in zip(axes, ["paper", "poor", "ridgeless"],
                           ["paper's point", r"task-poor, $\tau < 1$",
                            r"ridgeless minimum norm, $\tau < 1$"]):
    th, m = fl.load(d, "finite_dim_" + label)
    sim = fl.read(d, "finite_dim_%s_sim" % label)
    inf = m["theory"]["limit_at_infinity"]
    for e in ["tm", "idg", "odg"]:
        c = fl.COLORS[e]
        ax.plot(th["inv_dim"], th["fd_" + e], "-", color=c, lw=1.4,
                label="%s finite-D theory" % e.upper())
        ax.axhline(inf[e], color=c, ls=":", lw=1.0)
        fl.sim_points(ax, sim["inv_dim"], sim["sim_" + e], sim["sim_%s_sem" % e], c,
                      label="%s simulation" % e.upper())
    fl.mark_failed(ax, th["inv_dim"], th["converged"])
    ax.set_xlim(0, 1.0 / 18)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo - 0.18 * (hi - lo), hi)  # room for the parameter box under the TM curve
    ax.set_xlabel(r"$1/D$")
    ax.set_ylabel("test error")
    ax.set_title("%s (dotted: $D \\to \\infty$)" % name)
    ax.legend(loc="upper left", fontsize=6.5, ncol=2)
    ms = fl.meta(d, "finite_dim_%s_sim" % label)["simulation"]
    fl.corner(ax, fl.params_text(m["params"], skip=("gamma",)) +
              "\nsimulation: D = %s, seeds %s" % (", ".join(str(x) for x in ms["dims"]),
                                                 ", ".join(str(x) for x in ms["seeds"])),
              loc="lower right", fontsize=6.0)
fl.footer(fig, d, "finite_dim_paper")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "finite_dim")
