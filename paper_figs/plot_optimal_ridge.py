"""Figure 15 (beyond the papers): the ridge lambda that minimizes TM, IDG and ODG
(docs/errors_phases.md §18) and the error it reaches against the ridgeless error, against alpha."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
t, m = fl.load(d, "optimal_ridge")

fig, (ax, axe) = plt.subplots(1, 2, figsize=(9.5, 4.0))
for p in ["tm", "idg", "odg"]:
    ok = t[p + "_converged"] == 1
    ax.plot(t["alpha"][ok], t[p + "_lambda_opt"][ok], "o-", ms=3, color=fl.COLORS[p],
            label=fl.LABELS[p])
    axe.plot(t["alpha"], t[p + "_ridgeless"], "--", color=fl.COLORS[p],
             label=r"%s at $\lambda = 0$" % fl.LABELS[p])
    axe.plot(t["alpha"][ok], t[p + "_min"][ok], "-", color=fl.COLORS[p],
             label=r"%s at the optimal $\lambda$" % fl.LABELS[p])
    fl.mark_failed(ax, t["alpha"], t[p + "_converged"], label=(p == "tm"))
for a in (ax, axe):
    a.set_xscale("log")
    a.set_xlabel(r"context length  $\alpha = L/D$")
ax.set_yscale("log")
ax.set_ylabel(r"optimal ridge  $\lambda^*$  (searched in $[10^{-5}, 100]$)")
ax.legend(loc="best")
axe.set_ylabel("test error")
axe.legend(loc="upper right", ncol=2)
fl.corner(ax, fl.params_text(m["params"], skip=("alpha", "alpha_test", "gamma", "lambda")),
          loc="lower left")
ax.set_title("The optimal ridge depends on the protocol")
axe.set_title("What it buys")
fl.footer(fig, d, "optimal_ridge")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "optimal_ridge")
