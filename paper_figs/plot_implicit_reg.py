"""Figure 4: implicit regularization (lambda = 0): the effective ridge -z = nu, qbarhat, the linear
growth of qbar at large alpha (section-8 asymptotes), and gradient descent from several
initializations at large alpha (ill-posedness: the fit depends on the initialization in null(S))."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
th, m = fl.load(d, "implicit_reg")
th0, m0 = fl.load(d, "implicit_reg_sigma0")
thr, mr = fl.load(d, "implicit_reg_ridge")
sim, ms = fl.load(d, "implicit_reg_sim")
gd, mg = fl.load(d, "implicit_reg_gd")
p = m["params"]
s2 = p["sigma"] ** 2
tau, kappa = p["tau"], p["kappa"]
a = th["alpha"]

fig, axes = plt.subplots(2, 3, figsize=(12.5, 7.2))

# (a) effective ridge and qbarhat
ax = axes[0, 0]
ax.plot(a, -th["z"], "-", color="#1f77b4", label=r"$-z$, $\lambda=0$")
ax.plot(a, (1 + s2) / a, "--", color="k", lw=1, label=r"$\nu=(1+\sigma^2)/\alpha$")
ax.plot(a, th["qbarhat"], "-", color="#ff7f0e", label=r"$\hat{\bar q}$, $\lambda=0$")
ax.plot(a, (1 + s2) / a * (tau - 1) / kappa, "--", color="#7f3f00", lw=1,
        label=r"$\nu(\tau-1)/\kappa$")
ax.plot(thr["alpha"], -thr["z"], ":", color="#1f77b4", lw=2,
        label=r"$-z$, $\lambda=%s$ (floor $\lambda/\hat q$)" % fl.fmt(mr["params"]["lambda"]))
fl.mark_failed(ax, a, th["converged"])
fl.mark_failed(ax, thr["alpha"], thr["converged"], label=False)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(r"$\alpha$")
ax.set_ylabel("ridge seen by $S$")
ax.set_title(r"(a) effective ridge $-z=\lambda/\hat q+\nu$ and $\hat{\bar q}=\nu\hat q$")
ax.legend(loc="lower left")

# (b) qbar grows linearly (sigma > 0) or saturates (sigma = 0)
ax = axes[0, 1]
k = m["asymptotes"]["k"]
slope = m["asymptotes"]["qbar_slope"]
ax.plot(a, th["qbar"], "-", color="#d62728", label=r"$\bar q$, $\sigma=%s$" % fl.fmt(p["sigma"]))
ax.plot(a, k + slope * a, "--", color="#d62728", lw=1,
        label=r"$k+\alpha\sigma^2(1-k)/((1+\sigma^2)(\tau-1))$")
ax.plot(th0["alpha"], th0["qbar"], "-", color="#2ca02c", label=r"$\bar q$, $\sigma=0$")
ax.axhline(k, color="#2ca02c", ls="--", lw=1, label=r"$k=\min(\rho,\kappa)=%s$" % fl.fmt(k))
fl.sim_points(ax, sim["alpha"], sim["sim_qbar"], sim["sim_qbar_sem"], "k",
              label=r"simulation, $\sigma=%s$" % fl.fmt(p["sigma"]))
fl.mark_failed(ax, a, th["converged"])
fl.mark_failed(ax, th0["alpha"], th0["converged"], label=False)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(r"$\alpha$")
ax.set_ylabel(r"$\bar q = \mathrm{tr}(\Gamma^T\Gamma)/D$")
ax.set_title(r"(b) $\bar q$: linear growth at $\alpha\to\infty$ when $\sigma>0$")
ax.legend(loc="upper left")

# (c) errors
ax = axes[0, 2]
for q in ["tm", "idg", "odg"]:
    ax.plot(a, th[q], "-", color=fl.COLORS[q], label="%s theory" % fl.LABELS[q])
    fl.sim_points(ax, sim["alpha"], sim["sim_" + q], sim["sim_" + q + "_sem"], fl.COLORS[q],
                  label="%s simulation" % fl.LABELS[q])
ax.plot(th0["alpha"], th0["odg"], ":", color=fl.COLORS["odg"], label=r"ODG theory, $\sigma=0$")
fl.mark_failed(ax, a, th["converged"])
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(r"$\alpha$")
ax.set_ylabel("test error")
ax.set_title(r"(c) errors ($\lambda=0$): ODG grows with $\alpha$")
ax.legend(loc="upper left", ncol=2)
fl.corner(ax, fl.sim_desc(ms), loc="lower right")

# (d)-(f) gradient descent from several initializations
ridge = gd[gd["is_ridge_solution"] == 1]
runs = gd[gd["is_ridge_solution"] == 0]
inits = np.unique(runs["init_scale"][np.isfinite(runs["init_scale"])])
cmap = plt.get_cmap("viridis")
mk = ["o", "s", "^", "D", "v", "P"]
gdd = mg["gd"]
for ax, key, ylabel, title in [
        (axes[1, 0], "odg", "ODG error", "(d) ODG after gradient descent"),
        (axes[1, 1], "null_norm2", r"$|\Gamma P_0|_F^2/D$",
         r"(e) weight in null$(S)$ after gradient descent"),
        (axes[1, 2], "dist", r"$|(\Gamma-\Gamma_{\min})P|_F^2/D$",
         r"(f) distance to the minimizer: null$(S)$ (open) vs span$(S)$ (filled)")]:
    for i, s in enumerate(inits):
        r = runs[runs["init_scale"] == s]
        col = cmap(i / max(1, len(inits) - 1))
        if key == "dist":
            floor = 1e-8
            ax.plot(r["alpha"], np.maximum(r["null_dist2"], floor), mk[i % len(mk)], color=col, ms=6, mfc="none",
                    mew=1.5, label=r"null$(S)$, $\Gamma_0=%s\,Z$" % fl.fmt(s))
            ax.plot(r["alpha"], np.maximum(r["span_dist2"], floor), mk[i % len(mk)], color=col, ms=4.5,
                    label=r"span$(S)$, $\Gamma_0=%s\,Z$" % fl.fmt(s) if i == 0 else None)
            continue
        ax.plot(r["alpha"], r[key], mk[i % len(mk)], color=col, ms=6, mfc="none", mew=1.5,
                label=r"GD from $\Gamma_0=%s\,Z$" % fl.fmt(s))
    if key != "dist":
        ax.plot(ridge["alpha"], ridge[key], "k_", ms=16, mew=2.5,
                label="exact minimizer (CG)")
    if key == "odg":
        ax.plot(a, th["odg"], "-", color=fl.COLORS["odg"], lw=1, label="ODG theory")
    ax.set_yscale("log")
    bad = gd[gd["ok"] == 0]
    if len(bad):
        fl.mark_failed(ax, bad["alpha"], bad["ok"])
    ax.set_xscale("log")
    ax.set_xlim(0.5 * np.nanmin(gd["alpha"]), 2 * np.nanmax(gd["alpha"]))
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
axes[1, 0].legend(loc="upper left")
axes[1, 2].legend(loc="upper left", fontsize=6.5, ncol=2)
axes[1, 2].set_ylim(3e-9, 1e3)
axes[1, 2].text(0.98, 0.03, "values below $10^{-8}$ drawn at $10^{-8}$", transform=axes[1, 2].transAxes,
                ha="right", fontsize=6.5, color="0.3")
fl.corner(axes[1, 1], "gradient descent: D=%d, %d steps,\nstep $1/(1.05\\,\\lambda_{max})$, "
          "one data draw per $\\alpha$;\n$\\Gamma_0=s\\,Z$, $Z$ iid $N(0,1/D)$" % (gdd["dim"], gdd["steps"]),
          loc="lower right")
fl.title(fig, r"Implicit regularization: finite-context fluctuations act as a ridge ($\lambda=0$)",
         fl.params_text(p, keys=("tau", "kappa", "rho", "sigma", "lambda")) +
         r", $\alpha_{test}=\alpha$")
fl.footer(fig, d, "implicit_reg")
fig.tight_layout(rect=(0, 0.03, 1, 0.96))
fl.save(fig, d, "implicit_reg")
