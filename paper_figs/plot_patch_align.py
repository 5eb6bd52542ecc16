"""Figure 11: alignment cos_F(dW(C), dW_sgd) between the implicit patch and explicit SGD
finetuning on the context, against SGD steps, with baselines."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t = fl.read(d, "patch_align")
m = fl.meta(d, "patch_align")
tr = m["training"]
al = m["align"]

fig, ax = plt.subplots(figsize=(7.8, 4.9))
s = t["sgd_steps"]
fl.sim_points(ax, s, t["cos_mean"], t["cos_sem"], "#1f77b4",
              label="trained model, same prompt (mean $\\pm$ s.e.)")
ax.plot(s, t["cos_mean"], "-", color="#1f77b4", lw=1.0)
ax.plot(s, t["mismatched_mean"], "^--", color="#ff7f0e", ms=5,
        label="baseline: $\\Delta W(C_p)$ vs SGD on $C_{p+1}$ (trained)")
fl.sim_points(ax, s, t["random_mean"], t["random_sem"], "0.4", marker="s", filled=False,
              label="baseline: untrained (random) weights")
ax.axhline(0, color="k", lw=0.8)
ax.set_xscale("log")
top = np.nanmax(t["cos_mean"] + t["cos_sem"])
ax.set_ylim(-0.25, max(0.5, 1.2 * top))
ax.set_xlabel("explicit SGD steps on the context (query-only model, only $W_1$ updated)")
ax.set_ylabel(r"$\cos_F(\Delta W(C),\ \Delta W_{SGD})$")
ax.legend(loc="upper right")
fl.title(fig, "Alignment of the implicit patch with explicit finetuning",
         "one plain block trained %d Adam steps (eval MSE %.3g, zero predictor %.3g); SGD lr %g, "
         "%d prompts, context %d" % (tr["steps"], tr["final_eval_loss"], tr["zero_predictor_loss"],
                                     al["sgd_lr"], al["prompts"], al["context"]))
fl.footer(fig, d, "patch_align")
fig.tight_layout(rect=(0, 0.03, 1, 0.93))
fl.save(fig, d, "patch_align")
