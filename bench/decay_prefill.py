#!/usr/bin/env python3
"""Decayed linear attention prefill: attnc against eager forms of the same math.

    /usr/bin/python3 bench/decay_prefill.py [--quick] [--max-n N] [--repeat R]
                                             [--threads T] [--json FILE]

For simple GLA / Mamba-2 style scalar decay (examples/simple_gla.attn:
identity features, one gate g_t per token and head, no normaliser, H = 8,
D = E = 64) and RetNet (examples/retnet.attn: one gamma per head), at
N = 1024 ... 65536 (--quick: up to 8192), the same float32 inputs go to

  * attnc: `attnc run --inputs DIR --bench --repeat R --threads T`, the
    cost model's order (chunked kv-first here), median of R timed calls;
  * eager chunked: flash-linear-attention's naive chunk reference restated
    in array code, chunk 64, all heads at once per chunk: in-chunk
    cumulative log decay L, A = (q k^T) * exp(L_i - L_j) (lower triangle),
    o = A v + (q * exp(L)) S, S = exp(L_last) S + (k * exp(L_last - L))^T v;
  * eager recurrent: S = g S + k v^T, o = q S per token, all heads at once
    (up to --recurrent-max-n tokens: one interpreter step per token).

The array library is PyTorch when it is importable (a benchmark venv), else
numpy; both use float32 and every core. The outputs must agree (max error
relative to max |o| below 1e-3) or the script exits 1. Printed: the CPU
model, ISA and a probed FMA peak, then one row per (variant, N) with the
times and the ratios peer / attnc (> 1: attnc is faster).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_vs_torch import cpu_flags, cpu_model, probe_fma_peak  # noqa: E402

ROOT = os.path.dirname(HERE)
CHUNK = 64


def array_library():
    try:
        import torch  # noqa: F401

        return "torch"
    except ImportError:
        return "numpy"


def chunked_numpy(q, k, v, g):
    """q, k [H, N, D], v [H, N, E], g [H, N] -> o [H, N, E]."""
    heads, n, _ = q.shape
    e = v.shape[2]
    state = np.zeros((heads, q.shape[2], e), np.float32)
    out = np.empty((heads, n, e), np.float32)
    log_g = np.log(g)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        qc, kc, vc = q[:, start:stop], k[:, start:stop], v[:, start:stop]
        lam = np.cumsum(log_g[:, start:stop], axis=1)
        c = stop - start
        tril = np.tril(np.ones((c, c), bool))
        decay = np.where(tril, np.exp(np.minimum(lam[:, :, None] - lam[:, None, :], 0)), 0)
        scores = (qc @ kc.transpose(0, 2, 1)) * decay
        out[:, start:stop] = scores @ vc + (qc * np.exp(lam)[:, :, None]) @ state
        last = lam[:, -1:]
        state = np.exp(last)[:, :, None] * state + (kc * np.exp(last - lam)[:, :, None]).transpose(0, 2, 1) @ vc
    return out


def chunked_torch(torch, q, k, v, g):
    heads, n, _ = q.shape
    state = torch.zeros((heads, q.shape[2], v.shape[2]))
    out = torch.empty((heads, n, v.shape[2]))
    log_g = torch.log(g)
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        qc, kc, vc = q[:, start:stop], k[:, start:stop], v[:, start:stop]
        lam = torch.cumsum(log_g[:, start:stop], dim=1)
        c = stop - start
        tril = torch.tril(torch.ones((c, c), dtype=torch.bool))
        decay = torch.where(tril, torch.exp(torch.clamp(lam[:, :, None] - lam[:, None, :], max=0)),
                            torch.zeros(()))
        scores = (qc @ kc.transpose(1, 2)) * decay
        out[:, start:stop] = scores @ vc + (qc * torch.exp(lam)[:, :, None]) @ state
        last = lam[:, -1:]
        state = torch.exp(last)[:, :, None] * state + \
            (kc * torch.exp(last - lam)[:, :, None]).transpose(1, 2) @ vc
    return out


def recurrent_numpy(q, k, v, g):
    heads, n, _ = q.shape
    state = np.zeros((heads, q.shape[2], v.shape[2]), np.float32)
    out = np.empty((heads, n, v.shape[2]), np.float32)
    for t in range(n):
        state = g[:, t, None, None] * state + k[:, t, :, None] * v[:, t, None, :]
        out[:, t] = np.einsum("hd,hde->he", q[:, t], state)
    return out


def recurrent_torch(torch, q, k, v, g):
    heads, n, _ = q.shape
    state = torch.zeros((heads, q.shape[2], v.shape[2]))
    out = torch.empty((heads, n, v.shape[2]))
    for t in range(n):
        state = g[:, t, None, None] * state + k[:, t, :, None] * v[:, t, None, :]
        out[:, t] = torch.einsum("hd,hde->he", q[:, t], state)
    return out


def best_of(fn, repeat):
    fn()  # untimed: first-touch allocations
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], result


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attnc", default=os.path.join(ROOT, "build", "bin", "attnc"))
    parser.add_argument("--quick", action="store_true", help="N up to 8192, 3 repeats")
    parser.add_argument("--min-n", type=int, default=1024)
    parser.add_argument("--max-n", type=int, default=65536)
    parser.add_argument("--recurrent-max-n", type=int, default=8192)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--variants", default="simple_gla,retnet")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    if args.quick:
        args.max_n, args.repeat = min(args.max_n, 8192), 3

    library = array_library()
    torch = None
    if library == "torch":
        import torch
        torch.set_num_threads(args.threads)
    flags = cpu_flags()
    isa = "AVX-512" if "avx512f" in flags else "AVX2+FMA" if "fma" in flags else "SSE"
    peak = probe_fma_peak(512 if "avx512f" in flags else 256)
    print("CPU: %s, %s, %d threads, probed FMA peak %s GFLOP/s per core; peers in %s"
          % (cpu_model(), isa, args.threads, "%.0f" % peak if peak else "?", library))
    print("%-10s %6s %11s %13s %8s %14s %8s" % ("variant", "N", "attnc ms", "chunked ms",
                                                 "ratio", "recurrent ms", "ratio"))
    rows = []
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for variant in args.variants.split(","):
            spec = os.path.join(ROOT, "examples", variant + ".attn")
            n = args.min_n
            while n <= args.max_n:
                rng = np.random.default_rng(n)
                heads, d = 8, 64
                q = (rng.standard_normal((1, heads, n, d)) / 8).astype(np.float32)
                k = (rng.standard_normal((1, heads, n, d)) / 8).astype(np.float32)
                v = rng.standard_normal((1, heads, n, d)).astype(np.float32)
                inputs = os.path.join(work, "in-%s-%d" % (variant, n))
                os.makedirs(inputs, exist_ok=True)
                for name, array in (("q", q), ("k", k), ("v", v)):
                    np.save(os.path.join(inputs, name + ".npy"), array)
                if variant == "retnet":
                    gamma = (1 - 2.0 ** (-5 - np.arange(heads))).astype(np.float32)
                    np.save(os.path.join(inputs, "gamma.npy"), gamma)
                    g = np.broadcast_to(gamma[:, None], (heads, n)).copy()
                else:
                    g = rng.uniform(0.9, 1.0, (1, heads, n)).astype(np.float32)
                    np.save(os.path.join(inputs, "g.npy"), g)
                    g = g[0]
                save = os.path.join(work, "out-%s-%d" % (variant, n))
                proc = subprocess.run([args.attnc, "run", spec, "--set", "N=%d" % n,
                                       "--inputs", inputs, "--save", save, "--bench",
                                       "--repeat", str(args.repeat), "--threads",
                                       str(args.threads), "--json"],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print("attnc failed: " + proc.stderr[-400:])
                    return 1
                attnc_s = json.loads(proc.stdout)["bench"]["median_s"]
                out = np.load(os.path.join(save, "out.npy"))[0]
                if torch is not None:
                    tq, tk, tv, tg = (torch.from_numpy(x[0] if x.ndim == 4 else x)
                                      for x in (q, k, v, g))
                    chunked_s, ref = best_of(lambda: chunked_torch(torch, tq, tk, tv, tg),
                                             args.repeat)
                    ref = ref.numpy()
                else:
                    chunked_s, ref = best_of(lambda: chunked_numpy(q[0], k[0], v[0], g),
                                             args.repeat)
                error = np.max(np.abs(out - ref)) / max(np.max(np.abs(ref)), 1e-30)
                recurrent_s = None
                if n <= args.recurrent_max_n:
                    if torch is not None:
                        recurrent_s, rec = best_of(
                            lambda: recurrent_torch(torch, tq, tk, tv, tg), 1)
                        rec = rec.numpy()
                    else:
                        recurrent_s, rec = best_of(
                            lambda: recurrent_numpy(q[0], k[0], v[0], g), 1)
                    error = max(error, np.max(np.abs(out - rec)) / max(np.max(np.abs(rec)), 1e-30))
                ok = error < 1e-3
                failed |= not ok
                print("%-10s %6d %11.3f %13.3f %7.2fx %14s %8s%s"
                      % (variant, n, attnc_s * 1e3, chunked_s * 1e3, chunked_s / attnc_s,
                         "%.1f" % (recurrent_s * 1e3) if recurrent_s else "-",
                         "%.1fx" % (recurrent_s / attnc_s) if recurrent_s else "-",
                         "" if ok else "  DISAGREE %.2e" % error), flush=True)
                rows.append({"variant": variant, "n": n, "attnc_s": attnc_s,
                             "chunked_s": chunked_s, "recurrent_s": recurrent_s,
                             "peer": library, "max_rel_error": float(error)})
                n *= 2
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "isa": isa, "fma_peak_gflops_per_core": peak,
                       "threads": args.threads, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
