"""Figure 8: evaluation loss with the context vs loss of the patched query-only model along
training (they coincide), and their relative difference on a log axis."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "patch_loss")
tr = m["training"]
mo = m["model"]

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.3))
step = t["step"]
ax.plot(step, t["train_loss"], "-", color="0.7", lw=1.0, label="training loss (batch mean)")
ax.plot(step, t["eval_loss"], "-", color="#1f77b4", lw=2.6, label="with context $T_W(C, x)$")
ax.plot(step, t["eval_loss_patched"], "--", color="#ff7f0e", lw=1.6,
        label=r"patched query-only $T_{W+\Delta W(C)}(x)$")
ax.axhline(tr["zero_predictor_loss"], color="k", ls=":", lw=1, label="zero predictor")
ax.set_yscale("log")
ax.set_xlabel("training step (Adam)")
ax.set_ylabel("evaluation MSE (%d fixed prompts)" % tr["eval_prompts"])
ax.set_title("loss along training")
ax.legend(loc="center right")

rel = np.where(t["rel_diff"] > 0, t["rel_diff"], np.nan)
ax2.plot(step, rel, "o-", color="#d62728", ms=3, lw=1.2,
         label=r"$|L_{patched} - L_{context}|\,/\,L_{context}$")
ax2.plot(step, t["patch_max_rel"], "s-", color="0.45", ms=2.5, lw=0.9,
         label="max relative output difference")
ax2.axhline(np.finfo(float).eps, color="k", ls=":", lw=0.8)
ax2.text(step[0], np.finfo(float).eps * 1.3, "float64 machine epsilon", fontsize=7, va="bottom")
zero = int(np.sum(t["rel_diff"] == 0))
if zero:
    ax2.text(0.98, 0.02, "%d steps with exactly equal losses (not drawn)" % zero,
             transform=ax2.transAxes, ha="right", va="bottom", fontsize=7)
ax2.set_yscale("log")
ax2.set_ylim(1e-17, 1e-12)
ax2.set_xlabel("training step (Adam)")
ax2.set_ylabel("relative difference")
ax2.set_title("patched vs context (equal to rounding)")
ax2.legend(loc="upper right")

fl.title(fig, "Loss with context = loss of the rank-1-patched query-only model at every step",
         "one plain block (no skips/LN), %s attention, %d heads x %d, MLP %d (GELU), d=%d, "
         "context %d; Adam lr %g, batch %d, %d steps" % (
             mo["kind"], mo["heads"], mo["head_dim"], mo["mlp_hidden"], tr["d"], tr["context"],
             tr["lr"], tr["batch"], tr["steps"]))
fl.footer(fig, d, "patch_loss")
fig.tight_layout(rect=(0, 0.03, 1, 0.93))
fl.save(fig, d, "patch_loss")
