#!/usr/bin/python3
"""attnc's compiled CPU code against PyTorch on the same inputs, in one run.

For each variant, head dim D, sequence length N (B = 1, H = 8), thread count
and CPU target (`x86-64-v3` always, `x86-64-v4` where the host has AVX-512),
this script compiles the spec with the attn Python package (python/attn, the
C API of build/lib/libattn_c.so) for that CPU, times it and its PyTorch peers
on the same float32 arrays, checks that they agree (max|attnc - peer| /
max|peer| < 1e-3), and prints attnc/peer time ratios, GFLOP/s and % of the
probed FMA peak:

  softmax, softmax_causal  peers: torch.nn.functional.scaled_dot_product_attention
                           (SDPA, its CPU flash kernel) and
                           torch.compile(flex_attention) (--no-flex skips it)
  elu1                     peer: eager kv-first  phi(q) (phi(k)^T v) / (phi(q) sum phi(k))
  elu1_causal              peer: eager chunked form, c = 64 (state carried across chunks)
  favor+                   peer: eager PyTorch FAVOR+ with the same omega (kv-first)

--dtype bf16 (or f16) declares q, k, v and the output of that type in the
spec (docs/language.md §4.1: attnc widens on load and computes in f32) and
gives PyTorch the same rounded values as bfloat16 / float16 tensors, so its
peers compute in the narrow type (what a PyTorch user with a bf16 model
gets); agreement is then 3e-2 of max|peer|.

FLOPs (both sides, whatever order attnc runs):
  softmax  4*B*H*N*N*D (half when causal); elu1 4*B*H*N*D*D;
  favor+   4*B*H*N*m*D (features of q and k) + 4*B*H*N*m*D (state products).

PyTorch is never installed into the system or the test path: the script
creates (or reuses) its own virtual environment, bench/.venv-torch by default
(--venv), pip-installs torch and numpy there (a large download the first
time) and re-executes itself inside it. The FMA peak is probed with a small
C program compiled by clang-22 (12 independent FMA chains of the ISA's
vector width, one thread per core).

Peers run on the ISA of the attnc code they are compared with
(--peer-isa match, the default): on an AVX-512 host the x86-64-v3 rows run
in their own worker with ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2
and MKL_ENABLE_INSTRUCTIONS=AVX2, so that AVX2 code meets PyTorch's AVX2
kernels, as it would on an AVX2 machine. --peer-isa native gives every row
the host's best PyTorch.

Run `bench/cpu_vs_torch.py --help`; docs/performance.md holds its tables.
"""

import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_VENV = os.path.join(REPO, "bench", ".venv-torch")
BATCH, HEADS = 1, 8
FAVOR_FEATURES = 256
CHUNK = 64
WORKER_FLAG = "--inside-venv"

PROBE_C = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#if WIDTH == 512
typedef __m512 V;
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LANES 16
#else
typedef __m256 V;
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define LANES 8
#endif
int main(void) {
  V a[12], x = SET1(1.0000001f), y = SET1(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = SET1((float)i);
  long n = 40000000;
  struct timespec s, e;
  clock_gettime(CLOCK_MONOTONIC, &s);
  for (long i = 0; i < n; ++i) {
    for (int j = 0; j < 12; ++j) a[j] = FMA(a[j], x, y);
    __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]),
                     "+x"(a[4]), "+x"(a[5]), "+x"(a[6]), "+x"(a[7]),
                     "+x"(a[8]), "+x"(a[9]), "+x"(a[10]), "+x"(a[11]));
  }
  clock_gettime(CLOCK_MONOTONIC, &e);
  double t = (e.tv_sec - s.tv_sec) + (e.tv_nsec - s.tv_nsec) / 1e9;
  float sum = 0;
  for (int j = 0; j < 12; ++j) sum += ((float *)&a[j])[0];
  printf("%f %f\n", n * 12.0 * LANES * 2 / t / 1e9, sum);
  return 0;
}
"""


def log(message):
    print(message, file=sys.stderr, flush=True)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def has_avx512(flags):
    return "avx512f" in flags and "avx512bw" in flags


def cpu_targets(option, flags):
    """The attnc CPUs of a comma-separated --cpu, or by default x86-64-v3
    and, on AVX-512 hosts, x86-64-v4."""
    return [c for c in option.split(",") if c] or (
        ["x86-64-v3"] + (["x86-64-v4"] if has_avx512(flags) else []))


def probe_fma_peak(width):
    """GFLOP/s of one core for WIDTH-bit FMAs, or None without clang-22."""
    clang = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
    if not os.path.exists(clang) and not shutil.which(clang):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
        with open(src, "w") as f:
            f.write(PROBE_C)
        arch = ["-mavx512f"] if width == 512 else ["-mavx2", "-mfma"]
        if subprocess.run([clang, "-O2", "-DWIDTH=%d" % width, *arch, src, "-o", exe]).returncode:
            return None
        best = 0.0
        for _ in range(3):
            out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
            best = max(best, float(out[0]))
        return best


# --------------------------------------------------------------------------
# The virtual environment
# --------------------------------------------------------------------------


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python):
        ok = subprocess.run([python, "-c", "import torch, numpy"], capture_output=True)
        if ok.returncode == 0:
            return python
    log("creating %s and installing torch and numpy (a large download)" % venv)
    creators = [sys.executable, shutil.which("python3"), "/usr/bin/python3"]
    for creator in [c for c in creators if c]:
        if subprocess.run([creator, "-m", "venv", venv]).returncode == 0:
            break
    else:
        sys.exit("cannot create a virtual environment at %s" % venv)
    if subprocess.run([python, "-m", "pip", "install", "-q", "torch", "numpy"]).returncode:
        sys.exit("pip install torch numpy failed in %s" % venv)
    return python


# --------------------------------------------------------------------------
# Specs and peers (inside the virtual environment)
# --------------------------------------------------------------------------


def spec_text(variant, d, dtype="f32"):
    body = {
        "softmax": "score = softmax",
        "softmax_causal": "score = softmax\n    mask = causal",
        "elu1": "score = kernel elu1",
        "elu1_causal": "score = kernel elu1\n    mask = causal",
        "favor+": "score = kernel favor+\n    omega = omega",
    }[variant]
    omega = "  dim m = %d\n" % FAVOR_FEATURES if variant == "favor+" else ""
    extra = "  input omega: [m, %d]\n" % d if variant == "favor+" else ""
    # --dtype bf16 / f16: q, k, v and the output of that type (f32 math).
    elem = "" if dtype == "f32" else dtype
    output = "" if dtype == "f32" else "  output %s\n" % dtype
    return (
        "attention bench {\n  dim N\n%s"
        "  input q: {t}[1, 8, N, {d}]\n  input k: {t}[1, 8, N, {d}]\n"
        "  input v: {t}[1, 8, N, {d}]\n"
        "%s%s  term {\n    %s\n  }\n}\n"
    ).replace("{d}", str(d)).replace("{t}", elem) % (omega, extra, output, body)


def to_dtype(np, x, dtype):
    """The float32 array X as attn takes DTYPE: float32, float16, or the
    bfloat16 bit patterns (round to nearest even) as uint16."""
    if dtype == "f16":
        return x.astype(np.float16)
    if dtype == "bf16":
        b = x.view(np.uint32)
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return x


def widen(np, x, dtype):
    """An array attn returned for DTYPE, as float32."""
    if dtype == "bf16":
        return (np.asarray(x).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.asarray(x, dtype=np.float32)


def flops(variant, n, d):
    bh = BATCH * HEADS
    if variant.startswith("softmax"):
        f = 4.0 * bh * n * n * d
        return f / 2 if variant.endswith("causal") else f
    if variant.startswith("elu1"):
        return 4.0 * bh * n * d * d
    return 8.0 * bh * n * FAVOR_FEATURES * d


def torch_peers(torch, variant, no_flex):
    """name -> function(q, k, v, omega) for VARIANT."""
    F = torch.nn.functional

    def elu1(x):
        return F.elu(x) + 1

    def kv_first(fq, fk, v, eps=1e-6):
        state = fk.transpose(-1, -2) @ v
        norm = fk.sum(-2)
        return (fq @ state) / ((fq * norm.unsqueeze(-2)).sum(-1, keepdim=True) + eps)

    def chunked_causal(fq, fk, v, eps=1e-6, c=CHUNK):
        n = fq.shape[-2]
        out = torch.empty(fq.shape[:-1] + (v.shape[-1],), dtype=v.dtype)
        state = torch.zeros(fq.shape[:-2] + (fq.shape[-1], v.shape[-1]), dtype=v.dtype)
        norm = torch.zeros(fq.shape[:-2] + (fq.shape[-1],), dtype=v.dtype)
        tri = torch.ones(c, c, dtype=torch.bool).tril()
        for s in range(0, n, c):
            e = min(s + c, n)
            qc, kc, vc = fq[..., s:e, :], fk[..., s:e, :], v[..., s:e, :]
            w = (qc @ kc.transpose(-1, -2)) * tri[: e - s, : e - s]
            num = qc @ state + w @ vc
            den = (qc * norm.unsqueeze(-2)).sum(-1) + w.sum(-1) + eps
            out[..., s:e, :] = num / den.unsqueeze(-1)
            state = state + kc.transpose(-1, -2) @ vc
            norm = norm + kc.sum(-2)
        return out

    def favor(x, omega, d):
        xs = x * d ** -0.25
        proj = xs @ omega.T.to(xs.dtype)
        return torch.exp(proj - (xs * xs).sum(-1, keepdim=True) / 2) / math.sqrt(omega.shape[0])

    peers = {}
    if variant.startswith("softmax"):
        causal = variant.endswith("causal")
        peers["sdpa"] = lambda q, k, v, om: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if not no_flex:
            try:
                from torch.nn.attention.flex_attention import create_block_mask, flex_attention

                compiled = torch.compile(flex_attention)
                masks = {}

                def flex(q, k, v, om):
                    n = q.shape[-2]
                    if causal and n not in masks:
                        masks[n] = create_block_mask(
                            lambda b, h, qi, ki: ki <= qi, None, None, n, n, device="cpu"
                        )
                    return compiled(q, k, v, block_mask=masks.get(n))

                peers["flex"] = flex
            except Exception as e:  # an old torch without FlexAttention
                log("flex_attention unavailable: %s" % e)
    elif variant == "elu1":
        peers["eager-kv"] = lambda q, k, v, om: kv_first(elu1(q), elu1(k), v)
    elif variant == "elu1_causal":
        peers["eager-chunk%d" % CHUNK] = lambda q, k, v, om: chunked_causal(elu1(q), elu1(k), v)
    else:
        peers["eager-favor"] = lambda q, k, v, om: kv_first(
            favor(q, om, q.shape[-1]), favor(k, om, q.shape[-1]), v
        )
    return peers


def best_times(fns, repeat):
    """Best time of each of FNS over REPEAT rounds that run them in turn, so
    that a slow spell of a shared machine hits all of them alike."""
    for fn in fns:
        fn()  # warm up (and compile, for torch.compile)
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def worker(args):
    sys.path.insert(0, os.path.join(REPO, "python"))
    import numpy as np
    import torch

    import attn

    flags = cpu_flags()
    has512 = has_avx512(flags)
    cpus = cpu_targets(args.cpu, flags)
    isa = "AVX-512" if has512 else ("AVX2+FMA" if "avx2" in flags and "fma" in flags else "SSE/AVX")
    print("# attnc (compiled, CPU) vs PyTorch %s, B=%d H=%d, %s; %s UTC"
          % (torch.__version__, BATCH, HEADS,
             "f32" if args.dtype == "f32" else
             "%s q, k, v and output on both sides (attnc: f32 math)" % args.dtype,
             time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())))
    print("# cpu: %s, %d cores, ISA %s; torch CPU capability %s%s"
          % (cpu_model(), os.cpu_count(), isa, torch.backends.cpu.get_cpu_capability(),
             " (ATEN_CPU_CAPABILITY=%s ONEDNN_MAX_CPU_ISA=%s MKL_ENABLE_INSTRUCTIONS=%s)"
             % (os.environ.get("ATEN_CPU_CAPABILITY"), os.environ.get("ONEDNN_MAX_CPU_ISA"),
                os.environ.get("MKL_ENABLE_INSTRUCTIONS"))
             if os.environ.get("ATEN_CPU_CAPABILITY") else ""))
    peaks = {}
    for width in (256, 512) if has512 else (256,):
        peaks[width] = probe_fma_peak(width)
        print("# FMA peak (probe, %d-bit, one core): %s GFLOP/s"
              % (width, "%.1f" % peaks[width] if peaks[width] else "unknown"))
    agree = 1e-3 if args.dtype == "f32" else 3e-2
    print("# best of %d alternating rounds (attnc, peer); agree: max|attnc-peer|/max|peer| < %g; ratio = attnc time / peer time"
          % (args.repeat, agree))
    print("# OMP_WAIT_POLICY=%s KMP_BLOCKTIME=%s (both OpenMP runtimes release the cores after a region)"
          % (os.environ.get("OMP_WAIT_POLICY"), os.environ.get("KMP_BLOCKTIME")))
    print("# load average at start: %.2f" % os.getloadavg()[0])

    rng = np.random.default_rng(1234)
    ns = []
    n = args.min_n
    while n <= args.max_n:
        ns.append(n)
        n *= 2
    header = ("| cpu | variant | D | N | thr | peer | attnc ms | peer ms | attnc/peer |"
              " attnc GF/s | % peak | agree |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    ratios = {}
    for cpu in cpus:
        width = 512 if cpu == "x86-64-v4" or (cpu == "native" and has512) else 256
        for variant in args.variants.split(","):
            for d in [int(x) for x in args.d.split(",")]:
                thread_counts = [int(x) for x in args.threads.split(",")]
                kernels = {t: attn.compile(spec_text(variant, d, args.dtype), cpu=cpu,
                                           threads=t, cache_dir=False)
                           for t in thread_counts}
                peers = torch_peers(torch, variant, args.no_flex)
                for n in ns:
                    shape = (BATCH, HEADS, n, d)
                    q = rng.standard_normal(shape, dtype=np.float32)
                    k = rng.standard_normal(shape, dtype=np.float32)
                    v = rng.standard_normal(shape, dtype=np.float32)
                    omega = rng.standard_normal((FAVOR_FEATURES, d), dtype=np.float32)
                    named = {"omega": omega} if variant == "favor+" else {}
                    tq, tk, tv, tom = (torch.from_numpy(x) for x in (q, k, v, omega))
                    if args.dtype != "f32":
                        # Both sides get the same rounded values; torch
                        # computes in the narrow type, attnc in f32.
                        narrow = torch.bfloat16 if args.dtype == "bf16" else torch.float16
                        tq, tk, tv = (t.to(narrow) for t in (tq, tk, tv))
                        q, k, v = (to_dtype(np, x, args.dtype) for x in (q, k, v))
                    for threads in thread_counts:
                        torch.set_num_threads(threads)
                        kernel = kernels[threads]
                        out = kernel(q, k, v, **named)
                        run_attn = lambda: kernel(q, k, v, out=out, **named)
                        for name, fn in peers.items():
                            with torch.no_grad():
                                result = fn(tq, tk, tv, tom).float().numpy()
                                run_peer = lambda: fn(tq, tk, tv, tom)
                                t_attn, t_peer = best_times([run_attn, run_peer], args.repeat)
                            gf = flops(variant, n, d) / t_attn / 1e9
                            pct = (100.0 * gf / (peaks[width] * threads) if peaks.get(width)
                                   else float("nan"))
                            got = widen(np, out, args.dtype)
                            err = np.abs(got - result).max() / max(np.abs(result).max(), 1e-30)
                            ratio = t_attn / t_peer
                            ratios.setdefault((cpu, variant, name, threads), []).append((n, ratio))
                            print("| %s | %s | %d | %d | %d | %s | %.3f | %.3f | %.2f | %.1f | %.0f | %s |"
                                  % (cpu, variant, d, n, threads, name, t_attn * 1e3, t_peer * 1e3,
                                     ratio, gf, pct, "yes" if err < agree else "NO (%.1e)" % err),
                                  flush=True)
                for kernel in kernels.values():
                    kernel.close()
    print("\n# geometric mean of attnc/peer over N >= 512")
    for (cpu, variant, name, threads), values in sorted(ratios.items()):
        big = [r for n, r in values if n >= 512]
        if big:
            g = math.exp(sum(math.log(r) for r in big) / len(big))
            print("# %s %s vs %s, %d thread(s): geomean %.2f, worst %.2f"
                  % (cpu, variant, name, threads, g, max(big)))
    print("# load average at end: %.2f" % os.getloadavg()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", default=DEFAULT_VENV, help="virtual environment for torch")
    parser.add_argument("--variants", default="softmax,softmax_causal,elu1,elu1_causal,favor+")
    parser.add_argument("--d", default="64,128", help="head dims")
    parser.add_argument("--min-n", type=int, default=256)
    parser.add_argument("--max-n", type=int, default=16384)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--cpu", default="", help="attnc CPU targets (default: x86-64-v3, and x86-64-v4 on AVX-512 hosts)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-flex", action="store_true", help="skip torch.compile(flex_attention)")
    parser.add_argument("--dtype", choices=("f32", "bf16", "f16"), default="f32",
                        help="element type of q, k, v and the output on both sides")
    parser.add_argument("--peer-isa", choices=("match", "native"), default="match",
                        help="match: the x86-64-v3 rows' peers use PyTorch's AVX2 kernels on "
                        "AVX-512 hosts too; native: the host's best")
    parser.add_argument(WORKER_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside_venv:
        return worker(args)
    flags = cpu_flags()
    cpus = cpu_targets(args.cpu, flags)
    if args.peer_isa == "native" or not has_avx512(flags):
        return run_in_venv(args.venv, __file__, ["--cpu", ",".join(cpus)])
    # One worker per CPU target, each with its peers' ISA.
    status = 0
    for cpu in cpus:
        avx2 = cpu == "x86-64-v3"
        isa_env = ({"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                    "MKL_ENABLE_INSTRUCTIONS": "AVX2"} if avx2 else {})
        status = status or run_in_venv(args.venv, __file__, ["--cpu", cpu], isa_env)
    return status


def run_in_venv(venv, script, extra_args=(), extra_env=None):
    """Re-executes SCRIPT with its arguments (then EXTRA_ARGS, which win)
    inside VENV (made on first use) with WORKER_FLAG and EXTRA_ENV, and
    returns its exit status."""
    python = ensure_venv(venv)
    env = dict(os.environ)
    env.update(extra_env or {})
    env.setdefault("ATTN_LIBRARY", os.path.join(REPO, "build", "lib", "libattn_c.so"))
    # Two OpenMP runtimes share the process (PyTorch's libgomp, the kernels'
    # libomp), timed in turn: by default each keeps its threads spinning
    # after a parallel region (libomp for 200 ms), on the cores the other
    # one runs on next. Both read these and then release the cores at once.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env.setdefault("KMP_BLOCKTIME", "0")
    return subprocess.run([python, os.path.abspath(script), WORKER_FLAG] + sys.argv[1:]
                          + list(extra_args), env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
