#!/usr/bin/env python3
"""The recurrent form of DESIGN §1.2, token by token in float64, against out.npy.

    recurrent_decay.py DIR --map identity|relu|elu1 --normalizer rows|none
                       (--decay G | --decay-input NAME) [--key-weight NAME]
                       [--eps E] [--tol T]

reads DIR/q.npy, k.npy, v.npy (and the named decay [B, H, N] or [H] and key
weight [B, H, N]) as `attnc run --save DIR` wrote them and computes, per
batch and head,

    S_i = g_i S_{i-1} + kappa_i phi(k_i) v_i^T,   z_i = g_i z_{i-1} + kappa_i phi(k_i)
    o_i = phi(q_i)^T S_i / (phi(q_i) . z_i + eps)      (rows; none: no division)

in O(N m e): unlike the quadratic oracles it reaches N = 65536, where the
products of g underflow any float format and only a form that never forms
them stays finite. Exits 0 when out.npy is finite and within the relative
tolerance (default 1e-4 of max |o|), 1 otherwise.
"""

import argparse
import sys

import numpy as np


def feature(x, name):
    if name == "identity":
        return x
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "elu1":
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    sys.exit(f"recurrent_decay: unknown map '{name}'")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--map", default="elu1")
    parser.add_argument("--normalizer", default="rows", choices=["rows", "none"])
    parser.add_argument("--decay", type=float)
    parser.add_argument("--decay-input")
    parser.add_argument("--key-weight")
    parser.add_argument("--eps", type=float, default=1e-6)
    parser.add_argument("--tol", type=float, default=1e-4)
    args = parser.parse_args()

    load = lambda name: np.load(f"{args.dir}/{name}.npy").astype(np.float64)
    q, k, v = load("q"), load("k"), load("v")
    out = np.load(f"{args.dir}/out.npy")
    batch, heads, n, _ = q.shape
    if args.decay_input:
        g = load(args.decay_input)
        if g.ndim == 1:
            g = np.broadcast_to(g[None, :, None], (batch, heads, n))
    else:
        g = np.full((batch, heads, n), args.decay)
    kappa = load(args.key_weight) if args.key_weight else np.ones((batch, heads, n))
    fq, fk = feature(q, args.map), feature(k, args.map)

    expected = np.zeros(out.shape)
    for b in range(batch):
        for h in range(heads):
            state = np.zeros((fk.shape[3], v.shape[3]))
            norm = np.zeros(fk.shape[3])
            for i in range(n):
                weighted = kappa[b, h, i] * fk[b, h, i]
                state = g[b, h, i] * state + np.outer(weighted, v[b, h, i])
                norm = g[b, h, i] * norm + weighted
                num = fq[b, h, i] @ state
                if args.normalizer == "rows":
                    den = fq[b, h, i] @ norm + args.eps
                    expected[b, h, i] = num / den if den != 0 else 0.0
                else:
                    expected[b, h, i] = num
    if not np.all(np.isfinite(out)):
        print("recurrent_decay: out.npy holds a NaN or an infinity")
        return 1
    scale = max(np.max(np.abs(expected)), 1e-30)
    error = np.max(np.abs(out - expected)) / scale
    ok = error <= args.tol
    print(f"{'ok' if ok else 'FAILED'}: max error {error:.2e} of max |o| "
          f"{scale:.3g} over shape {list(out.shape)} (tolerance {args.tol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
