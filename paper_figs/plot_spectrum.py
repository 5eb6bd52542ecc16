"""Figure 6: eigenvalues of the empirical task covariance S = W W^T / M0 (the simulator's data
generator) against the theory (1 - rho) delta_0 + rho MP(rho/kappa, 1/rho), atom at 0 shown as a
bar with its mass, for rho < kappa and rho > kappa."""
import numpy as np

import figlib as fl
from figlib import plt

d = fl.out_dir()
dens = fl.read(d, "spectrum")
eig, me = fl.load(d, "spectrum_eigs")
atoms = fl.read(d, "spectrum_atoms")
cases = sorted(set(atoms["case"]))

fig, axes = plt.subplots(1, len(cases), figsize=(5.4 * len(cases), 4.0))
axes = np.atleast_1d(axes)
for ax, c in zip(axes, cases):
    a = atoms[atoms["case"] == c][0]
    rho, kappa = a["rho"], a["kappa"]
    ev = eig["eigenvalue"][eig["case"] == c]
    cut = 1e-9 * max(1.0, ev.max())
    nz = ev[ev > cut]
    lo, hi = a["support_lo"], a["support_hi"]
    bins = np.linspace(0, 1.08 * max(hi, nz.max() if len(nz) else hi), 45)
    # Histogram of the non-zero eigenvalues, normalized by ALL eigenvalues so that its area is
    # the continuous mass (comparable to rho * MP density).
    w = np.full(len(nz), 1.0 / len(ev))
    ax.hist(nz, bins=bins, weights=w / np.diff(bins)[0], color="#9ecae1", ec="#3182bd", lw=0.6,
            label="eigenvalues of $S$ (simulation)")
    sel = dens["case"] == c
    ax.plot(dens["x"][sel], dens["density"][sel], "-", color="#d62728", lw=1.8,
            label=r"theory: $\rho\,$MP$(\rho/\kappa,1/\rho)$ density")
    # Atom at 0: bar of height proportional to nothing -- drawn as an arrow with the mass.
    ymax = 1.3 * max(np.nanmax(dens["density"][sel]),
                      np.histogram(nz, bins=bins, weights=w / np.diff(bins)[0])[0].max())
    ax.set_ylim(0, ymax)
    ax.annotate("", xy=(0, 0.85 * ymax), xytext=(0, 0),
                arrowprops=dict(arrowstyle="-|>", color="k", lw=2.2))
    inside = a["mass_in_span_theory"]
    txt = ("atom at 0\ntheory mass %.3f\n" % a["mass_theory"] +
           r"$=(1-\rho)$" + ("" if inside == 0 else r"$+\rho(1-\kappa/\rho)$") +
           "\nempirical %.3f" % a["mass_empirical"])
    ax.annotate(txt, xy=(0, 0.85 * ymax), xycoords="data", xytext=(0.40, 0.80),
                textcoords="axes fraction", va="top", ha="left", fontsize=7.5,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.5", alpha=0.95),
                arrowprops=dict(arrowstyle="-", color="0.4", lw=0.8, ls="--"), zorder=12)
    ax.set_xlim(-0.03 * bins[-1], bins[-1])
    regime = "task-rich" if rho < kappa else "task-poor"
    ax.set_title(r"%s: $\rho=%s$, $\kappa=%s$ ($c=\rho/\kappa=%s$)" %
                 (regime, fl.fmt(rho), fl.fmt(kappa), fl.fmt(rho / kappa)))
    ax.set_xlabel("eigenvalue of $S = W W^T / M_0$")
    ax.set_ylabel("density (continuous part)")
    ax.legend(loc="upper right")
    ax.text(0.98, 0.45, "MP support [%.3g, %.3g]" % (lo, hi), transform=ax.transAxes,
            ha="right", fontsize=7)
sm = me["simulation"]
fl.footer(fig, d, "spectrum",
          extra="D=%d, %d data draws pooled (simulator's generator)" % (sm["dim"], sm["seeds"]))
fig.suptitle("Spectrum of the empirical task covariance against Marchenko-Pastur with its atom")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fl.save(fig, d, "spectrum")
