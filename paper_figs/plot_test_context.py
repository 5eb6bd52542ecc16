"""Figure 3: TM / IDG / ODG errors against the test context alpha_test / alpha."""
import figlib as fl
from figlib import plt

d = fl.out_dir()
th, m = fl.load(d, "test_context")
sim, ms = fl.load(d, "test_context_sim")

fig, ax = plt.subplots(figsize=(6.0, 4.2))
for p in ["tm", "idg", "odg"]:
    ax.plot(th["ratio"], th[p], "-", color=fl.COLORS[p], label="%s theory" % fl.LABELS[p])
    fl.sim_points(ax, sim["ratio"], sim["sim_" + p], sim["sim_" + p + "_sem"], fl.COLORS[p],
                  label="%s simulation" % fl.LABELS[p])
fl.mark_failed(ax, th["ratio"], th["converged"])
ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
ax.set_xscale("log")
ax.set_xlabel(r"test context / training context  $\alpha_{test}/\alpha$")
ax.set_ylabel("test error")
ax.legend(loc="upper right", ncol=2)
fl.corner(ax, fl.params_text(m["params"], skip=("alpha_test", "gamma")) + "\n" +
          fl.sim_desc(ms) + "\n(one trained model per seed, all test contexts)",
          loc="lower left")
ax.set_title("Errors against the test context length")
fl.footer(fig, d, "test_context")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "test_context")
