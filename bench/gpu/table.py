#!/usr/bin/env python3
"""Tables for the GPU device check (bench/gpu/device_check.sh).

Merges the JSON lines of `attn-gpu-runner check` / `bench` and of
bench/gpu/peers.py into a correctness table and two timing tables. Only the
standard library: it runs wherever python3 does.

Exit status 1 when a check failed or errored, when a benchmark run of attn
failed, or when attn's output differs from its PyTorch peer's by more than
--agreement (max|attn - peer| / max|peer|); else 0.
"""

import argparse
import json
import re
import sys


def read_lines(path):
    records = []
    if not path:
        return records
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        records.append(json.loads(line))
                    except ValueError:
                        pass
    except OSError:
        pass
    return records


def sizes_text(sizes):
    return " ".join("%s=%s" % item for item in sizes.items())


def num(value, spec="%.2e"):
    if value is None:
        return "-"
    return spec % value


def nominal_flops(variant, b, h, n, d):
    """The FLOPs both sides are credited with, whatever order they run:
    softmax 4·B·H·N²·D (half when causal), elu1 linear 4·B·H·N·D² + 3·B·H·N·D
    (the two state products and the normaliser), causal or not; as in
    bench/cpu_vs_numpy.py."""
    if variant.startswith("softmax"):
        flops = 4.0 * b * h * n * n * d
        return flops / 2 if variant.endswith("_causal") else flops
    return 4.0 * b * h * n * d * d + 3.0 * b * h * n * d


def tflops(flops, ms):
    if ms is None or ms <= 0:
        return None
    return flops / (ms * 1e-3) / 1e12


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def sizes_span(runs):
    """"N=1,7,100 m=256": each dim with the values it took."""
    values = {}
    for r in runs:
        for name, value in r.get("sizes", {}).items():
            seen = values.setdefault(name, [])
            if value not in seen:
                seen.append(value)
    return " ".join("%s=%s" % (name, ",".join(map(str, seen)))
                    for name, seen in values.items())


def print_table(header, rows, left=(0,)):
    """Columns in `left` are left-aligned, the others right-aligned."""
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    def line(row):
        return "  ".join(str(cell).ljust(width) if i in left else str(cell).rjust(width)
                         for i, (cell, width) in enumerate(zip(row, widths))).rstrip()
    print(line(header))
    print("  ".join("-" * width for width in widths))
    for row in rows:
        print(line(row))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checks", help="JSON lines of attn-gpu-runner check (and bench --check)")
    parser.add_argument("--bench", help="JSON lines of attn-gpu-runner bench")
    parser.add_argument("--peers", help="JSON lines of bench/gpu/peers.py")
    parser.add_argument("--repeat", type=int, default=10,
                        help="the --repeat the runs used (for the caption)")
    parser.add_argument("--agreement", type=float, default=1e-3,
                        help="largest max|attn - peer| / max|peer| accepted")
    args = parser.parse_args()
    failed = False

    checks = read_lines(args.checks)
    bench = read_lines(args.bench)
    peers = read_lines(args.peers)

    # Correctness: every run that was compared with the reference evaluator,
    # one row per spec with its worst run (every run is in the JSON lines).
    compared = [r for r in checks + bench if "pass" in r]
    if compared:
        print("== attn on the GPU against the reference evaluator (double): "
              "max|out - ref| / max|ref| within attnc run --check's tolerance")
        by_spec = {}
        for r in compared:
            by_spec.setdefault(r.get("spec", "?"), []).append(r)
        rows = []
        for spec, runs in by_spec.items():
            passed = sum(1 for r in runs if r.get("pass"))
            measured = [r for r in runs if r.get("max_rel_err") is not None]
            worst = max(measured, key=lambda r: r["max_rel_err"]) if measured else {}
            errors = [r["error"] for r in runs if r.get("error")]
            if errors:
                result = "ERROR: " + errors[0]
            elif passed == len(runs):
                result = "PASS"
            else:
                result = "FAIL"
            rows.append([spec, "%d/%d" % (passed, len(runs)), sizes_span(runs),
                         sizes_text(worst.get("sizes", {})) if worst else "-",
                         num(worst.get("max_abs_err")), num(worst.get("max_rel_err")),
                         num(runs[0].get("tolerance"), "%.0e"), result])
        print_table(["spec", "passed", "sizes", "worst at", "max abs err",
                     "max rel err", "tol", "result"], rows, left=(0, 2, 3, 7))
        passed = sum(1 for r in compared if r.get("pass"))
        print("%d specs, %d runs: %d passed, %d failed (every run: check.jsonl, "
              "bench.jsonl)" % (len(by_spec), len(compared), passed,
                                len(compared) - passed))
        print()
        failed |= passed != len(compared)

    # Timing: attn's bench runs by (variant, D, N).
    attn = {}
    for r in bench:
        match = re.match(r"bench_(\w+)_d(\d+)$", r.get("spec", ""))
        if not match:
            continue
        variant, d = match.group(1), int(match.group(2))
        n = r.get("sizes", {}).get("N")
        attn[(variant, d, n)] = r
        if r.get("error"):
            failed = True
    peer = {}
    for r in peers:
        if "variant" in r:
            peer[(r["variant"], r["D"], r["N"], r["peer"])] = r
    if not attn and not peer:
        return 1 if failed else 0

    keys = sorted({k[1:] for k in attn} | {(k[1], k[2]) for k in peer})
    shape = ""
    heads = {r.get("H") for r in peers if "H" in r}
    batch = {r.get("B") for r in peers if "B" in r}
    for r in attn.values():
        if len(r.get("shape", [])) == 4:
            batch.add(r["shape"][0])
            heads.add(r["shape"][1])
    if len(heads) == 1 and len(batch) == 1:
        shape = "B=%s, H=%s, " % (batch.pop(), heads.pop())
    print("== Timing: %sf32 inputs (softmax_bf16 / _f16: bf16 / f16 in and "
          "out on the tensor cores; softmax_tf32: f32 in, tensor cores in "
          "tf32), median of up to %d calls after one untimed "
          "call, each timed by the wall clock around the call and a device "
          "synchronize" % (shape, args.repeat))
    print("   TFLOP/s from nominal FLOPs, the same for both sides: softmax "
          "4BHN^2D (half when causal), elu1 linear 4BHND^2 + 3BHND")
    print("   attn/peer = attn's time / the peer's time (below 1: attn is "
          "faster); err = max|attn - peer| / max|peer|")

    def batch_heads(variant, d, n):
        r = attn.get((variant, d, n))
        if r and len(r.get("shape", [])) == 4:
            return r["shape"][0], r["shape"][1]
        for who in ("sdpa", "flex", "eager"):
            r = peer.get((variant, d, n, who))
            if r and "B" in r:
                return r["B"], r["H"]
        return 1, 16

    def cell(variant, d, n, who):
        r = peer.get((variant, d, n, who))
        if r is None:
            return None, "-"
        if r.get("error"):
            return None, "n/a"
        return r.get("ms"), None

    def attn_cell(variant, d, n):
        r = attn.get((variant, d, n))
        if r is None:
            return None, "-"
        if r.get("error"):
            return None, "FAILED"
        return r.get("ms"), None

    def agreement(variant, d, n, who):
        nonlocal failed
        r = peer.get((variant, d, n, who))
        if r is None or r.get("attn_rel_err") is None:
            return "-"
        err = r["attn_rel_err"]
        bad = not (err <= args.agreement)
        failed |= bad
        return ("%.1e" % err) + (" DIFFERS" if bad else "")

    def fmt_ms(ms, text):
        return text if text else "%.3f" % ms

    def fmt_tf(flops, ms):
        value = tflops(flops, ms)
        return "-" if value is None else "%.2f" % value

    def fmt_ratio(a, b):
        value = ratio(a, b)
        return "-" if value is None else "%.2f" % value

    print()
    print("-- softmax: peers SDPA = torch.nn.functional.scaled_dot_product_attention "
          "(is_causal), Flex = flex_attention under torch.compile (causal block mask);")
    print("   softmax_bf16 / _f16: SDPA in bf16 / f16 (FlashAttention), attn on "
          "mma.sync m16n8k16; softmax_tf32: SDPA in fp32, attn on mma.sync "
          "m16n8k8 tf32 (--gpu-precision=tf32)")
    rows = []
    for variant in ("softmax", "softmax_causal", "softmax_bf16", "softmax_f16",
                    "softmax_tf32"):
        for d, n in keys:
            flops = nominal_flops(variant, *batch_heads(variant, d, n), n, d)
            ams, atext = attn_cell(variant, d, n)
            sms, stext = cell(variant, d, n, "sdpa")
            fms, ftext = cell(variant, d, n, "flex")
            if atext == "-" and stext == "-" and ftext == "-":
                continue
            rows.append([variant, d, n,
                         fmt_ms(ams, atext), fmt_tf(flops, ams),
                         fmt_ms(sms, stext), fmt_tf(flops, sms), fmt_ratio(ams, sms),
                         fmt_ms(fms, ftext), fmt_tf(flops, fms), fmt_ratio(ams, fms),
                         agreement(variant, d, n, "sdpa")])
    print_table(["variant", "D", "N", "attn ms", "TFLOP/s", "SDPA ms", "TFLOP/s",
                 "attn/SDPA", "Flex ms", "TFLOP/s", "attn/Flex", "err vs SDPA"], rows)

    print()
    print("-- elu1 linear: SDPA and FlexAttention cannot compute it; peer = PyTorch "
          "eager (kv-first phi(Q)(phi(K)^T V), normalised; causal: chunks of 64 with")
    print("   cumulative states). SDPA softmax ms: softmax by SDPA at the same shape "
          "(causal for causal), for context only")
    rows = []
    for variant in ("elu1", "elu1_causal"):
        softmax = "softmax_causal" if variant.endswith("_causal") else "softmax"
        for d, n in keys:
            flops = nominal_flops(variant, *batch_heads(variant, d, n), n, d)
            ams, atext = attn_cell(variant, d, n)
            ems, etext = cell(variant, d, n, "eager")
            sms, stext = cell(softmax, d, n, "sdpa")
            if atext == "-" and etext == "-":
                continue
            rows.append([variant, d, n,
                         fmt_ms(ams, atext), fmt_tf(flops, ams),
                         fmt_ms(ems, etext), fmt_tf(flops, ems), fmt_ratio(ams, ems),
                         fmt_ms(sms, stext), fmt_ratio(ams, sms),
                         agreement(variant, d, n, "eager")])
    print_table(["variant", "D", "N", "attn ms", "TFLOP/s", "eager ms", "TFLOP/s",
                 "attn/eager", "SDPA softmax ms", "attn/SDPA softmax", "err vs eager"], rows)

    errors = [r for r in peers if r.get("error")]
    if errors:
        print()
        print("peer notes:")
        for r in errors:
            print("  %s D=%s N=%s %s: %s" % (r.get("variant", "-"), r.get("D"), r.get("N"),
                                            r.get("peer"), r["error"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
