"""Figure 9: equivalence error per layer of a 10-layer Pre-LN model (float64, float32) with the
negative controls (only block 1 patched; weight-only patch without the residual bias)."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "patch_layers")
mo = m["model"]

fig, ax = plt.subplots(figsize=(7.8, 4.9))
layer = t["layer"]
floor = 1e-18


def show(col, style, color, label, ms=5):
    y = np.maximum(t[col], floor)
    ax.plot(layer, y, style, color=color, ms=ms, lw=1.5, label=label)


show("f64_max_rel", "o-", "#1f77b4", "full patch, float64")
show("f32_max_rel", "s-", "#ff7f0e", "full patch, float32")
show("first_only_max_rel", "^--", "#d62728", "control: only block 1 patched")
show("weight_only_max_rel", "v--", "#9467bd", r"control: $\Delta W$ only (no $\Delta b_2$)")
ax.axhline(np.finfo(np.float64).eps, color="#1f77b4", ls=":", lw=0.9)
ax.axhline(np.finfo(np.float32).eps, color="#ff7f0e", ls=":", lw=0.9)
ax.text(3.5, np.finfo(np.float64).eps * 2.5, "machine epsilon float64", ha="center",
        fontsize=7, color="#1f77b4")
ax.text(3.5, np.finfo(np.float32).eps * 0.4, "machine epsilon float32", ha="center", va="top",
        fontsize=7, color="#ff7f0e")
ax.set_yscale("log")
ax.set_xticks(layer)
ax.set_xlabel("block $l$ (representation after block $l$)")
ax.set_ylabel("max relative difference: full context vs patched query-only")
ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.32), framealpha=0.9)
trained = m.get("trained")
tr = m.get("training") or {}
if trained:
    state = "trained %d Adam steps (eval MSE %.3g, zero predictor %.3g)" % (
        tr["steps"], tr["final_eval_loss"], tr["zero_predictor_loss"])
else:
    state = "random weights (quick mode: not trained)"
fl.title(fig, "Exact patch through a 10-layer Pre-LN stack",
         "width %d (embedding), %d heads x %d, MLP %d; %s;\nmax over %d prompts, context %d, "
         "query position" % (mo["width"], mo["heads"], mo["head_dim"], mo["mlp_hidden"], state,
                            m["prompts"], m["context"]))
fl.footer(fig, d, "patch_layers")
fig.tight_layout(rect=(0, 0.03, 1, 0.90))
fl.save(fig, d, "patch_layers")
