"""Figure 17: equivalence error per layer of 10-layer stacks of each block kind (plain,
residual, pre-norm, post-norm, parallel; LayerNorm / RMSNorm; GELU / SwiGLU / GeGLU), float64
and float32, with the weight-only negative control."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
t, m = fl.load(d, "patch_blocks")
names = m["kinds"]
mo = m["model"]
floor = 1e-18

fig, (ax, bx) = plt.subplots(1, 2, figsize=(11.5, 4.9), sharey=True)
colors = plt.cm.tab10(np.linspace(0, 1, 10))
for k, name in enumerate(names):
    sel = t["kind"] == k
    layer = t["layer"][sel]
    c = colors[k % 10]
    ax.plot(layer, np.maximum(t["f64_max_rel"][sel], floor), "o-", color=c, ms=4, lw=1.2,
            label=name)
    ax.plot(layer, np.maximum(t["f32_max_rel"][sel], floor), "s--", color=c, ms=3, lw=1.0)
    wo = t["weight_only_max_rel"][sel]
    if np.any(np.isfinite(wo)):
        bx.plot(layer, np.maximum(wo, floor), "v-", color=c, ms=4, lw=1.2, label=name)
for a in (ax, bx):
    a.axhline(np.finfo(np.float64).eps, color="grey", ls=":", lw=0.9)
    a.axhline(np.finfo(np.float32).eps, color="grey", ls="-.", lw=0.9)
    a.set_yscale("log")
    a.set_xticks(range(1, 11))
    a.set_xlabel("block $l$ (representation after block $l$)")
ax.text(10.3, np.finfo(np.float64).eps * 0.4, "eps float64", fontsize=7, color="grey", ha="right", va="top")
ax.text(10.3, np.finfo(np.float32).eps * 0.4, "eps float32", fontsize=7, color="grey", ha="right", va="top")
ax.set_ylabel("max relative difference: full context vs patched query-only")
ax.set_title("full patch: float64 (solid), float32 (dashed)", fontsize=9)
bx.set_title(r"control: $\Delta W$ on $W_1$ ($W_g$) only, no stream patch", fontsize=9)
ax.legend(fontsize=7, loc="center left", framealpha=0.9)
fl.title(fig, "Exact patch through 10-layer stacks of each block kind",
         "width %d (embedding), %d heads x %d, MLP %d, random weights; max over %d prompts, "
         "context %d, query position" % (mo["width"], mo["heads"], mo["head_dim"],
                                         mo["mlp_hidden"], m["prompts"], m["context"]))
fl.footer(fig, d, "patch_blocks")
fig.tight_layout(rect=(0, 0.03, 1, 0.90))
fl.save(fig, d, "patch_blocks")
