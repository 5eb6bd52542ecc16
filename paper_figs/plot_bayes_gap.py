"""Figure 14 (beyond the papers): IDG / ODG of linear attention against the Bayes-optimal
predictor from the test prompt alone (docs/errors_phases.md §17), against the context length alpha."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
t, m = fl.load(d, "bayes_gap")

fig, (ax, axr) = plt.subplots(1, 2, figsize=(9.5, 4.0))
for p in ["idg", "odg"]:
    ax.plot(t["alpha"], t[p], "-", color=fl.COLORS[p], label="%s linear attention" % fl.LABELS[p])
    ax.plot(t["alpha"], t["bayes_" + p], "--", color=fl.COLORS[p],
            label="%s Bayes-optimal" % fl.LABELS[p])
    axr.plot(t["alpha"], t[p] / t["bayes_" + p], "-", color=fl.COLORS[p], label=fl.LABELS[p])
fl.mark_failed(ax, t["alpha"], t["converged"])
for a in (ax, axr):
    a.set_xscale("log")
    a.set_xlabel(r"context length  $\alpha = L/D$  ($\alpha_{test} = \alpha$)")
ax.set_ylabel("test error")
ax.legend(loc="upper right")
axr.axhline(1.0, color="0.5", lw=0.8, ls=":")
axr.set_ylabel("error / Bayes-optimal error")
axr.legend(loc="upper left")
fl.corner(ax, fl.params_text(m["params"], skip=("alpha", "alpha_test", "gamma")), loc="lower left")
ax.set_title("Linear attention against the Bayes-optimal predictor")
axr.set_title("Ratio (1 = Bayes-optimal)")
fl.footer(fig, d, "bayes_gap")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "bayes_gap")
