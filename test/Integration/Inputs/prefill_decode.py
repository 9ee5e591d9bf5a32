#!/usr/bin/env python3
"""Prefill + decode = one pass (DESIGN §1.2), on `attnc run --save` folders.

    prefill_decode.py split FULL PREFILL DECODE --tokens N [--state S0 --norm Z0]
    prefill_decode.py compare FULL PREFILL DECODE --tokens N [--rtol R]

split: FULL holds the N + 1 tokens' inputs (q, k, v and [B, H, N+1] inputs
such as decays and key weights, as `attnc run --save` wrote them); writes
the first N tokens to PREFILL and token N to DECODE (every array whose axis
2 has N + 1 entries is cut along it, other arrays are copied).
After the prefill has run and saved state.npy (and norm_state.npy), the
caller copies them into DECODE under the decode spec's state input names.

compare: FULL/out.npy against PREFILL/out.npy (rows 0..N-1) and
DECODE/out.npy (row N), and FULL/state.npy (and norm_state.npy) against
DECODE's: relative error of each (max |a - b| / max |b|) below --rtol
(default 1e-5). Exits 1 otherwise.
"""

import argparse
import os
import shutil
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["split", "compare"])
    parser.add_argument("full")
    parser.add_argument("prefill")
    parser.add_argument("decode")
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    n = args.tokens
    if args.mode == "split":
        for directory in (args.prefill, args.decode):
            os.makedirs(directory, exist_ok=True)
        for name in sorted(os.listdir(args.full)):
            if not name.endswith(".npy") or name in ("out.npy", "state.npy",
                                                      "norm_state.npy"):
                continue
            array = np.load(os.path.join(args.full, name))
            if array.ndim >= 3 and array.shape[2] == n + 1:
                np.save(os.path.join(args.prefill, name), array[:, :, :n])
                np.save(os.path.join(args.decode, name), array[:, :, n:])
            else:
                shutil.copy(os.path.join(args.full, name), args.prefill)
                shutil.copy(os.path.join(args.full, name), args.decode)
        return 0

    def rel(a, b):
        return float(np.max(np.abs(a.astype(np.float64) - b)) /
                     max(float(np.max(np.abs(b))), 1e-30))

    load = lambda d, name: np.load(os.path.join(d, name))
    full = load(args.full, "out.npy")
    checks = [("prefill rows", load(args.prefill, "out.npy"), full[:, :, :n]),
              ("decode row", load(args.decode, "out.npy"), full[:, :, n:])]
    for name in ("state.npy", "norm_state.npy"):
        if os.path.exists(os.path.join(args.full, name)):
            checks.append(("final " + name[:-4], load(args.decode, name),
                           load(args.full, name)))
    ok = True
    for what, actual, expected in checks:
        if actual.shape != expected.shape or not np.all(np.isfinite(actual)):
            print(f"FAILED: {what}: shape {actual.shape} vs {expected.shape} or not finite")
            ok = False
            continue
        error = rel(actual, expected)
        good = error <= args.rtol
        ok &= good
        print(f"{'ok' if good else 'FAILED'}: {what} relative error {error:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
