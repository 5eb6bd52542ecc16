"""Figure 11: alignment cos_F between the implicit patch and explicit gradient updates of W1 on
the same context examples, one panel per protocol (fullbatch, online, per-token,
per-token-context; docs/patch.md section 11), with the mismatched-prompt and random-weight baselines."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "patch_align")
tr = m["training"]
al = m["align"]
protocols = m["protocols"]

XLABEL = {
    "fullbatch": "full-batch SGD steps on the context",
    "online": "examples seen $i$ (online SGD, one example per step)",
    "per-token": "example $i$ (gradient at the query-only model patched by $C_{i-1}$)",
    "per-token-context": "example $i$ (gradient of the in-context loss, context $C_{i-1}$)",
}
YLABEL = {
    "fullbatch": r"$\cos_F(\Delta W(C),\ \Delta W_{SGD}(k))$",
    "online": r"$\cos_F(\Delta W(C_i),\ \Delta W_{online}(i))$",
    "per-token": r"$\cos_F(\Delta W(C_i)-\Delta W(C_{i-1}),\ -\nabla \ell_i)$",
    "per-token-context": r"$\cos_F(\Delta W(C_i)-\Delta W(C_{i-1}),\ -\nabla \ell_i^{ctx})$",
}

cols = 2 if len(protocols) > 2 else len(protocols)
rows = (len(protocols) + cols - 1) // cols
fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.4 * rows), squeeze=False)
for ax in axes.flat[len(protocols):]:
    ax.set_visible(False)
for ax, p in zip(axes.flat, protocols):
    sel = t["protocol"] == p["id"]
    x = t["x"][sel]
    fl.sim_points(ax, x, t["cos_mean"][sel], t["cos_sem"][sel], "#1f77b4",
                  label="trained model, same prompt", ms=3.5)
    ax.plot(x, t["cos_mean"][sel], "-", color="#1f77b4", lw=0.8)
    ax.plot(x, t["mismatched_mean"][sel], "^--", color="#ff7f0e", ms=3,
            label="baseline: mismatched prompt")
    fl.sim_points(ax, x, t["random_mean"][sel], t["random_sem"][sel], "0.4", marker="s",
                  filled=False, label="baseline: random weights", ms=3.5)
    ax.axhline(0, color="k", lw=0.8)
    if p["protocol"] == "fullbatch":
        ax.set_xscale("log")
    ax.set_ylim(-0.4, 1.0)
    ax.set_xlabel(XLABEL.get(p["protocol"], "x"))
    ax.set_ylabel(YLABEL.get(p["protocol"], "cos_F"))
    s, sm, sr = p["summary"], p["summary_mismatched"], p["summary_random"]
    text = "%s: %.3f $\\pm$ %.3f\nmismatched %.3f $\\pm$ %.3f\nrandom %.3f $\\pm$ %.3f" % (
        p["protocol"], s["mean"], s["sem"], sm["mean"], sm["sem"], sr["mean"], sr["sem"])
    if "left" in p:
        text += "\nfactors: left %.3f, right %.3f" % (p["left"]["mean"], p["right"]["mean"])
    fl.corner(ax, text, loc="upper left")
    ax.legend(loc="upper right", fontsize=7)
fl.title(fig, "Alignment of the implicit patch with explicit gradient updates, by protocol",
         "one plain block trained %d Adam steps (eval MSE %.3g, zero predictor %.3g); SGD lr %g, "
         "%d prompts, context %d; mean $\\pm$ s.e. over prompts"
         % (tr["steps"], tr["final_eval_loss"], tr["zero_predictor_loss"], al["sgd_lr"],
            al["prompts"], al["context"]))
fl.footer(fig, d, "patch_align")
fig.tight_layout(rect=(0, 0.03, 1, 0.94 if rows > 1 else 0.92))
fl.save(fig, d, "patch_align")
