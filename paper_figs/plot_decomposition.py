"""Figure 1: decomposition of the TM / IDG / ODG error into algo + mem + struct against alpha."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
th, m = fl.load(d, "decomposition")
sim, ms = fl.load(d, "decomposition_sim")

fig, axes = plt.subplots(1, 3, figsize=(11.5, 4.9), sharey=True)
a = th["alpha"]
sa = sim["alpha"]
for ax, p in zip(axes, ["tm", "idg", "odg"]):
    ax.plot(a, th[p], "--", color="k", lw=1.8, label="total (theory)", zorder=4)
    for part, name in [("algo", "algo"), ("mem", "mem"), ("struct", "struct")]:
        ax.plot(a, th[p + "_" + part], "-", color=fl.PART_COLORS[part], lw=1.4,
                label=name + " (theory)")
    ax.plot(a, th[p + "_mem"] + th[p + "_struct"], ":", color="0.45", lw=1.4,
            label="mem + struct (theory)")
    fl.sim_points(ax, sa, sim["sim_" + p], sim["sim_" + p + "_sem"], "k",
                  label="total (simulation)")
    fl.sim_points(ax, sa, sim["sim_%s_algo" % p], sim["sim_%s_algo_sem" % p],
                  fl.PART_COLORS["algo"], label="algo (simulation)", marker="s", filled=False)
    fl.sim_points(ax, sa, sim["sim_%s_excess" % p], sim["sim_%s_excess_sem" % p], "0.45",
                  label="total $-$ algo (simulation)", marker="^", filled=False)
    fl.mark_failed(ax, a, th["converged"])
    ax.set_xscale("log")
    ax.set_title("%s" % fl.LABELS[p])
    ax.set_xlabel(r"context length $\alpha = L/D$")
axes[0].set_ylabel("test error")
axes[0].set_ylim(bottom=0)
top = np.nanmax([np.nanmax(th[p]) for p in ("tm", "idg", "odg")])
axes[0].set_ylim(0, 1.08 * top)
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=4, bbox_to_anchor=(0.5, 0.03),
           frameon=False)
fl.title(fig, "Error decomposition: algorithmic signal, memorization noise, structural noise",
         fl.params_text(m["params"], skip=("alpha", "alpha_test")) + r", $\alpha_{test}=\alpha$;  "
         + fl.sim_desc(ms))
fl.footer(fig, d, "decomposition")
fig.tight_layout(rect=(0, 0.14, 1, 0.94))
fl.save(fig, d, "decomposition")
