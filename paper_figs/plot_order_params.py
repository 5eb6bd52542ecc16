"""Figure 2: order parameters m, q, mbar, qbar, m0, q0 against kappa."""
import figlib as fl
from figlib import plt

d = fl.out_dir()
th, m = fl.load(d, "order_params")
sim, ms = fl.load(d, "order_params_sim")

names = [("m", r"$m$"), ("q", r"$q$"), ("mbar", r"$\bar m$"), ("qbar", r"$\bar q$"),
         ("m0", r"$m_0$"), ("q0", r"$q_0$")]
fig, axes = plt.subplots(2, 3, figsize=(10, 5.6), sharex=True)
colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
for ax, (key, label), c in zip(axes.flat, names, colors):
    ax.plot(th["kappa"], th[key], "-", color=c, label="theory")
    fl.sim_points(ax, sim["kappa"], sim["sim_" + key], sim["sim_" + key + "_sem"], "k",
                  label="simulation")
    fl.mark_failed(ax, th["kappa"], th["converged"])
    ax.set_ylabel(label)
    ax.set_title(label)
for ax in axes[1]:
    ax.set_xlabel(r"task diversity $\kappa = M_0/D$")
axes[0, 0].legend(loc="upper right")
fl.title(fig, r"Order parameters against task diversity $\kappa$ (task-rich: $\rho<\kappa$)",
         fl.params_text(m["params"], skip=("kappa", "gamma")) + ";  " + fl.sim_desc(ms))
fl.footer(fig, d, "order_params")
fig.tight_layout(rect=(0, 0.03, 1, 0.95))
fl.save(fig, d, "order_params")
