"""Figure 21 (beyond the papers): depth against test-time steps (docs/multistep_depth.md,
docs/multistep.md). The error of L layers with the optimal shared step and with one optimal
step per layer (the envelope; open markers where its steps are complex, i.e. not realizable),
next to the trained map applied L times at test time (tau = 4, 8 and infinity). Left: noiseless,
where the shared optimum is the tau = infinity test-time curve; right: sigma = 0.5 (depth only:
the test-time model's test prompts are noise-free, so it is not the same task)."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
t, m = fl.load(d, "depth")
fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
for ax, sigma in zip(axes, [0.0, 0.5]):
    s = t["sigma"] == sigma
    L = t["layers"][s]
    ax.semilogy(L, t["shared"][s], "-", color="#1f77b4", label="depth, optimal shared step")
    real = t["realizable"][s] > 0
    ax.semilogy(L[real], t["per_layer"][s][real], "o", ms=3, color="#d62728",
                label="depth, optimal step per layer")
    ax.semilogy(L[~real], t["per_layer"][s][~real], "o", ms=3, mfc="none", color="#d62728",
                label="per layer, complex steps")
    if sigma == 0:
        ax.semilogy(L, t["test_time_inf"][s], "--", color="k", lw=1.0,
                    label=r"test-time, $\tau = \infty$")
        ax.semilogy(L, t["test_time_tau8"][s], ":", color="#2ca02c",
                    label=r"test-time, $\tau = 8$")
        ax.semilogy(L, t["test_time_tau4"][s], ":", color="#9467bd",
                    label=r"test-time, $\tau = 4$")
    ax.set_xlabel("layers L = test-time steps t")
    ax.set_ylabel("test error (query noise included)")
    ax.set_title(r"$\alpha$ = %g, $\sigma$ = %g" % (m["alpha"], sigma))
    ax.legend(fontsize=6.5)
fl.footer(fig, d, "depth")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "depth")
