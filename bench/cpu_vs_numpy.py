#!/usr/bin/python3
"""attnc's compiled CPU code against numpy's straightforward attention.

For softmax attention (plain, causal) and elu(x)+1 linear attention (plain,
causal), head dims D in {64, 128} and N = 256, 512, ..., 16384 (B = 1, H = 8),
with 1 and 2 threads, this script

  * generates q, k, v with a fixed seed and saves them as .npy,
  * runs `attnc run SPEC --inputs DIR --save DIR --bench --json --threads T`
    (the spec is examples/<variant>.attn, rewritten for D = 128),
  * times numpy's straightforward implementation on the same inputs, with
    OpenBLAS limited to T threads,
  * checks that both agree (max|attnc - numpy| / max|numpy| < 1e-3),
  * prints a table and the measured N at which elu1 linear attention
    (attnc) becomes faster than softmax attention (attnc).

numpy's thread count can only be fixed before numpy is imported, so the script
re-executes itself once per thread count (`--worker`), with
OPENBLAS_NUM_THREADS=T and OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (some of
these machines set them, which slows a current OpenBLAS down; --keep-blas-env
keeps them). It needs only Debian's /usr/bin/python3 and python3-numpy.

Both sides are counted with the same FLOPs:
  softmax        4*B*H*N*N*D           (half of it when causal)
  elu1 linear    4*B*H*N*D*D + 3*B*H*N*D  (state products + normaliser),
                 plain and causal alike
whatever order attnc actually runs (the `order` column says which).

Run `python3 bench/cpu_vs_numpy.py --help`; bench/README.md explains more.
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# variant name -> (example spec, score, causal)
VARIANTS = {
    "softmax": ("softmax.attn", "softmax", False),
    "softmax_causal": ("softmax_causal.attn", "softmax", True),
    "elu1": ("linear_elu1.attn", "linear", False),
    "elu1_causal": ("linear_elu1_causal.attn", "linear", True),
}
BATCH, HEADS = 1, 8
MAX_N = 16384  # N runs over the powers of two from --min-n (256) to --max-n
BLAS_ENV_DROPPED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
ORIG_LD_PATH = "CPU_VS_NUMPY_ORIG_LD_LIBRARY_PATH"
RESULT = "RESULT "


def log(message):
    print(message, file=sys.stderr, flush=True)


def nominal_flops(variant, d, n):
    """The FLOPs both implementations are credited with (E = D)."""
    _, score, causal = VARIANTS[variant]
    if score == "softmax":
        flops = 4.0 * BATCH * HEADS * n * n * d
        return flops / 2 if causal else flops
    return 4.0 * BATCH * HEADS * n * d * d + 3.0 * BATCH * HEADS * n * d


# ----------------------------------------------------------------------------
# Specs and inputs
# ----------------------------------------------------------------------------

def write_spec(variant, d, spec_dir):
    """examples/<variant>.attn with its [1, 8, N, 64] shapes set to D = d."""
    source = os.path.join(REPO, "examples", VARIANTS[variant][0])
    if d == 64:
        return source
    with open(source) as f:
        text = f.read()
    text, count = re.subn(r"\[1, 8, N, 64\]", "[1, 8, N, %d]" % d, text)
    if count != 3:
        sys.exit("cpu_vs_numpy: %s does not declare three [1, 8, N, 64] "
                 "inputs; cannot make a D = %d variant" % (source, d))
    path = os.path.join(spec_dir, "%s_d%d.attn" % (variant, d))
    with open(path, "w") as f:
        f.write(text)
    return path


def input_dir(work, seed, d, n):
    """q.npy, k.npy, v.npy for (d, n), made once from a fixed seed."""
    import numpy as np
    path = os.path.join(work, "inputs", "d%d_n%d" % (d, n))
    if os.path.exists(os.path.join(path, "v.npy")):
        return path
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng([seed, d, n])
    for name in ("q", "k", "v"):
        array = rng.standard_normal((BATCH, HEADS, n, d), dtype=np.float32)
        np.save(os.path.join(path, name + ".npy"), array)
    return path


def load_inputs(path):
    import numpy as np
    return tuple(np.ascontiguousarray(np.load(os.path.join(path, x + ".npy")))
                 for x in ("q", "k", "v"))


# ----------------------------------------------------------------------------
# numpy's straightforward implementations (f32, like attnc)
# ----------------------------------------------------------------------------

def np_softmax(q, k, v, causal, mask_cache):
    """Stable softmax attention, one head at a time (bounds memory to N^2)."""
    import numpy as np
    b, h, n, d = q.shape
    scale = np.float32(1.0 / math.sqrt(d))
    out = np.empty((b, h, n, v.shape[3]), dtype=np.float32)
    mask = None
    if causal:
        mask = mask_cache.get(n)
        if mask is None:  # built once per N, outside the timed runs
            mask = np.triu(np.ones((n, n), dtype=bool), k=1)
            mask_cache.clear()
            mask_cache[n] = mask
    for bi in range(b):
        for hi in range(h):
            s = q[bi, hi] @ k[bi, hi].T
            s *= scale
            if causal:
                s[mask] = -np.inf
            s -= s.max(axis=1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=1, keepdims=True)
            np.matmul(s, v[bi, hi], out=out[bi, hi])
    return out


def elu1(x):
    import numpy as np
    return np.where(x > 0, x + np.float32(1), np.exp(np.minimum(x, 0)))


def np_linear(q, k, v, eps=1e-6):
    """elu1 linear attention kv-first: phi(q) (phi(k)^T v) / (phi(q) sum phi(k) + eps)."""
    import numpy as np
    pq, pk = elu1(q), elu1(k)
    state = np.swapaxes(pk, -1, -2) @ v              # [B, H, D, E]
    z = pk.sum(axis=2)[..., None]                    # [B, H, D, 1]
    return (pq @ state) / (pq @ z + np.float32(eps))


def np_linear_causal(q, k, v, eps=1e-6):
    """Causal elu1 linear attention with cumulative sums over positions.

    The prefix states S_i = sum_{j<=i} phi(k_j) v_j^T are O(N*D*E) memory for
    all i at once, so they are made one chunk of positions at a time (a
    chunk's states take at most 16 MiB) and carried across chunks.
    """
    import numpy as np
    b, h, n, d = q.shape
    e = v.shape[3]
    pq, pk = elu1(q), elu1(k)
    out = np.empty((b, h, n, e), dtype=np.float32)
    chunk = max(1, min(n, (4 << 20) // (d * e)))
    for bi in range(b):
        for hi in range(h):
            state = np.zeros((d, e), dtype=np.float32)
            zsum = np.zeros(d, dtype=np.float32)
            for start in range(0, n, chunk):
                stop = min(n, start + chunk)
                kc, vc, qc = pk[bi, hi, start:stop], v[bi, hi, start:stop], pq[bi, hi, start:stop]
                prefix = kc[:, :, None] * vc[:, None, :]     # [c, D, E]
                np.cumsum(prefix, axis=0, out=prefix)
                prefix += state
                zc = np.cumsum(kc, axis=0)
                zc += zsum
                num = np.matmul(qc[:, None, :], prefix)[:, 0, :]
                den = np.einsum("cd,cd->c", qc, zc)
                out[bi, hi, start:stop] = num / (den[:, None] + np.float32(eps))
                state = prefix[-1].copy()
                zsum = zc[-1].copy()
    return out


def run_numpy(variant, q, k, v, mask_cache):
    _, score, causal = VARIANTS[variant]
    if score == "softmax":
        return np_softmax(q, k, v, causal, mask_cache)
    return np_linear_causal(q, k, v) if causal else np_linear(q, k, v)


# ----------------------------------------------------------------------------
# attnc
# ----------------------------------------------------------------------------

def attnc_env():
    """attnc gets the caller's environment, without --blas-dir's path."""
    env = dict(os.environ)
    if ORIG_LD_PATH in env:
        original = env.pop(ORIG_LD_PATH)
        if original:
            env["LD_LIBRARY_PATH"] = original
        else:
            env.pop("LD_LIBRARY_PATH", None)
    return env


def attnc_order(attnc, spec, n):
    """The order (and chunk) attnc's cost model picks, from `attnc report`."""
    try:
        proc = subprocess.run([attnc, "report", spec, "--set", "N=%d" % n, "--json"],
                              capture_output=True, text=True, env=attnc_env(),
                              timeout=60)
        chosen = json.loads(proc.stdout)["terms"][0]["chosen"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError):
        return "?"
    order = {"qk_first": "qk", "kv_first": "kv"}.get(chosen.get("order"), "?")
    if chosen.get("chunk"):
        order += "/c%d" % chosen["chunk"]
    return order


def run_attnc(args, variant, spec, inputs, save, n, threads):
    command = [args.attnc, "run", spec, "--set", "N=%d" % n, "--inputs", inputs,
               "--save", save, "--bench", "--repeat", str(args.repeat),
               "--threads", str(threads), "--json"]
    if args.force_order and VARIANTS[variant][1] == "linear":
        command += ["--force-order", args.force_order]  # softmax has qk-first only
    try:
        proc = subprocess.run(command, capture_output=True, text=True,
                              env=attnc_env(), timeout=args.attnc_timeout or None)
    except subprocess.TimeoutExpired:
        return None, "timed out after %g s" % args.attnc_timeout
    if proc.returncode != 0:
        return None, "attnc exited %d: %s" % (proc.returncode, proc.stderr.strip()[-500:])
    try:
        return json.loads(proc.stdout)["bench"], None
    except (ValueError, KeyError):
        return None, "unreadable attnc output: " + proc.stdout[-300:]


# ----------------------------------------------------------------------------
# The worker: one thread count, numpy imported under its OPENBLAS_NUM_THREADS
# ----------------------------------------------------------------------------

def blas_info():
    """Which BLAS numpy runs and, for OpenBLAS, which kernel."""
    import ctypes
    import numpy as np
    a = np.ones((64, 64), dtype=np.float32)
    a @ a  # make sure the BLAS is loaded
    info = {"numpy": np.__version__,
            "env": {x: os.environ.get(x) for x in
                    ("OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}}
    try:
        from threadpoolctl import threadpool_info  # not on Debian by default
        info["threadpoolctl"] = [
            {x: p.get(x) for x in ("internal_api", "version", "architecture",
                                   "num_threads", "filepath")}
            for p in threadpool_info()]
    except ImportError:
        pass
    libraries = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if ("blas" in path or "lapack" in path or "mkl" in path) \
                        and path.startswith("/") and path not in libraries:
                    libraries.append(path)
    except OSError:
        pass
    info["libraries"] = libraries
    for path in libraries:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("openblas_get_config", "openblas_get_corename"):
            function = getattr(library, name, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                info[name] = function().decode()
        function = getattr(library, "openblas_get_num_threads", None)
        if function is not None:
            info["openblas_num_threads"] = function()
    if not any("openblas" in x for x in libraries) and "threadpoolctl" not in info:
        info["note"] = ("numpy does not run OpenBLAS here (see bench/README.md); "
                        "it does not use more than one thread")
    return info


def worker(args):
    import numpy as np
    threads = args.worker
    print(RESULT + json.dumps({"kind": "blas", "threads": threads,
                               "info": blas_info()}), flush=True)
    spec_dir = os.path.join(args.work, "specs")
    os.makedirs(spec_dir, exist_ok=True)
    mask_cache = {}
    for d in args.dims:
        for n in args.sizes:
            inputs = input_dir(args.work, args.seed, d, n)
            q, k, v = load_inputs(inputs)
            for variant in args.variants:
                spec = write_spec(variant, d, spec_dir)
                flops = nominal_flops(variant, d, n)
                row = {"kind": "row", "variant": variant, "d": d, "n": n,
                       "threads": threads, "flops": flops,
                       "order": ("-" if args.skip_attnc else args.force_order[:2]
                                 if args.force_order and VARIANTS[variant][1] == "linear"
                                 else attnc_order(args.attnc, spec, n))}
                log("  %s D=%d N=%d threads=%d ..." % (variant, d, n, threads))
                # attnc
                save = os.path.join(args.work, "out", "%s_d%d_n%d_t%d" % (variant, d, n, threads))
                bench, error = (None, None) if args.skip_attnc else \
                    run_attnc(args, variant, spec, inputs, save, n, threads)
                row["attnc_s"] = bench["median_s"] if bench else None
                row["attnc_flops_own"] = bench["flops"] if bench else None
                row["attnc_error"] = error
                # numpy: one untimed run (as attnc makes one before timing)
                if not args.skip_numpy:
                    reference = run_numpy(variant, q, k, v, mask_cache)
                    times = []
                    for _ in range(args.repeat):
                        start = time.perf_counter()
                        run_numpy(variant, q, k, v, mask_cache)
                        times.append(time.perf_counter() - start)
                    times.sort()
                    row["numpy_s"] = times[len(times) // 2]
                    if bench:
                        out = np.load(os.path.join(save, "out.npy"))
                        peak = float(np.max(np.abs(reference)))
                        err = float(np.max(np.abs(out.astype(np.float64) - reference)))
                        row["rel_err"] = err / peak if peak > 0 else err
                        row["agree"] = bool(np.isfinite(out).all()) and row["rel_err"] < args.tolerance
                    del reference
                shutil.rmtree(save, ignore_errors=True)
                print(RESULT + json.dumps(row), flush=True)
            del q, k, v
    return 0


# ----------------------------------------------------------------------------
# The driver: one worker per thread count, then the table
# ----------------------------------------------------------------------------

def fmt_ms(seconds):
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    return "%.3f" % ms if ms < 10 else "%.1f" % ms if ms < 1000 else "%.0f" % ms


def fmt_gflops(flops, seconds):
    return "-" if not seconds else "%.2f" % (flops / seconds / 1e9)


def crossover(rows, linear, softmax, key):
    """Smallest measured N from which `linear` is faster than `softmax` for good."""
    times = {}
    for r in rows:
        if r["variant"] in (linear, softmax) and r.get(key):
            times.setdefault(r["n"], {})[r["variant"]] = r[key]
    sizes = sorted(n for n, t in times.items() if len(t) == 2)
    if not sizes:
        return "n/a"
    faster = [times[n][linear] < times[n][softmax] for n in sizes]
    if not faster[-1]:
        return "> %d (not reached)" % sizes[-1]
    first = len(faster) - 1
    while first > 0 and faster[first - 1]:
        first -= 1
    if first == 0:
        return "<= %d (faster at every measured N)" % sizes[0]
    return "%d (slower at %d)" % (sizes[first], sizes[first - 1])


def report(args, rows, blas, started, loads):
    lines = []
    say = lines.append
    say("# attnc (compiled, CPU) vs numpy, B=%d H=%d, f32; %s" % (BATCH, HEADS, started))
    say("# attnc: %s; repeat %d (median); inputs seed %d; agree: max|attnc-numpy|/max|numpy| < %g"
        % ("not run" if args.skip_attnc else args.attnc, args.repeat, args.seed, args.tolerance))
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        model = "?"
    say("# cpu: %s, %d cores; load average at start %.2f, at end %.2f"
        % (model, os.cpu_count() or 0, loads[0], loads[1]))
    if max(loads) > 0.5:
        say("# WARNING: other processes were running (load average above 0.5):"
            " the times are noisy, the 2-thread ones most")
    for threads in sorted(blas):
        info = blas[threads]
        what = info.get("openblas_get_config") or ", ".join(info.get("libraries", [])) or "?"
        core = info.get("openblas_get_corename")
        say("# numpy %s, threads=%d: %s%s%s" % (
            info.get("numpy"), threads, what,
            " (kernel %s)" % core if core else "",
            "; " + info["note"] if "note" in info else ""))
        if "threadpoolctl" in info:
            say("#   threadpoolctl: %s" % json.dumps(info["threadpoolctl"]))
    say("")
    header = ("variant", "D", "N", "thr", "order", "attnc ms", "numpy ms", "attnc/numpy",
              "attnc GF/s", "numpy GF/s", "rel err", "ok")
    table = []
    for r in rows:
        ratio = (r["attnc_s"] / r["numpy_s"]) if r.get("attnc_s") and r.get("numpy_s") else None
        table.append((r["variant"], str(r["d"]), str(r["n"]), str(r["threads"]), r["order"],
                      fmt_ms(r.get("attnc_s")) if r.get("attnc_s") or args.skip_attnc else "ERR",
                      fmt_ms(r.get("numpy_s")),
                      "-" if ratio is None else "%.2f" % ratio,
                      fmt_gflops(r["flops"], r.get("attnc_s")),
                      fmt_gflops(r["flops"], r.get("numpy_s")),
                      "-" if r.get("rel_err") is None else "%.1e" % r["rel_err"],
                      "-" if r.get("agree") is None else ("yes" if r["agree"] else "NO")))
    widths = [max(len(header[i]), *(len(t[i]) for t in table)) if table else len(header[i])
              for i in range(len(header))]
    say("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    say("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for t in table:
        say("| " + " | ".join(c.ljust(w) if i < 2 else c.rjust(w)
                              for i, (c, w) in enumerate(zip(t, widths))) + " |")
    errors = [r for r in rows if r.get("attnc_error")]
    if errors:
        say("")
        for r in errors:
            say("# attnc failed for %s D=%d N=%d threads=%d: %s"
                % (r["variant"], r["d"], r["n"], r["threads"], r["attnc_error"]))
    say("")
    say("Crossover: smallest measured N from which elu1 linear is faster than softmax")
    for d in args.dims:
        for threads in args.threads:
            subset = [r for r in rows if r["d"] == d and r["threads"] == threads]
            for linear, softmax in (("elu1", "softmax"), ("elu1_causal", "softmax_causal")):
                if linear in args.variants and softmax in args.variants:
                    say("  D=%-3d threads=%d %-11s vs %-14s attnc: %s; numpy: %s" % (
                        d, threads, linear, softmax,
                        crossover(subset, linear, softmax, "attnc_s"),
                        crossover(subset, linear, softmax, "numpy_s")))
    return "\n".join(lines)


def driver(args):
    if not args.skip_attnc and not os.access(args.attnc, os.X_OK):
        sys.exit("cpu_vs_numpy: %s is not an executable attnc (build it, or pass --attnc)"
                 % args.attnc)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    loads = [os.getloadavg()[0]]
    own_work = args.work is None
    work = args.work or tempfile.mkdtemp(prefix="cpu_vs_numpy.")
    rows, blas = [], {}
    try:
        for threads in args.threads:
            env = dict(os.environ)
            env["OPENBLAS_NUM_THREADS"] = str(threads)
            if not args.keep_blas_env:
                for name in BLAS_ENV_DROPPED:
                    env.pop(name, None)
            if args.openblas_coretype:
                env["OPENBLAS_CORETYPE"] = args.openblas_coretype
            if args.blas_dir:
                env[ORIG_LD_PATH] = os.environ.get("LD_LIBRARY_PATH", "")
                env["LD_LIBRARY_PATH"] = os.pathsep.join(
                    [args.blas_dir] + ([os.environ["LD_LIBRARY_PATH"]]
                                       if os.environ.get("LD_LIBRARY_PATH") else []))
            command = [sys.executable, os.path.abspath(__file__), "--worker", str(threads),
                       "--work", work] + args.passthrough
            log("cpu_vs_numpy: threads=%d" % threads)
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
            for line in proc.stdout:
                if not line.startswith(RESULT):
                    sys.stdout.write(line)
                    continue
                record = json.loads(line[len(RESULT):])
                if record["kind"] == "blas":
                    blas[threads] = record["info"]
                else:
                    rows.append(record)
            if proc.wait() != 0:
                log("cpu_vs_numpy: the worker for %d threads exited %d" % (threads, proc.returncode))
    finally:
        if own_work and not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    loads.append(os.getloadavg()[0])
    order = {v: i for i, v in enumerate(VARIANTS)}
    rows.sort(key=lambda r: (order[r["variant"]], r["d"], r["threads"], r["n"]))
    text = report(args, rows, blas, started, loads)
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started, "blas": blas, "rows": rows}, f, indent=1)
    bad = [r for r in rows if r.get("agree") is False or r.get("attnc_error")]
    return 1 if bad else 0


def int_list(text):
    return [int(x) for x in text.split(",") if x]


def main():
    parser = argparse.ArgumentParser(
        description="Time attnc's compiled CPU code against numpy (see bench/README.md).")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma list of %s (default: all)" % ", ".join(VARIANTS))
    parser.add_argument("--dims", type=int_list, default=[64, 128],
                        help="head dims D, comma list (default 64,128)")
    parser.add_argument("--min-n", type=int, default=256,
                        help="smallest N, a power of two (default 256; lower it to find a "
                             "crossover below 256)")
    parser.add_argument("--max-n", type=int, default=None,
                        help="largest N (default 16384; 2048 with --quick)")
    parser.add_argument("--threads", type=int_list, default=[1, 2],
                        help="thread counts, comma list (default 1,2)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed runs per point, median reported (default 5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="N up to 2048 and 1 repeat: a couple of minutes")
    parser.add_argument("--seed", type=int, default=1234, help="input seed (default 1234)")
    parser.add_argument("--attnc", default=os.path.join(REPO, "build", "bin", "attnc"),
                        help="the attnc binary (default build/bin/attnc)")
    parser.add_argument("--force-order", choices=("qk_first", "kv_first"),
                        help="pass --force-order to attnc for the linear variants")
    parser.add_argument("--attnc-timeout", type=float, default=0,
                        help="give up on one attnc run after this many seconds (0: never)")
    parser.add_argument("--tolerance", type=float, default=1e-3,
                        help="agreement bound on max abs error / max|out| (default 1e-3)")
    parser.add_argument("--skip-numpy", action="store_true", help="time attnc only")
    parser.add_argument("--skip-attnc", action="store_true", help="time numpy only")
    parser.add_argument("--keep-blas-env", action="store_true",
                        help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for numpy")
    parser.add_argument("--openblas-coretype",
                        help="set OPENBLAS_CORETYPE for numpy (e.g. SkylakeX, Cooperlake)")
    parser.add_argument("--blas-dir",
                        help="put this folder first on numpy's LD_LIBRARY_PATH, e.g. an "
                             "OpenBLAS libblas.so.3 folder (see bench/README.md)")
    parser.add_argument("--output", help="also write the table to this file")
    parser.add_argument("--json", help="also write every measurement as JSON to this file")
    parser.add_argument("--work", help="folder for inputs and outputs (default: a temp dir)")
    parser.add_argument("--keep-work", action="store_true", help="keep the temp dir")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    args.variants = [v for v in args.variants.split(",") if v]
    for v in args.variants:
        if v not in VARIANTS:
            parser.error("unknown variant %r (known: %s)" % (v, ", ".join(VARIANTS)))
    if args.max_n is None:
        args.max_n = 2048 if args.quick else MAX_N
    if args.repeat is None:
        args.repeat = 1 if args.quick else 5
    if args.skip_numpy and args.skip_attnc:
        parser.error("--skip-numpy and --skip-attnc leave nothing to time")
    if args.repeat < 1:
        parser.error("--repeat must be positive")
    if args.min_n < 1 or args.min_n & (args.min_n - 1):
        parser.error("--min-n must be a power of two")
    args.sizes = []
    n = args.min_n
    while n <= args.max_n:
        args.sizes.append(n)
        n *= 2
    if not args.sizes:
        parser.error("--max-n is below --min-n")
    if any(t < 1 for t in args.threads):
        parser.error("--threads must be positive")
    args.attnc = os.path.abspath(args.attnc)

    if args.worker is not None:
        return worker(args)
    # What the workers need to rebuild the same settings.
    args.passthrough = ["--variants", ",".join(args.variants),
                        "--dims", ",".join(map(str, args.dims)),
                        "--min-n", str(args.min_n), "--max-n", str(args.max_n),
                        "--repeat", str(args.repeat), "--seed", str(args.seed),
                        "--attnc", args.attnc, "--attnc-timeout", str(args.attnc_timeout),
                        "--tolerance", str(args.tolerance)]
    if args.force_order:
        args.passthrough += ["--force-order", args.force_order]
    if args.skip_numpy:
        args.passthrough.append("--skip-numpy")
    if args.skip_attnc:
        args.passthrough.append("--skip-attnc")
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
