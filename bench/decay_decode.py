#!/usr/bin/env python3
"""One-token decode of decayed linear attention: attnc against memory speed
and the eager recurrent step.

    /usr/bin/python3 bench/decay_decode.py [--repeat R] [--threads T] [--json FILE]

examples/decode_step.attn (simple GLA: S = g S + k v^T, o = q S, one token,
H = 8, E = 128, the state [1, 8, m, 128] in and out) with m = 64, 128, 256
(m = E = 128 is the 512 KiB state of issue 13). Per row:

  * attnc: `attnc run --bench`, median of R calls of the compiled step
    (state in, new state out);
  * memory: the time to read the state and write it once (a copy of a
    state-sized float32 buffer, best of many), warm in cache as the state of
    a decode loop is, and the same at DRAM speed (a 256 MiB copy's
    bandwidth applied to the state's bytes);
  * eager: the recurrent step in PyTorch when importable, else numpy
    (state = g state + k v^T; o = q state), best of R.

Prints the CPU model, ISA and probed FMA peak, the times, attnc / memory and
eager / attnc. Exits 1 when attnc's output or state disagrees with the
eager step's (1e-4 of their largest magnitude).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_vs_torch import cpu_flags, cpu_model, probe_fma_peak  # noqa: E402

ROOT = os.path.dirname(HERE)


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attnc", default=os.path.join(ROOT, "build", "bin", "attnc"))
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--features", default="64,128,256")
    parser.add_argument("--json")
    args = parser.parse_args()

    try:
        import torch
        torch.set_num_threads(args.threads)
        library = "torch"
    except ImportError:
        torch, library = None, "numpy"
    flags = cpu_flags()
    isa = "AVX-512" if "avx512f" in flags else "AVX2+FMA" if "fma" in flags else "SSE"
    peak = probe_fma_peak(512 if "avx512f" in flags else 256)
    big = np.ones(64 << 20, np.float32)
    big_out = np.empty_like(big)
    dram_s = best(lambda: np.copyto(big_out, big), 5)
    dram_bw = 2 * big.nbytes / dram_s
    print("CPU: %s, %s, %d threads, probed FMA peak %s GFLOP/s per core; DRAM copy "
          "%.1f GB/s (read + write); eager step in %s"
          % (cpu_model(), isa, args.threads, "%.0f" % peak if peak else "?", dram_bw / 1e9,
             library))
    print("%5s %10s %10s %12s %12s %9s %10s %9s" % ("m", "state KiB", "attnc us", "memory us",
                                                  "DRAM us", "attnc/mem", "eager us",
                                                  "eager/attnc"))
    template = open(os.path.join(ROOT, "examples", "decode_step.attn")).read()
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as work:
        for m in (int(x) for x in args.features.split(",")):
            spec = re.sub(r"input (q|k): \[1, 8, N, 128\]", r"input \1: [1, 8, N, %d]" % m,
                          template)
            spec = spec.replace("input s0: [1, 8, 128, 128]", "input s0: [1, 8, %d, 128]" % m)
            path = os.path.join(work, "decode_%d.attn" % m)
            with open(path, "w") as f:
                f.write(spec)
            rng = np.random.default_rng(m)
            arrays = {"q": rng.standard_normal((1, 8, 1, m)) / np.sqrt(m),
                      "k": rng.standard_normal((1, 8, 1, m)) / np.sqrt(m),
                      "v": rng.standard_normal((1, 8, 1, 128)),
                      "g": rng.uniform(0.9, 1.0, (1, 8, 1)),
                      "s0": rng.standard_normal((1, 8, m, 128))}
            inputs = os.path.join(work, "in-%d" % m)
            os.makedirs(inputs)
            for name, array in arrays.items():
                arrays[name] = array.astype(np.float32)
                np.save(os.path.join(inputs, name + ".npy"), arrays[name])
            save = os.path.join(work, "out-%d" % m)
            proc = subprocess.run([args.attnc, "run", path, "--inputs", inputs, "--save", save,
                                   "--bench", "--repeat", str(args.repeat), "--threads",
                                   str(args.threads), "--json"],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print("attnc failed: " + proc.stderr[-400:])
                return 1
            attnc_s = json.loads(proc.stdout)["bench"]["median_s"]
            state = arrays["s0"]
            copy_out = np.empty_like(state)
            memory_s = best(lambda: np.copyto(copy_out, state), args.repeat)
            dram_state_s = 2 * state.nbytes / dram_bw
            q, k, v, g = (arrays[n][0, :, 0] for n in ("q", "k", "v", "g"))
            s0 = state[0]
            if torch is not None:
                tq, tk, tv, tg, ts = (torch.from_numpy(x) for x in (q, k, v, g, s0))
                step = lambda: (lambda s: (torch.einsum("hd,hde->he", tq, s), s))(
                    tg[:, None, None] * ts + tk[:, :, None] * tv[:, None, :])
            else:
                step = lambda: (lambda s: (np.einsum("hd,hde->he", q, s), s))(
                    g[:, None, None] * s0 + k[:, :, None] * v[:, None, :])
            eager_s = best(step, args.repeat)
            o, s = step()
            o, s = np.asarray(o), np.asarray(s)
            out = np.load(os.path.join(save, "out.npy"))[0, :, 0]
            new_state = np.load(os.path.join(save, "state.npy"))[0]
            error = max(np.max(np.abs(out - o)) / np.max(np.abs(o)),
                        np.max(np.abs(new_state - s)) / np.max(np.abs(s)))
            ok = error < 1e-4
            failed |= not ok
            print("%5d %10d %10.2f %12.2f %12.2f %8.2fx %10.2f %8.1fx%s"
                  % (m, state.nbytes // 1024, attnc_s * 1e6, memory_s * 1e6, dram_state_s * 1e6,
                     attnc_s / memory_s, eager_s * 1e6, eager_s / attnc_s,
                     "" if ok else "  DISAGREE %.2e" % error), flush=True)
            rows.append({"m": m, "state_bytes": int(state.nbytes), "attnc_s": attnc_s,
                         "memory_s": memory_s, "dram_s": dram_state_s, "eager_s": eager_s,
                         "peer": library, "max_rel_error": float(error)})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "isa": isa, "threads": args.threads,
                       "dram_copy_bytes_per_s": dram_bw, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
