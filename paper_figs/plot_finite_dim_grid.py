"""Figure 22 (beyond the papers): the finite-D prediction at every point of the verify grid
(docs/finite_dim.md §21, docs/verification.md). (a) The relative residual of the simulation after
the finite-D prediction against 1/D^2, with the prediction's error bar (the estimated O(1/D^2)
rest, §21.12) as dashes; (b) the relative residual after the D -> infinity theory against 1/D."""
import figlib as fl
from figlib import np, plt

d = fl.out_dir()
t, m = fl.load(d, "finite_dim_grid")
points = m["points"]
codes = m["error_codes"]
markers = {"tm": "o", "idg": "s", "odg": "^", "shift": "D"}
cmap = plt.get_cmap("tab10")
fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.6))
for p in points:
    k = p["point"]
    color = cmap((k - 1) % 10)
    rows = t[t["point"] == k]
    if len(rows) == 0:
        continue
    for code, name in enumerate(codes):
        r = rows[rows["error"] == code]
        if len(r) == 0:
            continue
        r = r[np.argsort(r["dim"])]
        rel = 100 * (r["mean"] - r["prediction"]) / r["prediction"]
        err = 100 * r["sem"] / np.abs(r["prediction"])
        # a small horizontal offset per error, so that the bars do not hide each other
        dx = (code - 1.5) * 0.00002
        ax.errorbar(r["inv_dim2"] + dx, rel, yerr=err, color=color, marker=markers[name], ms=3.5,
                    ls="none", lw=0.8, capsize=1.5,
                    label=("%d. %s" % (k, p["label"][:42])) if code == 0 else None)
        if name != "shift":
            unc = 100 * r["uncertainty"] / np.abs(r["prediction"])
            ax.plot(r["inv_dim2"], unc, color=color, ls="--", lw=0.7)
            ax.plot(r["inv_dim2"], -unc, color=color, ls="--", lw=0.7)
        rel_lim = 100 * (r["mean"] - r["limit"]) / r["limit"]
        bx.errorbar(r["inv_dim"] + dx * 20, rel_lim, yerr=100 * r["sem"] / np.abs(r["limit"]),
                    color=color, marker=markers[name], ms=3.5, ls="none", lw=0.8, capsize=1.5)
ax.axhline(0, color="k", lw=0.6)
ax.set_xlabel(r"$1/D^2$")
ax.set_ylabel(r"(simulation $-$ finite-D prediction) / prediction  [%]")
ax.set_title("(a) after the finite-D prediction (dashes: its error bar)")
ax.legend(loc="lower left", fontsize=6.0, ncol=1)
bx.axhline(0, color="k", lw=0.6)
bx.set_xlabel(r"$1/D$")
bx.set_ylabel(r"(simulation $-$ $D\to\infty$ theory) / theory  [%]")
bx.set_title(r"(b) after the $D \to \infty$ theory")
ms = m["simulation"]
fl.corner(bx, "markers: TM o, IDG s, ODG ^, shift D\nsimulation: D = %s, seeds %s" %
          (", ".join(str(x) for x in ms["dims"]), ", ".join(str(x) for x in ms["seeds"])),
          loc="upper left", fontsize=6.5)
fl.footer(fig, d, "finite_dim_grid")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "finite_dim_grid")
