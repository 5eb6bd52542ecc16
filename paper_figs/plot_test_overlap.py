"""Figure 16 (beyond the papers): the test error against the overlap C of the test tasks with
the training subspace (docs/general_covariance.md §20): C = 1 is IDG, C = rho is ODG, C = 0 is entirely off
the learned structure. Theory line with its algo / mem / struct decomposition, simulation points
(one trained model per seed, evaluated on every test law)."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.0), sharey=False)
for ax, label, name in zip(axes, ["rich", "poor"], ["task-rich", "task-poor"]):
    th, m = fl.load(d, "test_overlap_" + label)
    sim, ms = fl.load(d, "test_overlap_%s_sim" % label)
    rho = m["params"]["rho"]
    ax.plot(th["test_overlap"], th["shift"], "-", color="k", label="error (theory)")
    for part in ["algo", "mem", "struct"]:
        ax.plot(th["test_overlap"], th["shift_" + part], "--", lw=1.1, color=fl.PART_COLORS[part],
                label=part)
    fl.sim_points(ax, sim["test_overlap"], sim["sim_shift"], sim["sim_shift_sem"], "k",
                  label="simulation")
    fl.mark_failed(ax, th["test_overlap"], th["converged"])
    idg = th["idg"][0]
    odg = th["odg"][0]
    ax.plot([1.0], [idg], "s", ms=7, mfc="none", color=fl.COLORS["idg"], label="IDG (C = 1)")
    ax.plot([rho], [odg], "D", ms=7, mfc="none", color=fl.COLORS["odg"],
            label=r"ODG (C = $\rho$)")
    ax.set_xlabel(r"overlap $C$ of the test tasks with the training subspace")
    ax.set_ylabel("test error")
    ax.set_title(r"%s ($\kappa = %s$, $\rho = %s$)" % (name, fl.fmt(m["params"]["kappa"]),
                                                      fl.fmt(rho)))
    ax.legend(loc="upper right", fontsize=7)
    fl.corner(ax, fl.params_text(m["params"], skip=("gamma",)) + "\n" + fl.sim_desc(ms),
              loc="lower left", fontsize=6.5)
fl.footer(fig, d, "test_overlap_rich")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "test_overlap")
