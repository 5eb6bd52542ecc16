"""Figure 12: thought patch (ridge fit of one static dW over m calibration queries): train and
held-out error against m, against no patch and the average of the m rank-1 patches."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "thought_patch")
tr = m["training"]
th = m["thought"]

fig, ax = plt.subplots(figsize=(7.8, 4.9))
x = t["m"]


def line(col, color, marker, label, ls="-", filled=True):
    y = np.maximum(t[col], 1e-16)
    fl.sim_points(ax, x, y, t[col + "_sem"], color, label=label, marker=marker, filled=filled)
    ax.plot(x, y, ls, color=color, lw=1.1)


line("heldout_no_patch", "k", "x", "no patch (held-out)", ls=":")
line("train_avg_rank1", "#ff7f0e", "v", "average of $m$ rank-1 patches, train", ls="--",
     filled=False)
line("heldout_avg_rank1", "#ff7f0e", "^", "average of $m$ rank-1 patches, held-out", ls="--")
line("train_err", "#1f77b4", "o", "thought patch (ridge), train", filled=False)
line("heldout_err", "#d62728", "s", "thought patch (ridge), held-out")
floor = 1e-16
low = [c for c in ("train_err", "train_avg_rank1") if (t[c] < floor).any()]
if low:
    ax.text(0.99, 0.02, "below %.0e (rounding; m = 1 is exact) drawn on the axis" % floor,
            transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_ylim(bottom=0.3e-16)
ax.set_xticks(x)
ax.set_xticklabels(["%d" % v for v in x])
ax.set_xlabel("calibration queries $m$  ($m = 1$: the rank-1 patch)")
ax.set_ylabel("MSE, patched query-only vs full-context output")
ax.legend(loc="center right", fontsize=7)
fl.title(fig, "Thought patch: one static $\\Delta W^*$ per context",
         "one plain block trained %d Adam steps; %d contexts of %d pairs (mean $\\pm$ s.e.), "
         "%d held-out queries, ridge %g" % (tr["steps"], th["contexts"], th["context"],
                                             th["heldout"], th["ridge"]))
fl.footer(fig, d, "thought_patch")
fig.tight_layout(rect=(0, 0.03, 1, 0.93))
fl.save(fig, d, "thought_patch")
