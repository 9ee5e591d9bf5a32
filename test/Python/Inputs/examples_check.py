"""Compiles every examples/*.attn through the attn package (once each, with
the dims the spec leaves dynamic still dynamic) and runs it at several sizes
against the reference evaluator with attn.check. Prints, per example,

    compiled <example> sizes=<dynamic sizes>
    ok <example> N=<n> [M=<m>] rel=<max rel error>

(FAIL instead of ok on a mismatch, and exit status 1), then a negative
control: the comparison must reject a perturbed output.

usage: examples_check.py EXAMPLES_DIR CACHE_DIR [--jobs J]

The examples are split over J worker processes (default 2), which is what
bounds the wall time: compiling FAVOR+ and FLASH mixed chunk dominates. The
output is printed in the examples' sorted order whatever J is.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

import attn

# Sizes for the dims left dynamic: N = 1, 7, 100 everywhere, plus 300 for
# FLASH mixed chunk (its blocks are 256 long, so 300 spans two); cross
# attention's N queries run over M != N keys. Specs without dynamic dims
# (Linformer fixes N = 4096) run once at their declared sizes.
N_VALUES = {"flash_mixed_chunk": (1, 7, 100, 300)}
NM_VALUES = ((1, 7), (7, 100), (100, 1))

# Rough compile cost, to balance the workers (slowest first).
# Seconds measured on a 2-core machine.
WEIGHT = {
    "performer_causal": 40,
    "flash_mixed_chunk": 28,
    "performer": 27,
    "cosformer": 9,
    "linear_relu_causal": 6,
    "linear_elu1_causal": 5,
    "flash_quad": 5,
}


def runs(kernel):
    if kernel.sizes == []:
        return [{}]
    if kernel.sizes == ["N"]:
        return [{"N": n} for n in N_VALUES.get(kernel.name, (1, 7, 100))]
    if kernel.sizes == ["N", "M"]:
        return [{"N": n, "M": m} for n, m in NM_VALUES]
    raise SystemExit("unexpected dynamic sizes %s in %s" % (kernel.sizes, kernel.name))


def describe(kernel, inputs, out):
    """N (and M when there is a key of another length) of one run."""
    text = "N=%d" % out.shape[2]
    if "M" in kernel.sizes:
        text += " M=%d" % inputs["k"].shape[2]
    return text


def check_example(path, cache_dir):
    lines = []
    failed = False
    name = os.path.basename(path)[: -len(".attn")]
    with open(path) as f:
        returns_state = any(line.split() == ["output", "state"] for line in f)
    if returns_state:
        # A second output (the final state) is not callable from Python yet:
        # the package must refuse it with a clear error, not crash.
        try:
            attn.compile(path, cache_dir=cache_dir).close()
            return ["FAIL %s: compiled, but 'output state' is not supported" % name], True
        except attn.CompileError as error:
            refused = "'output state'" in str(error)
            return ["%s %s: output state" % ("refused" if refused else "FAIL", name)], not refused
    with attn.compile(path, cache_dir=cache_dir) as kernel:
        lines.append("compiled %s sizes=%s" % (kernel.name, ",".join(kernel.sizes) or "-"))
        for i, sizes in enumerate(runs(kernel)):
            inputs = attn.random_inputs(kernel, sizes, seed=i)
            result = attn.check(kernel, **inputs)
            out = kernel(**inputs)
            expected = tuple(
                s if isinstance(s, int) else sizes[s] for s in kernel.output_shape
            )
            ok = result["ok"] and out.shape == expected and out.dtype == np.float32
            failed |= not ok
            lines.append(
                "%s %s %s rel=%.1e (abs %.1e, tolerance %.0e)"
                % (
                    "ok" if ok else "FAIL",
                    kernel.name,
                    describe(kernel, inputs, out),
                    result["max_rel_error"],
                    result["max_abs_error"],
                    result["tolerance"],
                )
            )
    return lines, failed


def negative_control(examples_dir, cache_dir):
    """attnCompare through attn.compare must reject a perturbed output."""
    with attn.compile(os.path.join(examples_dir, "softmax.attn"), cache_dir=cache_dir) as kernel:
        inputs = attn.random_inputs(kernel, {"N": 7}, seed=1)
        out = kernel(**inputs)
        ref = kernel.reference(**inputs)
        print("control unperturbed ok=%s" % attn.compare(out, ref, kernel.tolerance)["ok"])
        i = int(np.argmax(np.abs(out)))
        doubled = out.copy()
        doubled.flat[i] *= 2
        r = attn.compare(doubled, ref, kernel.tolerance)
        print("control doubled ok=%s rel=%.2f" % (r["ok"], r["max_rel_error"]))
        nan = out.copy()
        nan.flat[i] = np.nan
        print("control nan ok=%s" % attn.compare(nan, ref, kernel.tolerance)["ok"])
        # The same through attn.check: a kernel whose output is perturbed
        # (the reference evaluator is run on the inputs, not on OUT).
        tiny = out.copy()
        tiny.flat[i] *= 1 + 100 * kernel.tolerance
        r = attn.compare(tiny, ref, kernel.tolerance)
        print("control 100x tolerance ok=%s" % r["ok"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("examples_dir")
    parser.add_argument("cache_dir")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker is not None:  # one shard: print its lines, in order
        failed = False
        for name in args.worker:
            lines, bad = check_example(
                os.path.join(args.examples_dir, name + ".attn"), args.cache_dir
            )
            failed |= bad
            print("\n".join(lines), flush=True)
            print("--end %s" % name, flush=True)
        return 1 if failed else 0

    names = sorted(
        f[: -len(".attn")] for f in os.listdir(args.examples_dir) if f.endswith(".attn")
    )
    jobs = max(1, min(args.jobs, len(names)))
    shards = [[] for _ in range(jobs)]
    load = [0] * jobs
    for name in sorted(names, key=lambda n: -WEIGHT.get(n, 3)):
        j = load.index(min(load))
        shards[j].append(name)
        load[j] += WEIGHT.get(name, 3)
    workers = [
        subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), args.examples_dir, args.cache_dir, "--worker", *shard],
            stdout=subprocess.PIPE,
            universal_newlines=True,
        )
        for shard in shards
    ]
    outputs = {}
    status = 0
    for worker in workers:
        text, _ = worker.communicate()
        status |= worker.returncode
        current = []
        for line in text.splitlines():
            if line.startswith("--end "):
                outputs[line[len("--end "):]] = current
                current = []
            else:
                current.append(line)
        if current:  # a worker that died mid-example
            outputs.setdefault("<crashed>", []).extend(current)
    for name in names + ["<crashed>"]:
        for line in outputs.get(name, ["missing %s" % name] if name != "<crashed>" else []):
            print(line)
    print("examples: %d" % len(names))
    # attn.check on a spec, with a size bound at compile time that overrides
    # the declared one (Linformer's N = 4096) and generated inputs.
    r = attn.check(os.path.join(args.examples_dir, "linformer_k128.attn"), sizes={"N": 100}, seed=3)
    print("override linformer_k128 sizes N=100: ok=%s rel=%.1e" % (r["ok"], r["max_rel_error"]))
    status |= not r["ok"]
    negative_control(args.examples_dir, args.cache_dir)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
