"""Figure 7: one softmax-attention layer (points, mean +- s.e. over seeds) against the
linear-attention theory (lines) and the linear-attention simulation (open points), vs rho."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
pts, m = fl.load(d, "softmax")
alphas = m["alphas"]
sm = m["softmax"]

fig, axes = plt.subplots(1, len(alphas), figsize=(12, 4.6), sharey=True)
legend = {}  # label -> handle, in the order of the legend
for ax, a in zip(axes, alphas):
    th = fl.read(d, "softmax_theory_a%d" % int(a))
    sel = pts[pts["alpha"] == a]
    rho = sel["rho"]
    for p in ("tm", "idg", "odg"):
        c = fl.COLORS[p]
        L = fl.LABELS[p]
        legend.setdefault("%s linear theory (D = inf)" % L, ax.plot(
            th["rho"], th[p], "-", color=c, lw=1.4)[0])
        legend.setdefault("%s linear simulation" % L, fl.sim_points(
            ax, rho - 0.008, sel["linsim_" + p + "_mean"], sel["linsim_" + p + "_sem"], c, marker="o",
            filled=False, ms=4))
        legend.setdefault("%s softmax attention" % L, fl.sim_points(
            ax, rho + 0.008, sel["softmax_" + p + "_mean"], sel["softmax_" + p + "_sem"], c, marker="D",
            ms=5))
    if fl.mark_failed(ax, th["rho"], th["converged"], label=False):
        legend.setdefault("theory not converged", ax.lines[-1])
    bad = sel["softmax_ok"] == 0
    if bad.any():
        legend.setdefault("softmax run failed", ax.plot(
            rho[bad], np.zeros(bad.sum()), "x", color="red", ms=8, mew=2)[0])
    # converged: seeds that met the |loss change| < tol rule (the others reached the epoch cap)
    conv = np.nanmean(sel["converged"]) / m["simulation"]["seeds"]
    fl.corner(ax, "epochs: mean %.0f, max %.0f\nstopped by tol: %.0f%% of runs" % (
        np.nanmean(sel["epochs_mean"]), np.nanmax(sel["epochs_max"]), 100 * conv),
        loc="upper left")
    ax.set_title(r"$\alpha = %s$" % fl.fmt(a))
    ax.set_xlabel(r"task rank ratio $\rho = r/D$")
    ax.set_xlim(0, 1.05)
axes[0].set_ylabel("test error")
axes[0].set_ylim(bottom=0)
fig.legend(list(legend.values()), list(legend.keys()), loc="lower center", ncol=3,
           bbox_to_anchor=(0.5, 0.0), frameon=False)
p = m["params"]
fl.title(fig, "Softmax attention vs the linear-attention theory: error against task rank",
         fl.params_text(p, keys=("tau", "kappa", "sigma", "sigma_test", "lambda"))
         + r", $\alpha_{test}=\alpha$;  " + fl.sim_desc(m)
         + "; softmax: attn dim %d, full-batch Adam lr %g, <= %d epochs, tol %g, %d test prompts"
         % (sm["attn_dim"], sm["lr"], sm["max_epochs"], sm["tol"], sm["test_prompts"]))
fl.footer(fig, d, "softmax")
fig.tight_layout(rect=(0, 0.13, 1, 0.93))
fl.save(fig, d, "softmax")
