"""Figure 19 (beyond the papers): which parameter the IDG error is most sensitive to across the
(rho, kappa) plane. At each point, the exact elasticities d ln IDG / d ln x (docs/errors_phases.md
§22) of alpha, tau, kappa, rho, sigma and lambda; (a) the parameter with the largest
|elasticity|, with rho = kappa dashed (the alpha -> infinity transition); (b) that largest
|elasticity|, with IDG contours."""
import figlib as fl
from figlib import np, plt
from matplotlib.colors import BoundaryNorm, ListedColormap

d = fl.out_dir()
t, m = fl.load(d, "sensitivity")
names = m["theory"]["parameters"]
labels = {"alpha": r"$\alpha$", "tau": r"$\tau$", "kappa": r"$\kappa$", "rho": r"$\rho$",
          "sigma": r"$\sigma$", "lambda": r"$\lambda$"}
rho_values, kappa_values = np.unique(t["rho"]), np.unique(t["kappa"])
shape = (len(rho_values), len(kappa_values))  # x (rho) varies slowest


def grid(column):
    return np.asarray(t[column], dtype=float).reshape(shape).T  # rows: kappa, columns: rho


dominant = grid("dominant")
dominant[dominant < 0] = np.nan
strength = grid("dominant_abs")
idg = grid("idg")

fig, (ax, axs) = plt.subplots(1, 2, figsize=(11.5, 4.6))
colors = plt.cm.tab10(np.arange(len(names)))
cmap = ListedColormap(colors)
norm = BoundaryNorm(np.arange(-0.5, len(names)), cmap.N)
extent = (rho_values[0], rho_values[-1], kappa_values[0], kappa_values[-1])
ax.imshow(dominant, origin="lower", aspect="auto", extent=extent, cmap=cmap, norm=norm,
          interpolation="nearest")
present = sorted(int(v) for v in np.unique(dominant[np.isfinite(dominant)]))
for k in present:
    ax.plot([], [], "s", ms=9, color=colors[k], label=labels[names[k]])
ax.legend(title="largest |d ln IDG / d ln x|", loc="upper left", fontsize=8)
image = axs.imshow(strength, origin="lower", aspect="auto", extent=extent, cmap="viridis",
                   interpolation="nearest")
fig.colorbar(image, ax=axs, label="largest |elasticity|")
levels = axs.contour(rho_values, kappa_values, idg, levels=6, colors="white", linewidths=0.8)
axs.clabel(levels, fontsize=7, fmt="IDG %.2f")
for a in (ax, axs):
    span = [max(extent[0], extent[2]), min(extent[1], extent[3])]
    a.plot(span, span, "k--", lw=1)
    a.set_xlabel(r"task rank  $\rho = r/D$")
    a.set_ylabel(r"tasks  $\kappa = M_0/D$")
ax.set_title("(a) the parameter IDG is most sensitive to")
axs.set_title("(b) how sensitive: the largest elasticity")
fl.corner(ax, fl.params_text(m["params"], skip=("rho", "kappa", "gamma", "alpha_test")),
          loc="lower right")
fl.title(fig, "Sensitivity of the in-distribution error (beyond the papers)",
         r"exact elasticities $\partial \ln \mathrm{IDG} / \partial \ln x$ by implicit "
         r"differentiation of the saddle point, $D \to \infty$")
fig.tight_layout(rect=(0, 0.03, 1, 0.92))
fl.footer(fig, d, "sensitivity")
fl.save(fig, d, "sensitivity")
