#!/usr/bin/env python3
"""How good are the cost model's choices? Forces every legal strategy of a
sweep of linear-attention terms, times each with `attnc run --bench`, and
compares the strategy the cost model picks (with the built-in numbers and
with a calibration, in the same run) against the fastest one measured.

    python3 bench/cost_fidelity.py --quick          # D = 64, N = 32..4096
    python3 bench/cost_fidelity.py                   # the whole sweep
    python3 bench/cost_fidelity.py --calibration FILE --json out.json

Per point it reports the chosen strategy's time over the best measured one;
overall the geomean of those ratios, the share within 1.10x, and the
predicted against the measured crossover N (where a switch from qk-first to
the best kv-first strategy loses the least time). See bench/README.md.
"""

import argparse
import atexit
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from cpu_vs_torch import cpu_flags, cpu_model  # noqa: E402 (stdlib only)

VARIANTS = {
    # name: (score line, extra inputs, extra term lines, feature width)
    "elu1": ("kernel elu1", "", ""),
    "relu": ("kernel relu", "", ""),
    "favor+": ("kernel favor+", "  input omega: [256, {D}]\n",
               "    omega = omega\n"),
    "cosformer": ("kernel cosformer", "", ""),
}
CHUNKS = [16, 32, 64, 128, 256]


def spec_text(variant, causal, n, d, heads, projected, order, chunk):
    score, inputs, lines = VARIANTS[variant]
    shape = "[1, %d, %d, %d]" % (heads, n, d)
    text = "attention fidelity {\n"
    if projected:
        text += "  dim k = %d\n" % projected
    text += "  input q: %s\n  input k: %s\n  input v: %s\n" % (shape, shape,
                                                              shape)
    text += inputs.format(D=d)
    if projected:
        text += "  input E: [k, %d]\n  input F: [k, %d]\n" % (n, n)
    text += "  term {\n    score = %s\n" % score + lines
    if causal:
        text += "    mask = causal\n"
    if projected:
        text += "    project = E, F\n"
    if order:
        text += "    order = %s\n" % order
    if chunk:
        text += "    chunk = %d\n" % chunk
    return text + "  }\n}\n"


class Runner:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.count = 0
        # (family) -> (N, seconds) of the last timing of each strategy of a
        # group, to size the next N's repeats.
        self.last = {}

    def write(self, text):
        self.count += 1
        path = os.path.join(self.work, "s%d.attn" % self.count)
        with open(path, "w") as f:
            f.write(text)
        return path

    def repeats_for(self, family, n):
        """--repeat calls, or fewer where the previous N's time of the same
        strategy, grown quadratically, says they would take more than
        --max-seconds (qk-first at N = 16384 runs for seconds a call, which
        made the whole sweep take hours)."""
        if family not in self.last:
            return self.args.repeat
        last_n, last_time = self.last[family]
        estimate = last_time * (float(n) / last_n) ** 2
        fits = int(self.args.max_seconds / max(estimate, 1e-9))
        return max(2, min(self.args.repeat, fits))

    def time(self, text, family=None, n=None):
        path = self.write(text)

        def fastest_call(repeat):
            cmd = [self.args.attnc, "run", path, "--bench", "--repeat",
                   str(repeat), "--json"]
            if self.args.threads:
                cmd += ["--threads", str(self.args.threads)]
            env = dict(os.environ, ATTN_CALIBRATION="none")
            out = subprocess.run(cmd, capture_output=True, text=True,
                                 env=env, timeout=self.args.timeout)
            if out.returncode:
                sys.exit("cost_fidelity: %s failed:\n%s" % (" ".join(cmd),
                                                            out.stderr))
            # The fastest call: on a shared machine the others time
            # neighbours.
            return json.loads(out.stdout)["bench"]["min_s"]
        best = fastest_call(self.repeats_for(family, n) if family
                            else self.args.repeat)
        if family:
            self.last[family] = (n, best)
        # Calls of a few microseconds: as many as fill --min-time, as
        # `attnc calibrate` times them (the fastest of 10 calls of a 60 us
        # kernel was up to 1.3x its fastest of 500, more for qk-first than
        # kv-first: enough to move a crossover by an octave).
        if best * self.args.repeat < self.args.min_time:
            repeat = min(1000, int(math.ceil(self.args.min_time / best)))
            best = min(best, fastest_call(repeat))
        return best

    def report(self, text, target):
        path = self.write(text)
        cmd = [self.args.attnc, "report", path, "--json", "--target", target]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            sys.exit("cost_fidelity: %s failed:\n%s" % (" ".join(cmd),
                                                        out.stderr))
        term = json.loads(out.stdout)["terms"][0]
        chosen = term["chosen"]
        key = "qk" if chosen["order"] == "qk_first" else "kv"
        return key, chosen.get("chunk"), term.get("crossover_n")


def strategy_name(key, chunk, causal):
    if key == "qk":
        return "qk"
    return "kv/c%d" % chunk if causal and chunk else "kv"


def fastest_times(runner, specs, group=None, n=None):
    """The fastest time of each spec in \p specs (name: text) over the
    rounds. Rounds interleave the strategies, so that a slow spell of the
    machine does not fall on one of them only. \p group (the point without
    its N) and \p n size the repeats of long calls."""
    times = {}
    for _ in range(runner.args.rounds):
        for name, text in specs.items():
            family = (group, name) if group else None
            t = runner.time(text, family, n)
            times[name] = min(times.get(name, t), t)
    return times


def measure_point(runner, point, targets):
    variant, causal, n, d, heads, projected = point
    specs = {"qk": spec_text(variant, causal, n, d, heads, projected,
                             "qk_first", None)}
    if causal and not projected:
        for c in CHUNKS:
            if c <= n:
                specs["kv/c%d" % c] = spec_text(variant, causal, n, d, heads,
                                                projected, "kv_first", c)
    else:
        specs["kv"] = spec_text(variant, causal, n, d, heads, projected,
                                "kv_first", None)
    times = fastest_times(runner, specs, (variant, causal, d, heads, projected),
                          n)
    chosen = {}
    for label, target in targets.items():
        key, chunk, crossover = runner.report(
            spec_text(variant, causal, n, d, heads, projected, None, None),
            target)
        name = strategy_name(key, chunk, causal and not projected)
        if name not in times:  # a chunk outside the forced set
            times[name] = runner.time(spec_text(variant, causal, n, d, heads,
                                                projected, "kv_first", chunk))
        chosen[label] = (name, crossover)
    return times, chosen


def switch_loss_index(log_ratios):
    """The index j that loses the least, summed over the samples, choosing
    qk-first at samples i < j (a loss where log(kv / qk) < 0) and kv-first
    from j on (a loss where it is > 0): the rule of the model's run-time
    switch (lib/Analysis/CostModel.cpp, switchLength). The first such j."""
    loss = sum(max(0.0, r) for r in log_ratios)
    best, best_loss = 0, loss
    for j in range(1, len(log_ratios)):
        r = log_ratios[j - 1]
        loss += max(0.0, -r) - max(0.0, r)
        if loss < best_loss:
            best, best_loss = j, loss
    return best


def measured_switch(runner, group, last_loss, kv_name, samples):
    """The measured crossover of a group whose last sweep N where qk-first
    wins is \p last_loss (P): both orders timed at \p samples N evenly
    spaced over (P/2, 2P], and the N from which switching to kv-first loses
    the least measured time (switch_loss_index), as the model picks its
    run-time switch from its predictions over the same N range. Around P
    the orders can alternate, since both step at tile boundaries: cosFormer
    causal, D = 64, kv-first wins at N = 65-112, qk-first at 120-128 and
    kv-first again from 129; the first N where kv-first wins above P (what
    a bisection finds) is one of several crossings."""
    variant, causal, d, k = group
    heads = runner.args.heads
    first = last_loss // 2
    step = max(1, (2 * last_loss - first) // samples)
    ns = list(range(2 * last_loss, first, -step))[::-1]
    log_ratios = []
    for n in ns:
        chunk = None
        if kv_name.startswith("kv/c"):
            chunk = min(int(kv_name[len("kv/c"):]), n)
        specs = {
            "qk": spec_text(variant, causal, n, d, heads, k, "qk_first",
                            None),
            "kv": spec_text(variant, causal, n, d, heads, k, "kv_first",
                            chunk),
        }
        times = fastest_times(runner, specs)
        sys.stderr.write("# switch %s%s D = %d N = %d: qk %.1f us, %s %.1f us\n"
                         % (variant, " causal" if causal else "", d, n,
                            times["qk"] * 1e6, kv_name, times["kv"] * 1e6))
        log_ratios.append(math.log(times["kv"] / times["qk"]))
    return ns[switch_loss_index(log_ratios)]


# Orders within this factor of each other at the two largest N of a group
# do not cross there: see main().
PARALLEL_BAND = 1.05


def kv_over_qk(row):
    """The best kv-first strategy's time over qk-first's at a sweep point."""
    kv = min(t for name, t in row["times"].items() if name != "qk")
    return kv / row["times"]["qk"]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) \
        if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attnc", default=os.path.join(ROOT, "build", "bin",
                                                        "attnc"))
    parser.add_argument("--quick", action="store_true",
                        help="D = 64, N = 32..4096, elu1/favor+/cosformer")
    parser.add_argument("--calibration",
                        help="a target file from `attnc calibrate -o`; by "
                        "default the sweep runs `attnc calibrate` first")
    parser.add_argument("--variants", default="elu1,relu,favor+,cosformer")
    parser.add_argument("--dims", default="64,128")
    parser.add_argument("--min-n", type=int, default=32)
    parser.add_argument("--max-n", type=int, default=16384)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--linformer", default="64,256",
                        help="Linformer k values (elu1, no mask); '' for none")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.15,
                        help="seconds of calls per timing, at least "
                        "--repeat calls (at most 1000)")
    parser.add_argument("--max-seconds", type=float, default=3.0,
                        help="at most this long per timing where the "
                        "previous N says a call is long (at least 2 calls)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="times each strategy is run, interleaved")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--samples", type=int, default=24,
                        help="find each measured crossover by timing both "
                        "orders at this many N around it (the octaves "
                        "either side of the last sweep N where qk-first "
                        "wins; 0: interpolate only)")
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--output", help="write the markdown table here")
    parser.add_argument("--plot-dir",
                        help="write, per group, attnc report --plot of the "
                        "calibrated model with the measured times on it")
    args = parser.parse_args()
    if args.quick:
        args.dims, args.max_n = "64", 4096
        args.variants = "elu1,favor+,cosformer"
        args.linformer = "64"
        args.repeat = min(args.repeat, 5)

    model, flags = cpu_model(), cpu_flags()
    isa = ("AVX-512" if "avx512f" in flags else
           "AVX2+FMA" if "avx2" in flags and "fma" in flags else "SSE/AVX")
    table = []

    def emit(line=""):
        """Prints a line of the report and keeps it for --output."""
        print(line, flush=True)
        table.append(line)

    work = tempfile.mkdtemp(prefix="attn-fidelity-")
    # The hundreds of generated specs go at exit; the target files stay, so
    # that the printed calibration can be reused (--calibration FILE).
    atexit.register(lambda: [os.remove(os.path.join(work, name))
                             for name in os.listdir(work) if name.endswith(".attn")])
    runner = Runner(args, work)
    builtin = os.path.join(work, "builtin.target")
    with open(builtin, "w") as f:
        f.write("# the built-in numbers\nbase = cpu\n")
    calibration = args.calibration
    if not calibration:
        calibration = os.path.join(work, "calibrated.target")
        cmd = [args.attnc, "calibrate", "-o", calibration]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        emit("# " + " ".join(cmd))
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            sys.exit("cost_fidelity: attnc calibrate failed:\n" + out.stderr)
        for line in out.stdout.splitlines():
            emit("# " + line)
    targets = {"before": builtin, "after": calibration}

    points = []
    ns = []
    n = args.min_n
    while n <= args.max_n:
        ns.append(n)
        n *= 2
    for d in [int(x) for x in args.dims.split(",")]:
        for variant in args.variants.split(","):
            for causal in (False, True):
                for n in ns:
                    points.append((variant, causal, n, d, args.heads, 0))
        for k in [int(x) for x in args.linformer.split(",") if x]:
            for n in ns:
                if n > k:
                    points.append(("elu1", False, n, d, args.heads, k))

    emit("# cost_fidelity: %s, %s, %s threads, B = 1, H = %d, fastest of "
          "%d rounds of %d calls (or of %g s of calls; at least 2 calls "
          "and at most %g s for long ones)" % (
              model, isa, args.threads or os.cpu_count(), args.heads,
              args.rounds, args.repeat, args.min_time, args.max_seconds))
    emit("| variant | mask | D | N | best (ms) | before | ratio | after | "
          "ratio |")
    emit("|---|---|---|---|---|---|---|---|---|")
    results = []
    for point in points:
        times, chosen = measure_point(runner, point, targets)
        best_name = min(times, key=times.get)
        best = times[best_name]
        row = {"point": point, "times": times, "best": best_name}
        cells = []
        for label in ("before", "after"):
            name, crossover = chosen[label]
            row[label] = {"strategy": name, "ratio": times[name] / best,
                          "crossover_n": crossover}
            cells += [name, "%.2f" % (times[name] / best)]
        results.append(row)
        variant, causal, n, d, heads, k = point
        label = variant + (" (Linformer k=%d)" % k if k else "")
        emit("| %s | %s | %d | %d | %s %.3f | %s |" % (
            label, "causal" if causal else "none", d, n, best_name,
            best * 1e3, " | ".join(cells)))

    # Summary and crossovers.
    lines = []
    for label in ("before", "after"):
        ratios = [r[label]["ratio"] for r in results]
        within = sum(1 for x in ratios if x <= 1.10) / len(ratios)
        lines.append("%s: geomean %.3fx, %.0f%% of %d points within 1.10x, "
                     "worst %.2fx" % (label, geomean(ratios), 100 * within,
                                      len(ratios), max(ratios)))
    crossovers = []
    groups = {}
    for r in results:
        variant, causal, n, d, heads, k = r["point"]
        groups.setdefault((variant, causal, d, k), []).append(r)
    for key, rows in groups.items():
        # Where log(kv / qk) crosses 0, interpolated in log N between the
        # last N where qk-first wins and the next: kv-first must keep
        # winning from there on.
        rows = sorted(rows, key=lambda r: r["point"][2])
        measured = None
        previous = None
        for r in rows:
            gap = math.log(kv_over_qk(r))
            n = r["point"][2]
            if gap < 0 and measured is None:
                if previous is None:
                    measured = "<=%d" % n
                else:
                    pn, pgap = previous
                    at = math.log(pn) + (math.log(n) - math.log(pn)) * \
                        pgap / (pgap - gap)
                    measured = int(round(math.exp(at)))
            elif gap >= 0:
                measured = None
            previous = (n, gap)
        entry = {"group": key, "measured": measured}
        # Two orders whose times stay within PARALLEL_BAND of each other over
        # the group's last two octaves are parallel lines (equal FLOPs per
        # row, as Linformer's with k = D): where a difference of a few
        # percent changes sign is noise, not a crossover, so it is shown
        # but not scored.
        last = [kv_over_qk(r) for r in rows[-2:]]
        if len(last) == 2 and all(abs(math.log(x)) <= math.log(PARALLEL_BAND)
                                  for x in last):
            entry["parallel"] = last
            measured = None
        if isinstance(measured, int) and args.samples > 0:
            # Around the octave the interpolation fell in, by timing.
            entry["interpolated"] = measured
            upper = next(r for r in rows if r["point"][2] >= measured)
            lower = max((r for r in rows if r["point"][2] < upper["point"][2]),
                        key=lambda r: r["point"][2])
            kv_name = min((name for name in upper["times"] if name != "qk"),
                          key=upper["times"].get)
            measured = measured_switch(runner, key, lower["point"][2],
                                       kv_name, args.samples)
            entry["measured"] = measured
        for label in ("before", "after"):
            entry[label] = rows[-1][label]["crossover_n"]
            if "parallel" in entry:
                pass
            elif isinstance(measured, int) and entry[label]:
                entry[label + "_error"] = entry[label] / measured - 1
            elif isinstance(measured, str) and entry[label]:
                # Below the group's sweep (Linformer's starts above k):
                # agreement when the prediction is too.
                first = rows[0]["point"][2]
                entry[label + "_error"] = 0.0 if entry[label] <= first \
                    else entry[label] / first - 1
        crossovers.append(entry)
    emit()
    for line in lines:
        emit(line)
    emit()
    emit("| variant | mask | D | measured crossover | interpolated | "
         "before | after |")
    emit("|---|---|---|---|---|---|---|")

    def predicted(entry, label):
        error = entry.get(label + "_error")
        return "%s" % entry[label] + (" (%+.0f%%)" % (100 * error)
                                      if error is not None else "")
    for entry in crossovers:
        variant, causal, d, k = entry["group"]
        measured = entry["measured"] or "none"
        if "parallel" in entry:
            measured = "parallel (kv/qk %s)" % " / ".join(
                "%.3f" % x for x in entry["parallel"])
        emit("| %s | %s | %d | %s | %s | %s | %s |" % (
            variant + (" (Linformer k=%d)" % k if k else ""),
            "causal" if causal else "none", d, measured,
            entry.get("interpolated", "-"),
            predicted(entry, "before"), predicted(entry, "after")))
    for label in ("before", "after"):
        errors = [abs(e[label + "_error"]) for e in crossovers
                  if label + "_error" in e]
        parallel = sum(1 for e in crossovers if "parallel" in e)
        emit("%s: %d of %d measured crossovers within 25%%%s" % (
            label, sum(1 for e in errors if e <= 0.25), len(errors),
            "; %d group(s) parallel, not scored (both orders within %.2fx "
            "over the last two octaves)" % (parallel, PARALLEL_BAND)
            if parallel else ""))
    if args.output:
        with open(args.output, "w") as f:
            f.write("\n".join(table) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": model, "isa": isa, "results": results,
                       "crossovers": crossovers,
                       "calibration": open(calibration).read()}, f, indent=1)
    if args.plot_dir:
        plot_groups(runner, groups, calibration, args.plot_dir)


def plot_strategy(name):
    """The name `attnc report --plot` gives a strategy of this script."""
    if name == "qk":
        return "qk_first"
    if name == "kv":
        return "kv_first"
    return "kv_first c=" + name[len("kv/c"):]


def plot_groups(runner, groups, calibration, folder):
    """Per group, `attnc report --plot` of its spec at its largest N with
    the calibrated numbers, the measured times drawn on the curves."""
    os.makedirs(folder, exist_ok=True)
    for (variant, causal, d, k), rows in groups.items():
        name = "%s-%s-d%d%s" % (variant.replace("+", "plus"),
                                "causal" if causal else "none", d,
                                "-k%d" % k if k else "")
        points = []
        for r in rows:
            for strategy, seconds in r["times"].items():
                points.append({"term": "t0", "n": r["point"][2],
                               "seconds": seconds,
                               "strategy": plot_strategy(strategy)})
        measured = os.path.join(folder, name + ".json")
        with open(measured, "w") as f:
            json.dump({"points": points}, f, indent=1)
        last = rows[-1]["point"]
        spec = runner.write(spec_text(variant, causal, last[2], d, last[4], k,
                                      None, None))
        cmd = [runner.args.attnc, "report", spec, "--target", calibration,
               "--plot", os.path.join(folder, name + ".svg"),
               "--measured", measured]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            sys.exit("cost_fidelity: %s failed:\n%s" % (" ".join(cmd),
                                                        out.stderr))


if __name__ == "__main__":
    main()
