"""The peer of `icl simulate` for the speed comparison (bench/README.md): the same algorithm in
numpy, written as a numpy user would (vectorized over sequences): data by the factorized
sampler (docs/simulation.md §13.3), then the normal equations by conjugate gradients with the
Kronecker preconditioner from the preconditioned right-hand side to relative residual 1e-6
(§13.4). Prints one JSON line per seed: data and training seconds (wall), CG iterations.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/peer_simulator_numpy.py --dim 100 --seeds 2

Run it with Debian's python3 and OpenBLAS (numpy then uses its runtime-dispatched kernels);
OPENBLAS_NUM_THREADS=1 for the one-thread comparison.
"""
import argparse
import json
import time

import numpy as np


def data(rng, D, alpha=2.0, tau=2.25, kappa=1.5, rho=0.9, sigma=0.3):
    N, L, M0, r = round(tau * D * D), round(alpha * D), round(kappa * D), round(rho * D)
    q, rr = np.linalg.qr(rng.standard_normal((D, r)))
    A = q * np.sign(np.diag(rr))
    W = np.sqrt(D / r) * (A @ rng.standard_normal((r, M0)))
    w = W[:, rng.integers(0, M0, N)].T  # N x D, the task of each sequence
    sd = 1 / np.sqrt(D)
    wn = np.linalg.norm(w, axis=1)
    what = w / wn[:, None]
    c1, c2 = np.zeros(N), np.zeros(N)
    for lo in range(0, N, 8192):  # the context in chunks: N x L normals would not fit at D = 300
        hi = min(N, lo + 8192)
        a = sd * rng.standard_normal((hi - lo, L))
        y = wn[lo:hi, None] * a + sigma * rng.standard_normal((hi - lo, L))
        c1[lo:hi], c2[lo:hi] = np.einsum("nl,nl->n", y, a), np.einsum("nl,nl->n", y, y)
    g = rng.standard_normal((N, D))
    g -= np.einsum("nd,nd->n", g, what)[:, None] * what
    S = (D / L) * (c1[:, None] * what + np.sqrt(c2 / D)[:, None] * g)
    X = sd * rng.standard_normal((N, D))
    y = np.einsum("nd,nd->n", X, w) + sigma * rng.standard_normal(N)
    return X, S, y


def train(X, S, y, tol=1e-6, max_iter=5000):
    N = X.shape[0]
    op = lambda G: X.T @ (S * np.einsum("nd,nd->n", X @ G, S)[:, None]) / N
    ex, U = np.linalg.eigh(X.T @ X / N)
    es, V = np.linalg.eigh(S.T @ S / N)
    inv = 1 / np.outer(np.maximum(ex, 0), np.maximum(es, 0))
    pc = lambda R: U @ ((U.T @ R @ V) * inv) @ V.T
    B = X.T @ (S * y[:, None]) / N
    bn = np.linalg.norm(B)
    G = pc(B)
    R = B - op(G)
    Z = pc(R)
    P = Z.copy()
    rz = np.vdot(R, Z)
    it = 0
    while np.linalg.norm(R) / bn > tol and it < max_iter:
        AP = op(P)
        step = rz / np.vdot(P, AP)
        G += step * P
        R -= step * AP
        it += 1
        if np.linalg.norm(R) / bn <= tol:
            break
        Z = pc(R)
        rz_new = np.vdot(R, Z)
        P = Z + (rz_new / rz) * P
        rz = rz_new
    residual = np.linalg.norm(B - op(G)) / bn
    return G, it, residual


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args()
    for k in range(a.seeds):
        rng = np.random.default_rng(k)
        t0 = time.perf_counter()
        X, S, y = data(rng, a.dim)
        t1 = time.perf_counter()
        G, it, res = train(X, S, y)
        t2 = time.perf_counter()
        print(json.dumps({"dim": a.dim, "seed": k, "data_seconds": t1 - t0,
                          "train_seconds": t2 - t1, "cg_iterations": it, "residual": res}))


if __name__ == "__main__":
    main()
