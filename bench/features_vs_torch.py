#!/usr/bin/python3
"""DESIGN §1.3's features in attnc's compiled CPU code against PyTorch.

One row per feature and size: attnc (through the Python package, compiled
for --cpu, default x86-64-v3) and its PyTorch peer on the same float32
arrays, timed in alternating rounds (best of --repeat), checked to agree
(max|attnc - peer| / max|peer| < 1e-3), with the ratio attnc / peer (< 1:
attnc faster):

  gqa      Llama-style grouped-query causal attention, H = 32 over H_kv = 8,
           D = 128.  Peer: SDPA(is_causal=True, enable_gqa=True).
  window   causal sliding window of 256 keys, H = 8, D = 64.  Peers: SDPA
           with the boolean band mask, and FlexAttention with the same band
           as a block mask (torch.compile; --no-flex skips it).  Also prints
           the window's time over attnc's full causal time (skipped tiles).
  softcap  Gemma-2 soft-capping (50) under a causal mask, H = 8, D = 128.
           Peer: FlexAttention with the tanh score_mod (and the causal block
           mask); eager PyTorch without --flex.
  alibi    BLOOM's ALiBi under a causal mask, H = 16, D = 64.  Peer: SDPA
           with the additive bias -a_h |i - j| (-inf above the diagonal) as
           its float mask.
  sinks    gpt-oss sinks in a window of 128, H = 64 over H_kv = 8, D = 64.
           Peer: gpt-oss's reference eager form (the sink logit concatenated
           to the scores, softmax, the sink's column dropped).
  decode   one new query against a cache of M keys (causal, bottom-right),
           H = 32 over H_kv = 8, D = 128, N = 1.  Peer: SDPA(enable_gqa=True).
  padded   a padded batch of 4 causal sequences of lengths N, 3N/4, N/2 and
           N/4 (`lengths = lens`), H = 8, D = 64.  Peer: SDPA with the
           boolean mask causal & (j < L_b), its rows past L_b zeroed (attnc's
           are 0 by definition).

PyTorch lives in the virtual environment of bench/cpu_vs_torch.py
(bench/.venv-torch, created on first use; never the test path). Prints the
CPU model, ISA and a probed FMA peak. Exits 1 when a pair disagrees.
"""

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_torch import (  # noqa: E402
    DEFAULT_VENV,
    REPO,
    WORKER_FLAG,
    best_times,
    cpu_flags,
    cpu_model,
    log,
    probe_fma_peak,
    run_in_venv,
)

FEATURES = {
    # name: (H, H_kv, D, body of the term)
    "gqa": (32, 8, 128, "score = softmax\n    mask = causal"),
    "window": (8, 8, 64, "score = softmax\n    mask = window(256)"),
    "window_full": (8, 8, 64, "score = softmax\n    mask = causal"),
    "softcap": (8, 8, 128, "score = softmax\n    mask = causal\n    softcap = 50"),
    "alibi": (16, 16, 64, "score = softmax\n    mask = causal\n    bias = alibi"),
    "sinks": (64, 8, 64, "score = softmax\n    mask = window(128)\n    sink = sinks"),
    "decode": (32, 8, 128, "score = softmax\n    mask = causal"),
    "padded": (8, 8, 64, "score = softmax\n    mask = causal\n    lengths = lens"),
}
# Batch sizes other than 1.
BATCH = {"padded": 4}


def padded_lengths(n):
    return [n, 3 * n // 4, n // 2, n // 4]


def spec_text(feature):
    heads, kv_heads, d, body = FEATURES[feature]
    batch = BATCH.get(feature, 1)
    extra = "  input sinks: [%d]\n" % heads if feature == "sinks" else ""
    if feature == "padded":
        extra = "  input lens: [%d]\n" % batch
    # Self-attention over a padded batch: keys and queries share N.
    m = "N" if feature == "padded" else "M"
    return ("attention bench {\n  dim N\n%s"
            "  input q: [%d, %d, N, %d]\n  input k: [%d, %d, %s, %d]\n  input v: [%d, %d, %s, %d]\n"
            "%s  term {\n    %s\n  }\n}\n") % (
                "" if m == "N" else "  dim M\n", batch, heads, d, batch, kv_heads, m, d,
                batch, kv_heads, m, d, extra, body)


def alibi_slopes(heads):
    def power_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    closest = 2 ** int(math.floor(math.log2(heads)))
    slopes = power_of_two(closest)
    if closest < heads:
        slopes += power_of_two(2 * closest)[0::2][: heads - closest]
    return slopes


def visible_pairs(feature, n, m):
    if feature == "window":
        return sum(min(256, i + 1) for i in range(n))
    if feature == "sinks":
        return sum(min(128, i + 1) for i in range(n))
    if feature == "decode":
        return n * m
    if feature == "padded":
        return sum(length * (length + 1) // 2 for length in padded_lengths(n))
    return n * (n + 1) // 2


def peers(torch, feature, n, m, flex):
    """name -> function(q, k, v, sinks) for FEATURE at N x M."""
    F = torch.nn.functional
    heads, kv_heads, d, _ = FEATURES[feature]
    group = heads // kv_heads
    i = torch.arange(n).unsqueeze(1) + (m - n)
    j = torch.arange(m).unsqueeze(0)
    result = {}
    if feature in ("gqa", "window_full"):
        result["sdpa"] = lambda q, k, v, s: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=group > 1)
    elif feature == "decode":
        result["sdpa"] = lambda q, k, v, s: F.scaled_dot_product_attention(
            q, k, v, enable_gqa=True)
    elif feature == "padded":
        lengths = torch.tensor(padded_lengths(n)).view(-1, 1, 1, 1)
        allowed = (j <= i) & (j < lengths)            # [B, 1, N, N]
        kept = (torch.arange(n).view(1, 1, n, 1) < lengths).float()

        def padded(q, k, v, s):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed) * kept

        result["sdpa-mask"] = padded
    elif feature == "window":
        band = (j <= i) & (j > i - 256)
        result["sdpa-mask"] = lambda q, k, v, s: F.scaled_dot_product_attention(
            q, k, v, attn_mask=band)
    elif feature == "alibi":
        slopes = torch.tensor(alibi_slopes(heads)).view(heads, 1, 1)
        bias = -slopes * (i - j).abs().float()
        bias = bias.masked_fill(~(j <= i), float("-inf"))
        result["sdpa-bias"] = lambda q, k, v, s: F.scaled_dot_product_attention(
            q, k, v, attn_mask=bias)
    elif feature == "sinks":
        band = (j <= i) & (j > i - 128)

        def gpt_oss(q, k, v, s):
            kk = k.repeat_interleave(group, dim=1)
            vv = v.repeat_interleave(group, dim=1)
            scores = (q @ kk.transpose(-1, -2)) / math.sqrt(d)
            scores = scores.masked_fill(~band, float("-inf"))
            sink = s.view(1, heads, 1, 1).expand(q.shape[0], heads, n, 1)
            weights = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]
            return weights @ vv

        result["eager-gpt-oss"] = gpt_oss
    elif feature == "softcap":
        def eager(q, k, v, s):
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
            scores = 50.0 * torch.tanh(scores / 50.0)
            scores = scores.masked_fill(~(j <= i), float("-inf"))
            return torch.softmax(scores, dim=-1) @ v

        result["eager"] = eager
    if flex and feature in ("window", "softcap"):
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention

            compiled = torch.compile(flex_attention)
            if feature == "window":
                block = create_block_mask(lambda b, h, qi, ki: (ki <= qi) & (qi - ki < 256),
                                          None, None, n, m, device="cpu")
                result["flex"] = lambda q, k, v, s: compiled(q, k, v, block_mask=block)
            else:
                block = create_block_mask(lambda b, h, qi, ki: ki <= qi, None, None, n, m,
                                          device="cpu")

                def cap(score, b, h, qi, ki):
                    return 50.0 * torch.tanh(score / 50.0)

                result["flex"] = lambda q, k, v, s: compiled(q, k, v, score_mod=cap,
                                                             block_mask=block)
        except Exception as error:  # an old torch without FlexAttention
            log("flex_attention unavailable: %s" % error)
    return result


def worker(args):
    sys.path.insert(0, os.path.join(REPO, "python"))
    import numpy as np
    import torch

    import attn

    flags = cpu_flags()
    has512 = "avx512f" in flags and "avx512bw" in flags
    isa = "AVX-512" if has512 else ("AVX2+FMA" if "avx2" in flags and "fma" in flags else "SSE/AVX")
    peak = probe_fma_peak(512 if args.cpu == "x86-64-v4" else 256)
    print("# attnc (compiled for %s) vs PyTorch %s, f32; %s UTC"
          % (args.cpu, torch.__version__, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())))
    print("# cpu: %s, %d cores, ISA %s; FMA peak (probe, one core) %s GFLOP/s"
          % (cpu_model(), os.cpu_count(), isa, "%.1f" % peak if peak else "unknown"))
    print("# best of %d alternating rounds; agree: max|attnc-peer|/max|peer| < 1e-3; "
          "ratio = attnc time / peer time" % args.repeat)
    header = "| feature | N | M | thr | peer | attnc ms | peer ms | attnc/peer | attnc GF/s | agree |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    rng = np.random.default_rng(7)
    failed = False
    full_causal = {}
    for feature in args.features.split(","):
        heads, kv_heads, d, _ = FEATURES[feature]
        sizes = ([(1, int(m)) for m in args.cache.split(",")] if feature == "decode"
                 else [(int(n), int(n)) for n in args.n.split(",")])
        kernels = {t: attn.compile(spec_text(feature), cpu=args.cpu, threads=t, cache_dir=False)
                   for t in [int(x) for x in args.threads.split(",")]}
        for n, m in sizes:
            batch = BATCH.get(feature, 1)
            q = rng.standard_normal((batch, heads, n, d), dtype=np.float32)
            k = rng.standard_normal((batch, kv_heads, m, d), dtype=np.float32)
            v = rng.standard_normal((batch, kv_heads, m, d), dtype=np.float32)
            sinks = rng.standard_normal(heads, dtype=np.float32)
            named = {"sinks": sinks} if feature == "sinks" else {}
            if feature == "padded":
                named = {"lens": np.array(padded_lengths(n), np.float32)}
            tq, tk, tv, ts = (torch.from_numpy(x) for x in (q, k, v, sinks))
            fns = peers(torch, feature, n, m, args.flex)
            flop = 4.0 * heads * visible_pairs(feature, n, m) * d
            for threads, kernel in kernels.items():
                torch.set_num_threads(threads)
                out = np.empty((batch, heads, n, d), dtype=np.float32)
                run_attn = lambda: kernel(q, k, v, out=out, **named)
                if feature == "window_full":
                    (t_attn,) = best_times([run_attn], args.repeat)
                    full_causal[(n, threads)] = t_attn
                for name, fn in fns.items():
                    with torch.no_grad():
                        expected = fn(tq, tk, tv, ts).numpy()
                        t_attn, t_peer = best_times([run_attn, lambda: fn(tq, tk, tv, ts)],
                                                    args.repeat)
                    err = np.abs(out - expected).max() / max(np.abs(expected).max(), 1e-30)
                    failed |= not err < 1e-3
                    print("| %s | %d | %d | %d | %s | %.3f | %.3f | %.2f | %.1f | %s |"
                          % (feature, n, m, threads, name, t_attn * 1e3, t_peer * 1e3,
                             t_attn / t_peer, flop / t_attn / 1e9,
                             "yes" if err < 1e-3 else "NO (%.1e)" % err), flush=True)
                if feature == "window" and (n, threads) in full_causal:
                    (t_window,) = best_times([run_attn], args.repeat)
                    print("# window(256) / full causal, N = %d, %d thread(s): %.1f%%"
                          % (n, threads, 100.0 * t_window / full_causal[(n, threads)]))
        for kernel in kernels.values():
            kernel.close()
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", default=DEFAULT_VENV, help="virtual environment for torch")
    parser.add_argument("--features",
                        default="gqa,window_full,window,softcap,alibi,sinks,decode,padded")
    parser.add_argument("--n", default="1024,4096", help="sequence lengths (N = M)")
    parser.add_argument("--cache", default="4096,16384,65536", help="decode: cache lengths M")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--cpu", default="x86-64-v3", help="attnc CPU target")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--flex", action="store_true", help="also time torch.compile(flex_attention)")
    parser.add_argument(WORKER_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside_venv:
        return worker(args)
    return run_in_venv(args.venv, __file__)


if __name__ == "__main__":
    sys.exit(main())
