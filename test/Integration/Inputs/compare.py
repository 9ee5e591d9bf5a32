"""Compares two attn outputs (.npy, float32, [B, H, N, E]).

usage: compare.py A.npy B.npy [--tol T] [--label TEXT]
       compare.py --orders QK.npy KV.npy REF.npy [--tol T] [--label TEXT]
       compare.py A.npy --zero-rows LO:HI [--label TEXT]
       compare.py A.npy B.npy --exact [--label TEXT]

Default: both finite, same shape, and max|A - B| <= T * max|B| (T = 1e-4;
B is the reference side), and also per row i (one query of one head):
max_e |A - B| <= T * max(max_e |B[i]|, max|B| / 100), so that a wrong row
of small values cannot hide behind the global maximum (attnc run --check
only compares with the global maximum). Prints one line `LABEL: agree ...` and exits 0, or prints
`LABEL: DIFFER ...` with the worst element and exits 1.

--orders: three comparisons in one process (the qk_first and kv_first
outputs of one spec and its reference output): qk_first against kv_first,
then each against the reference, one line each, labelled `LABEL qk_first vs
kv_first` and so on.

--exact: A and B must be bit-for-bit the same array (`identical`).

--zero-rows LO:HI: rows LO <= i < HI of A (the sequence axis, 2) must be
exactly +0.0 or -0.0 in every batch, head and feature, and every other row
must have some non-zero value.
"""
import argparse
import sys

import numpy as np


def load(path):
    array = np.load(path)
    if array.dtype != np.float32:
        sys.exit(f"{path}: dtype {array.dtype}, expected float32")
    return array


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a", nargs="?")
    parser.add_argument("b", nargs="?")
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--zero-rows")
    parser.add_argument("--orders", nargs=3, metavar=("QK", "KV", "REF"))
    parser.add_argument("--exact", action="store_true")
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    if args.exact:
        a, b = load(args.a), load(args.b)
        label = args.label or args.a
        if a.shape == b.shape and a.tobytes() == b.tobytes():
            print(f"{label}: identical")
            return 0
        detail = (f"shapes {list(a.shape)} and {list(b.shape)}" if a.shape != b.shape
                  else f"{np.count_nonzero(a != b)} values differ, max|a-b| = "
                       f"{np.abs(a.astype(np.float64) - b).max():.3e}")
        print(f"{label}: DIFFER: {detail}")
        return 1

    if args.orders:
        qk, kv, ref = args.orders
        status = 0
        for a, b, what in ((qk, kv, "qk_first vs kv_first"),
                           (qk, ref, "qk_first vs reference"),
                           (kv, ref, "kv_first vs reference")):
            status |= compare(a, b, args.tol, f"{args.label} {what}".strip())
        return status

    label = args.label or args.a
    a = load(args.a)
    if not np.isfinite(a).all():
        print(f"{label}: DIFFER: {np.count_nonzero(~np.isfinite(a))} non-finite values")
        return 1

    if args.zero_rows:
        lo, hi = (int(x) for x in args.zero_rows.split(":"))
        rows = a.shape[2]
        zero = a[:, :, lo:hi, :]
        rest = np.concatenate([a[:, :, :lo, :], a[:, :, hi:, :]], axis=2)
        if np.count_nonzero(zero) != 0:
            print(f"{label}: DIFFER: rows {lo}:{hi} hold "
                  f"{np.count_nonzero(zero)} non-zero values, max |x| = {np.abs(zero).max():.3e}")
            return 1
        nonzero_rows = np.abs(rest).max(axis=(0, 1, 3)) > 0 if rest.size else np.array([])
        if not nonzero_rows.all():
            print(f"{label}: DIFFER: {np.count_nonzero(~nonzero_rows)} rows outside "
                  f"{lo}:{hi} are all zero")
            return 1
        print(f"{label}: rows {lo}:{hi} of {rows} exactly zero, the others not")
        return 0

    return compare(args.a, args.b, args.tol, label)


def compare(path_a, path_b, tol, label):
    a = load(path_a)
    b = load(path_b)
    if not np.isfinite(a).all():
        print(f"{label}: DIFFER: {np.count_nonzero(~np.isfinite(a))} non-finite values")
        return 1
    if a.shape != b.shape:
        print(f"{label}: DIFFER: shapes {list(a.shape)} and {list(b.shape)}")
        return 1
    if not np.isfinite(b).all():
        print(f"{label}: DIFFER: {path_b} has non-finite values")
        return 1
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    diff = np.abs(a64 - b64)
    scale = np.abs(b64).max() if b.size else 0.0
    row_scale = np.abs(b64).max(axis=-1, keepdims=True)
    bound = tol * np.maximum(row_scale, scale / 100)
    worst = np.unravel_index(np.argmax(diff - bound), diff.shape) if diff.size else None
    max_diff = diff.max() if diff.size else 0.0
    rel = max_diff / scale if scale > 0 else max_diff
    if max_diff > tol * scale or (diff > bound).any():
        print(f"{label}: DIFFER: max|a-b| = {max_diff:.3e} = {rel:.3e} x max|b| "
              f"(tolerance {tol:g}); worst at {list(map(int, worst))}: "
              f"{a64[worst]:.9g} vs {b64[worst]:.9g}")
        return 1
    print(f"{label}: agree: max|a-b| = {rel:.1e} x max|b| (tolerance {tol:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
