"""Figure 10: implicit step norms ||dW_i - dW_{i-1}||_F against the token index i, attention
vs RNN (log-log), with the least-squares slopes of the mean curves."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "patch_steps")
fit = m["fit"]

fig, ax = plt.subplots(figsize=(7.8, 4.9))
i = t["i"]
for k, color, name in [("attention", "#1f77b4", "softmax attention"),
                       ("rnn", "#d62728", "Elman RNN (tanh, fading memory)")]:
    f = fit[k]
    ax.fill_between(i, t[k] - t[k + "_sem"], t[k] + t[k + "_sem"], color=color, alpha=0.2, lw=0)
    ax.plot(i, t[k], "-", color=color, lw=1.6,
            label="%s: slope %.2f (per prompt %.2f $\\pm$ %.2f)" % (
                name, f["slope_of_mean_curve"], f["slope_per_prompt_mean"],
                f["slope_per_prompt_sem"]))
    ax.plot(i, t[k + "_fit"], "--", color="k", lw=1.0)
ax.plot([], [], "--", color="k", lw=1.0,
        label="least-squares fit, $i \\in [%d, %d]$" % (fit["attention"]["fit_from"],
                                                        fit["attention"]["fit_to"]))
# reference slope -1 through the attention curve at the fit start
i0 = fit["attention"]["fit_from"]
y0 = t["attention"][i == i0][0]
ax.plot(i[i >= i0], y0 * i0 / i[i >= i0], ":", color="0.5", lw=1.0, label="slope $-1$ (reference)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("token index $i$")
ax.set_ylabel(r"$\|\Delta W_i - \Delta W_{i-1}\|_F$")
ax.legend(loc="lower left", fontsize=7.5)
c = m["checks"]
fl.title(fig, "Implicit learning dynamics: step norms decay for attention, not for an RNN",
         "one plain block, random weights (not trained), d=2, context %d, mean $\\pm$ s.e. over "
         "%d prompts; prefix identity max rel %.1e, online-GD max rel %.1e" % (
             m["context"], m["prompts"],
             max(c["attention"]["prefix_identity_max_rel"], c["rnn"]["prefix_identity_max_rel"]),
             max(c["attention"]["online_gd_max_rel"], c["rnn"]["online_gd_max_rel"])))
fl.footer(fig, d, "patch_steps")
fig.tight_layout(rect=(0, 0.03, 1, 0.93))
fl.save(fig, d, "patch_steps")
