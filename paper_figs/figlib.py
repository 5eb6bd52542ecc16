"""Shared helpers of the paper-figure plot scripts (run by Debian's /usr/bin/python3).

Each plot_<name>.py reads the TSVs that `icl figs <name>` wrote into DIR (one header line, `nan`
for failed points) and their JSON sidecars, and writes DIR/<name>.pdf and DIR/<name>.png.
Conventions: theory as lines, simulation as points with standard-error bars, parameters in a
corner, the command that made the figure in small text at the bottom; a theory point that did
not converge is drawn as a red 'x' on the x axis (never dropped silently).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.transforms as mtransforms  # noqa: E402
import numpy as np  # noqa: E402

COLORS = {"tm": "#1f77b4", "idg": "#d62728", "odg": "#2ca02c"}
LABELS = {"tm": "TM", "idg": "IDG", "odg": "ODG"}
PART_COLORS = {"algo": "#1f77b4", "mem": "#ff7f0e", "struct": "#9467bd"}
PNG_DPI = 120

plt.rcParams.update({
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "text.usetex": False,
    "mathtext.fontset": "dejavusans",
    "axes.grid": True,
    "grid.alpha": 0.25,
    "lines.linewidth": 1.5,
    "errorbar.capsize": 2,
    "savefig.bbox": "tight",
})


def out_dir():
    if len(sys.argv) != 2:
        sys.exit("usage: %s DIR  (DIR holds the TSVs written by icl figs)" % sys.argv[0])
    return sys.argv[1]


def read(directory, stem):
    """The TSV DIR/<stem>.tsv as a numpy structured array (always 1-d)."""
    path = os.path.join(directory, stem + ".tsv")
    data = np.genfromtxt(path, names=True, delimiter="\t", dtype=float, deletechars="")
    return np.atleast_1d(data)


def meta(directory, stem):
    """The JSON sidecar DIR/<stem>.tsv.json."""
    with open(os.path.join(directory, stem + ".tsv.json")) as f:
        return json.load(f)


def load(directory, stem):
    """The table DIR/<stem>.tsv and its sidecar: (read(...), meta(...))."""
    return read(directory, stem), meta(directory, stem)


def params_text(p, keys=("alpha", "alpha_test", "tau", "gamma", "kappa", "rho", "sigma",
                         "sigma_test", "lambda"), skip=()):
    sym = {"alpha": r"\alpha", "alpha_test": r"\alpha_{test}", "tau": r"\tau",
           "gamma": r"\gamma", "kappa": r"\kappa", "rho": r"\rho", "sigma": r"\sigma",
           "sigma_test": r"\sigma_{test}", "lambda": r"\lambda"}
    parts = []
    for k in keys:
        if k in skip or k not in p:
            continue
        parts.append(r"$%s=%s$" % (sym[k], fmt(p[k])))
    return ", ".join(parts)


def fmt(v):
    if isinstance(v, str):
        return v
    if float(v).is_integer():
        return "%d" % v
    return "%.4g" % v


def corner(ax, text, loc="upper left", fontsize=7):
    """Parameters in a corner of an axes (boxed)."""
    pos = {"upper left": (0.02, 0.98, "left", "top"), "upper right": (0.98, 0.98, "right", "top"),
           "lower left": (0.02, 0.02, "left", "bottom"),
           "lower right": (0.98, 0.02, "right", "bottom")}[loc]
    ax.text(pos[0], pos[1], text, transform=ax.transAxes, ha=pos[2], va=pos[3], fontsize=fontsize,
            bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.7", alpha=0.85), zorder=10)


def footer(fig, directory, stem, extra=""):
    """The command that made the figure (from the sidecar), small, at the bottom."""
    m = meta(directory, stem)
    text = "made by: %s   (icl %s)" % (m.get("figure_command", "?"), m.get("version", "?"))
    if extra:
        text += "   " + extra
    fig.text(0.005, 0.002, text, fontsize=6.5, color="0.35", ha="left", va="bottom")


def mark_failed(ax, x, converged, label=True):
    """Red 'x' on the x axis at each theory point with converged == 0; returns how many."""
    x = np.asarray(x)
    bad = np.asarray(converged) == 0
    if not bad.any():
        return 0
    trans = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    ax.plot(x[bad], np.full(bad.sum(), 0.03), "x", color="red", ms=7, mew=2, transform=trans,
            clip_on=False, zorder=11, label=("theory not converged" if label else None))
    return int(bad.sum())


def sim_points(ax, x, mean, sem, color, label=None, marker="o", filled=True, ms=4.5, zorder=5):
    """Simulation: points with standard-error bars (nan rows, i.e. failed runs, are skipped by
    matplotlib but reported in the sidecar's simulation_errors)."""
    kw = dict(fmt=marker, color=color, ms=ms, elinewidth=1, capsize=2, zorder=zorder, label=label)
    if not filled:
        kw.update(mfc="white", mew=1.2)
    return ax.errorbar(x, mean, yerr=sem, **kw)


def save(fig, directory, name):
    fig.savefig(os.path.join(directory, name + ".pdf"))
    fig.savefig(os.path.join(directory, name + ".png"), dpi=PNG_DPI)
    plt.close(fig)
    print("wrote %s.pdf and %s.png" % (os.path.join(directory, name), os.path.join(directory, name)),
          file=sys.stderr)


def sim_desc(m):
    s = m.get("simulation", {})
    if not s:
        return ""
    return "simulation: D=%s, %s seeds, mean $\\pm$ s.e." % (s.get("dim", "?"), s.get("seeds", "?"))


def title(fig, main, sub=""):
    """Figure title with the parameters (caption) on a second, smaller line."""
    fig.suptitle(main, y=0.995, fontsize=11)
    if sub:
        fig.text(0.5, 0.955, sub, ha="center", va="top", fontsize=8.5, color="0.15")
