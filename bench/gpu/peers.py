#!/usr/bin/env python3
"""PyTorch peers for the GPU device check (bench/gpu/device_check.sh).

For every shape folder under WORK (made by the device check: q.npy, k.npy,
v.npy as attn-gpu-runner generated them, attn_VARIANT.npy with attn's outputs
and meta.json), times on the same inputs, in f32 like attn:

  softmax, softmax_causal  torch.nn.functional.scaled_dot_product_attention
                           (is_causal for causal), and FlexAttention
                           (flex_attention under torch.compile, with a causal
                           block mask for causal);
  elu1, elu1_causal        a PyTorch eager implementation, since SDPA and
                           FlexAttention cannot compute linear attention:
                           kv-first phi(Q) (phi(K)^T V) / (phi(Q) sum phi(K) +
                           eps); causal in chunks (quadratic inside a chunk,
                           exclusive cumulative sums of phi(K_c)^T V_c across).

Each timing is the median of up to --repeat calls after one untimed call,
each call timed by the wall clock around the call and a
torch.cuda.synchronize(), as attn-gpu-runner times attn. attn's output is
compared with the first peer's output: max|attn - peer| / max|peer|.

Prints one JSON object per line to stdout; exits 1 only when PyTorch or the
GPU is missing.
"""

import argparse
import json
import math
import os
import sys
import time

EPS = 1e-6  # the rows normaliser's default for kernel terms (DESIGN §1)


def log(message):
    print("peers.py: " + message, file=sys.stderr, flush=True)


def load_npy(path, torch):
    """Reads a little-endian f32 .npy (what attn-gpu-runner writes) without
    needing numpy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(path + ": not a .npy file")
    major = data[6]
    if major == 1:
        length = int.from_bytes(data[8:10], "little")
        start = 10
    else:
        length = int.from_bytes(data[8:12], "little")
        start = 12
    header = data[start:start + length].decode("latin1")
    # {'descr': '<f4', 'fortran_order': False, 'shape': (1, 16, 1024, 64), }
    import ast

    meta = ast.literal_eval(header)
    if meta["descr"] != "<f4" or meta["fortran_order"]:
        raise ValueError(path + ": expected a C-order '<f4' array")
    shape = tuple(meta["shape"])
    tensor = torch.frombuffer(bytearray(data[start + length:]),
                              dtype=torch.float32)
    return tensor.reshape(shape)


def time_call(sync, fn, repeat, max_seconds):
    """(output, median s, min s, first call s, runs)."""
    sync()
    start = time.perf_counter()
    out = fn()
    sync()
    first = time.perf_counter() - start
    times = []
    total = 0.0
    for i in range(repeat):
        if i > 0 and total >= max_seconds:
            break
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
        total += times[-1]
    times.sort()
    return out, times[len(times) // 2], times[0], first, len(times)


def elu1_linear(torch, q, k, v):
    """Non-causal elu1 linear attention, kv-first."""
    F = torch.nn.functional
    fq = F.elu(q) + 1
    fk = F.elu(k) + 1
    kv = fk.transpose(-1, -2) @ v                      # [B, H, D, E]
    ksum = fk.sum(dim=2)                               # [B, H, D]
    num = fq @ kv                                      # [B, H, N, E]
    den = (fq * ksum.unsqueeze(2)).sum(-1, keepdim=True) + EPS
    return num / den


def elu1_linear_causal(torch, q, k, v, chunk=64):
    """Causal elu1 linear attention in chunks of `chunk` positions: the
    masked quadratic form inside each chunk plus phi(Q_c) times the state of
    every earlier chunk (exclusive cumulative sums)."""
    F = torch.nn.functional
    b, h, n, d = q.shape
    e = v.shape[-1]
    pad = (-n) % chunk
    fq = F.elu(q) + 1
    fk = F.elu(k) + 1
    if pad:  # zero features add nothing to any sum
        fq = F.pad(fq, (0, 0, 0, pad))
        fk = F.pad(fk, (0, 0, 0, pad))
        v = F.pad(v, (0, 0, 0, pad))
    c = (n + pad) // chunk
    fq = fq.reshape(b, h, c, chunk, d)
    fk = fk.reshape(b, h, c, chunk, d)
    vc = v.reshape(b, h, c, chunk, e)
    state = fk.transpose(-1, -2) @ vc                  # [B, H, C, D, E]
    state = torch.cumsum(state, dim=2)
    state = torch.cat([torch.zeros_like(state[:, :, :1]), state[:, :, :-1]], 2)
    ksum = torch.cumsum(fk.sum(dim=3), dim=2)          # [B, H, C, D]
    ksum = torch.cat([torch.zeros_like(ksum[:, :, :1]), ksum[:, :, :-1]], 2)
    mask = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    scores = (fq @ fk.transpose(-1, -2)).masked_fill(~mask, 0.0)
    num = scores @ vc + fq @ state                     # [B, H, C, chunk, E]
    den = scores.sum(-1) + (fq * ksum.unsqueeze(3)).sum(-1) + EPS
    out = (num / den.unsqueeze(-1)).reshape(b, h, c * chunk, e)
    return out[:, :, :n]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", help="the folder holding d<D>_n<N>/ shape folders")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--max-seconds", type=float, default=2.0,
                        help="stop timing one peer after this long")
    parser.add_argument("--deadline", type=float, default=0.0,
                        help="seconds from now after which nothing new starts "
                             "(0: none); FlexAttention, which compiles, is "
                             "skipped when less than --flex-margin is left")
    parser.add_argument("--flex-margin", type=float, default=45.0)
    parser.add_argument("--no-flex", action="store_true")
    parser.add_argument("--device", default="cuda",
                        help="cuda; cpu only tests this script without a GPU")
    args = parser.parse_args()
    stop_at = time.time() + args.deadline if args.deadline > 0 else math.inf

    try:
        import torch
    except ImportError as error:
        log("error: PyTorch is not importable from %s (%s)" % (sys.executable, error))
        return 1
    if args.device == "cuda" and not torch.cuda.is_available():
        log("error: torch.cuda.is_available() is False: no GPU for PyTorch")
        return 1
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    log("PyTorch %s, CUDA %s, %s; TF32 matmul %s" % (
        torch.__version__, torch.version.cuda,
        torch.cuda.get_device_name(0) if device.type == "cuda" else args.device,
        "on" if torch.backends.cuda.matmul.allow_tf32 else "off"))

    flex = None
    create_block_mask = None
    flex_error = None
    if not args.no_flex:
        try:
            from torch.nn.attention.flex_attention import (
                create_block_mask, flex_attention)
            import torch._dynamo

            # One compiled kernel per shape and mask: more than dynamo keeps
            # by default, past which it would silently run flex unfused.
            for name in ("cache_size_limit", "recompile_limit",
                         "accumulated_cache_size_limit",
                         "accumulated_recompile_limit"):
                if hasattr(torch._dynamo.config, name):
                    setattr(torch._dynamo.config, name, 256)
            flex = torch.compile(flex_attention, dynamic=False)
        except Exception as error:  # an older PyTorch
            flex_error = "FlexAttention unavailable: %s" % error
            log(flex_error)

    def causal_mask(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    folders = []
    for name in os.listdir(args.work):
        meta_path = os.path.join(args.work, name, "meta.json")
        if os.path.isfile(meta_path):
            with open(meta_path) as f:
                meta = json.load(f)
            folders.append((meta["D"], meta["N"], os.path.join(args.work, name), meta))
    folders.sort()
    if not folders:
        log("error: no shape folders (meta.json) under " + args.work)
        return 1

    def emit(record):
        print(json.dumps(record), flush=True)

    sdpa = torch.nn.functional.scaled_dot_product_attention
    with torch.inference_mode():
        for d, n, folder, meta in folders:
            base = {"D": d, "N": n, "B": meta["B"], "H": meta["H"]}
            if time.time() > stop_at:
                emit(dict(base, peer="all", error="skipped: out of time"))
                continue
            try:
                q, k, v = (load_npy(os.path.join(folder, x + ".npy"), torch).to(device)
                           for x in ("q", "k", "v"))
            except (OSError, ValueError) as error:
                emit(dict(base, peer="all", error="cannot read the inputs: %s" % error))
                continue
            block_mask = None
            for variant in ("softmax", "softmax_causal", "elu1", "elu1_causal",
                            "softmax_bf16", "softmax_f16", "softmax_tf32"):
                causal = variant.endswith("_causal")
                attn_path = os.path.join(folder, "attn_%s.npy" % variant)
                attn_out = None
                if os.path.isfile(attn_path):
                    attn_out = load_npy(attn_path, torch).to(device)
                narrow = {"softmax_bf16": torch.bfloat16,
                          "softmax_f16": torch.float16}.get(variant)
                if narrow is not None:
                    # SDPA in the narrow type (FlashAttention on sm_80+),
                    # on the inputs rounded as attn rounds them.
                    qn, kn, vn = (x.to(narrow) for x in (q, k, v))
                    peers = [("sdpa", lambda: sdpa(qn, kn, vn))]
                elif variant == "softmax_tf32":
                    # SDPA in fp32 (as for softmax: its fp32 kernels do not
                    # use TF32), the peer a user of f32 inputs would have.
                    peers = [("sdpa", lambda: sdpa(q, k, v))]
                elif variant.startswith("softmax"):
                    peers = [("sdpa", lambda c=causal: sdpa(q, k, v, is_causal=c))]
                    if flex is not None:
                        try:
                            if causal and block_mask is None:
                                block_mask = create_block_mask(
                                    causal_mask, None, None, n, n, device=args.device)
                            bm = block_mask if causal else None
                            peers.append(("flex", lambda bm=bm: flex(q, k, v, block_mask=bm)))
                        except Exception as error:
                            emit(dict(base, variant=variant, peer="flex",
                                      error="create_block_mask: %s" % error))
                    elif flex_error:
                        emit(dict(base, variant=variant, peer="flex", error=flex_error))
                else:
                    fn = elu1_linear_causal if causal else elu1_linear
                    peers = [("eager", lambda fn=fn: fn(torch, q, k, v))]
                reference, scale = None, 0.0
                for index, (peer, fn) in enumerate(peers):
                    record = dict(base, variant=variant, peer=peer)
                    left = stop_at - time.time()
                    if left <= 0 or (peer == "flex" and left < args.flex_margin):
                        emit(dict(record, error="skipped: out of time"))
                        continue
                    try:
                        out, median, fastest, first, runs = time_call(
                            sync, fn, args.repeat, args.max_seconds)
                    except Exception as error:
                        message = str(error).strip().splitlines()
                        emit(dict(record, error="%s: %s" % (
                            type(error).__name__, message[0] if message else "")))
                        torch.cuda.empty_cache()
                        continue
                    record.update(ms=median * 1e3, min_ms=fastest * 1e3,
                                  first_ms=first * 1e3, runs=runs)
                    # The first peer is the one attn is checked against; the
                    # others are checked against it.
                    if index == 0:
                        reference = out.float()
                        scale = reference.abs().max().item()
                        if attn_out is not None:
                            diff = (attn_out - reference).abs().max().item()
                            record["attn_rel_err"] = diff / scale if scale else diff
                    elif reference is not None:
                        diff = (out.float() - reference).abs().max().item()
                        record["rel_err_vs_" + peers[0][0]] = diff / scale if scale else diff
                    emit(record)
                    del out
                del attn_out
            del q, k, v, block_mask, reference
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
