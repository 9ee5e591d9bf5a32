"""Every documented error of the attn package, one `label: Type: message`
line each (`label: no error` when nothing was raised, which the test
rejects).

usage: errors.py EXAMPLES_DIR WORK_DIR
"""

import os
import sys

import numpy as np

import attn

examples_dir, work = sys.argv[1], sys.argv[2]
cache = os.path.join(work, "cache")
os.makedirs(work, exist_ok=True)


def case(label, fn):
    try:
        fn()
    except Exception as e:  # the test checks the class by name
        message = str(e).splitlines()[0] if str(e) else ""
        print("%s: %s: %s" % (label, type(e).__name__, message))
        return e
    print("%s: no error" % label)
    return None


rng = np.random.default_rng(0)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


softmax = attn.compile(os.path.join(examples_dir, "softmax.attn"), cache_dir=cache)
q, k, v = f32(1, 8, 5, 64), f32(1, 8, 5, 64), f32(1, 8, 5, 64)
print("sanity: %s" % attn.check(softmax, q, k, v)["ok"])

# Arrays.
case("list", lambda: softmax(q.tolist(), k, v))
case("scalar", lambda: softmax(q, 1.0, v))
case("float64", lambda: softmax(q.astype(np.float64), k, v))
case("float16", lambda: softmax(q, k.astype(np.float16), v))
case("big-endian", lambda: softmax(q.astype(">f4"), k, v))
case("interface-float64", lambda: softmax(type("I", (), {"__array_interface__": q.astype(np.float64).__array_interface__})(), k, v))
case("fortran", lambda: softmax(q, np.asfortranarray(k), v))
case("strided", lambda: softmax(q, k, f32(1, 8, 10, 64)[:, :, ::2]))
case("rank", lambda: softmax(q, k, v[0]))
case("fixed-dim", lambda: softmax(f32(1, 8, 5, 32), k, v))
case("fixed-dim-heads", lambda: softmax(q, f32(1, 4, 5, 64), v))
case("dynamic-dim", lambda: softmax(q, f32(1, 8, 6, 64), v))
case("dynamic-dim-named", lambda: softmax(v=f32(1, 8, 6, 64), k=k, q=q))
case("zero-size", lambda: softmax(f32(1, 8, 0, 64), f32(1, 8, 0, 64), f32(1, 8, 0, 64)))

# Arguments.
case("missing", lambda: softmax(q, k))
case("missing-two", lambda: softmax(q))
case("unknown-keyword", lambda: softmax(q, k, v, w=v))
case("twice", lambda: softmax(q, k, v, q=q))
case("too-many", lambda: softmax(q, k, v, v))

# out=.
case("out-shape", lambda: softmax(q, k, v, out=np.empty((1, 8, 6, 64), np.float32)))
case("out-dtype", lambda: softmax(q, k, v, out=np.empty((1, 8, 5, 64))))
case("out-noncontiguous", lambda: softmax(q, k, v, out=np.empty((1, 8, 64, 5), np.float32).swapaxes(2, 3)))
readonly = np.empty((1, 8, 5, 64), np.float32)
readonly.flags.writeable = False
case("out-readonly", lambda: softmax(q, k, v, out=readonly))
case("out-overlap", lambda: softmax(q, k, v, out=q))
case("reference-float64", lambda: softmax.reference(q, k, v.astype(np.float64)))

# A non-zero status of attnKernelRun: sizes that the spec ties and only the
# library checks (a causal kernel term needs N = M, here two different
# dynamic dims).
tied = attn.compile(
    "attention tied {\n  dim N\n  dim M\n  input q: [1, 1, N, 8]\n  input k: [1, 1, M, 8]\n"
    "  input v: [1, 1, M, 8]\n  term { score = kernel elu1\n mask = causal }\n}\n",
    cache_dir=cache,
)
a, b = f32(1, 1, 4, 8), f32(1, 1, 6, 8)
print("tied sizes: %s" % ",".join(tied.sizes))
e = case("run-status", lambda: tied(a, b, b))
print("run-status is RuntimeError: %s, status %s" % (isinstance(e, RuntimeError), getattr(e, "status", None)))
e = case("reference-status", lambda: tied.reference(a, b, b))
print("reference-status is RuntimeError: %s" % isinstance(e, RuntimeError))
print("tied equal sizes: %s" % attn.check(tied, a, a.copy(), a.copy())["ok"])

# A call needing more than max_memory: refused before it starts.
small = attn.compile(os.path.join(examples_dir, "softmax.attn"), max_memory="64M", cache_dir=cache)
big = f32(1, 8, 16384, 64)
e = case("max-memory", lambda: small(big, big, big))
print("max-memory is MemoryError: %s, RunError: %s, status %s" % (isinstance(e, MemoryError), isinstance(e, attn.RunError), getattr(e, "status", None)))
case("max-memory-reference", lambda: small.reference(big, big, big))
print("max-memory small call: %s" % attn.check(small, q, k, v)["ok"])
finite = attn.compile(os.path.join(examples_dir, "softmax.attn"), finite_inputs=True, cache_dir=cache)
poisoned = v.copy()
poisoned[0, 1, 2, 3] = np.inf
case("finite-inputs", lambda: finite(q, k, poisoned))
print("finite-inputs clean call: %s" % attn.check(finite, q, k, v)["ok"])
case("max-memory-bad", lambda: attn.compile(os.path.join(examples_dir, "softmax.attn"), max_memory="lots", cache_dir=cache))

# Closed kernels.
closed = attn.compile(os.path.join(examples_dir, "softmax.attn"), cache_dir=cache)
closed.close()
closed.close()
case("closed", lambda: closed(q, k, v))

# Specs.
bad_text = "attention bad {\n  dim N\n  input q: [1, 8, N, 64]\n  input k: [1, 8, N, 64]\n  input v: [1, 8, N, 64]\n  term { score = softmx }\n}\n"
e = case("bad-spec-text", lambda: attn.compile(bad_text, cache_dir=cache))
print("CompileError is a ValueError: %s" % isinstance(e, ValueError))
lines = str(e).splitlines()
print("message lines: %d" % len(lines))
print("source line: %s" % lines[1].strip())
print("caret column: %d" % (lines[2].index("^") + 1))
bad_file = os.path.join(work, "bad.attn")
with open(bad_file, "w") as f:
    f.write(bad_text)
case("bad-spec-file", lambda: attn.compile(bad_file, cache_dir=cache))
case("unused-input", lambda: attn.compile(bad_text.replace("softmx", "softmax").replace("  term", "  input extra: [4]\n  term"), cache_dir=cache))
case("missing-file", lambda: attn.compile(os.path.join(work, "missing.attn"), cache_dir=cache))
case("directory", lambda: attn.compile(work, cache_dir=cache))
case("spec-type", lambda: attn.compile(42))
case("report-bad-spec", lambda: attn.report(bad_text))
case("report-missing-file", lambda: attn.report(os.path.join(work, "missing.attn")))

# Options.
spec = os.path.join(examples_dir, "softmax.attn")
case("target", lambda: attn.compile(spec, target="tpu", cache_dir=cache))
case("chip", lambda: attn.compile(spec, target="nvptx", chip="sm_10", cache_dir=cache))
case("force-order", lambda: attn.compile(spec, force_order="x", cache_dir=cache))
case("threads-negative", lambda: attn.compile(spec, threads=-1, cache_dir=cache))
case("threads-huge", lambda: attn.compile(spec, threads=100000, cache_dir=cache))
case("threads-type", lambda: attn.compile(spec, threads="2", cache_dir=cache))
case("cache-dir-type", lambda: attn.compile(spec, cache_dir=True))
case("size-unknown", lambda: attn.compile(spec, sizes={"Q": 4}, cache_dir=cache))
case("size-zero", lambda: attn.compile(spec, sizes={"N": 0}, cache_dir=cache))
case("size-type", lambda: attn.compile(spec, sizes={"N": "4"}, cache_dir=cache))
case("sizes-type", lambda: attn.compile(spec, sizes=[("N", 4)], cache_dir=cache))
case("report-target", lambda: attn.report(spec, target="tpu"))
case("report-heads", lambda: attn.report(spec, heads=0))

# check() and random_inputs().
case("check-seed-with-arrays", lambda: attn.check(softmax, q, k, v, seed=1))
case("random-unbound", lambda: attn.random_inputs(softmax))
case("random-unknown", lambda: attn.random_inputs(softmax, {"N": 3, "M": 2}))

# Nothing above may have broken the kernel.
print("still works: %s" % attn.check(softmax, q, k, v)["ok"])
