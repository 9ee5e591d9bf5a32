"""f16 and bf16 queries, keys, values and outputs: the package's dtypes
(float16; bfloat16 as uint16 bit patterns, or ml_dtypes.bfloat16), against
an independent float64 numpy computation from the widened inputs.

usage: element_types.py WORK_DIR          as if ml_dtypes were not installed
       element_types.py WORK_DIR --ml-dtypes    with ml_dtypes.bfloat16 arrays
"""

import os
import sys

import numpy as np

with_ml_dtypes = "--ml-dtypes" in sys.argv[2:]
if with_ml_dtypes:
    import ml_dtypes
else:
    # The package imports ml_dtypes lazily; None makes that import fail, so
    # its bf16 arrays are uint16 bit patterns whatever is installed.
    sys.modules["ml_dtypes"] = None

import attn
from attn._core import _as_array

work = sys.argv[1]
cache = os.path.join(work, "cache")


def case(label, fn):
    try:
        fn()
    except Exception as e:  # the test checks the class by name
        print("%s: %s: %s" % (label, type(e).__name__, str(e).splitlines()[0]))
        return
    print("%s: no error" % label)


def spec(name, qkv, output=None, term="score = softmax", extra=""):
    """Spec text: q, k, v [1, 2, N, 64] of type QKV, one term."""
    return """attention %s {
  dim N
  input q: %s[1, 2, N, 64]
  input k: %s[1, 2, N, 64]
  input v: %s[1, 2, N, 64]
%s%s  term { %s }
}
""" % (name, qkv, qkv, qkv, extra, "  output %s\n" % output if output else "", term)


# ---- independent numerics (float64; nothing from the package)


def round_bf16(x):
    """float32 -> bf16 values (as float64), to nearest even: 8 significant
    bits with numpy's rint (ties to even). The inputs here are normal."""
    m, e = np.frexp(x.astype(np.float64))
    return np.ldexp(np.rint(m * 256.0), e - 8)


def bf16_bits(values):
    """bf16 values (float64, exactly representable) -> uint16 patterns."""
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def widen(arr, etype):
    """The values an array of ETYPE holds, as float64."""
    if etype == "bf16":
        bits = arr.view(np.uint16)
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if etype == "f16":
        return arr.view(np.uint16).view(np.float16).astype(np.float64)
    return arr.astype(np.float64)


def softmax_attention(q, k, v, causal=False):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def linear_elu1_attention(q, k, v):
    phi = lambda x: np.where(x > 0, x + 1.0, np.exp(x))
    a = phi(q) @ np.swapaxes(phi(k), -1, -2)
    return (a @ v) / (a.sum(-1, keepdims=True) + 1e-6)


# max|out - ref| / max|ref| allowed, by output type: f32 loses only the
# kernel's float32 arithmetic; f16 / bf16 add one rounding (2^-11, 2^-8).
TOLERANCE = {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2}

rng = np.random.default_rng(0)


def narrow_inputs(etype, n):
    """q, k, v of ETYPE as the package takes them, and their float64 values."""
    arrays, values = [], []
    for _ in range(3):
        x = rng.standard_normal((1, 2, n, 64)).astype(np.float32)
        if etype == "bf16":
            value = round_bf16(x)
            bits = bf16_bits(value)
            arrays.append(bits.view(ml_dtypes.bfloat16) if with_ml_dtypes else bits)
        else:
            arrays.append(x.astype(np.float16))
            value = arrays[-1].astype(np.float64)
        values.append(value)
    return arrays, values


def run_against_numpy(kernel, etype, reference):
    for n in (1, 7, 100):
        arrays, values = narrow_inputs(etype, n)
        out = kernel(*arrays)
        ref = reference(*values)
        err = np.abs(widen(out, kernel.output_type) - ref).max() / np.abs(ref).max()
        ok = err <= TOLERANCE[kernel.output_type]
        print(
            "%s N=%d: out %s %s, numpy float64 within %g: %s%s"
            % (
                kernel.name,
                n,
                out.dtype,
                list(out.shape),
                TOLERANCE[kernel.output_type],
                ok,
                "" if ok else " (error %g)" % err,
            )
        )
        print(
            "%s N=%d: check (same inputs) %s, check (random_inputs) %s"
            % (
                kernel.name,
                n,
                attn.check(kernel, *arrays)["ok"],
                attn.check(kernel, sizes={"N": n})["ok"],
            )
        )


def ptr(a):
    return a.__array_interface__["data"][0]


if with_ml_dtypes:
    # ml_dtypes.bfloat16 arrays in and out; the same numbers as uint16 bits.
    sbf = attn.compile(spec("sbf", "bf16", "bf16"), cache_dir=cache)
    inputs = attn.random_inputs(sbf, {"N": 7})
    print("random_inputs: %s" % sorted({str(a.dtype) for a in inputs.values()}))
    run_against_numpy(sbf, "bf16", softmax_attention)
    out = sbf(**inputs)
    # (The output is ml_dtypes.bfloat16 either way.)
    bits = sbf(*(inputs[n].view(np.uint16) for n in sbf.inputs)).view(np.uint16)
    print("ml_dtypes and uint16 inputs agree: %s" % np.array_equal(out.view(np.uint16), bits))
    keep = sbf._bind((), inputs, None)[0]
    print("zero-copy: %s" % all(ptr(a) == ptr(inputs[n]) for n, a in zip(sbf.inputs, keep)))
    buffer = np.zeros(out.shape, ml_dtypes.bfloat16)
    print("out=: %s" % (sbf(**inputs, out=buffer) is buffer and np.array_equal(buffer.view(np.uint16), bits)))
    print("compare without element_type: %s" % attn.compare(out, sbf.reference(**inputs), sbf.tolerance)["ok"])
    print("against float32: %s" % attn.compare(out, out.astype(np.float32), 0.0)["ok"])
    case("float32 input", lambda: sbf(inputs["q"].astype(np.float32), inputs["k"], inputs["v"]))
    sys.exit(0)

# ---- the kernels' types

sbf = attn.compile(spec("sbf", "bf16"), cache_dir=cache)
sbf_out = attn.compile(spec("sbf_out", "bf16", "bf16"), cache_dir=cache)
sf16_out = attn.compile(spec("sf16_out", "f16", "f16"), cache_dir=cache)
causal = attn.compile(spec("causal_bf16", "bf16", term="score = softmax; mask = causal"), cache_dir=cache)
linear = attn.compile(spec("linear_f16", "f16", term="score = kernel elu1"), cache_dir=cache)
# An f32 input beside bf16 ones: the sinks [H].
sinks = attn.compile(
    spec("sinks_bf16", "bf16", "bf16", term="score = softmax; sink = s", extra="  input s: [2]\n"),
    cache_dir=cache,
)
for kernel in (sbf, sbf_out, sf16_out, causal, linear, sinks):
    print("%s: %s -> %s" % (kernel.name, kernel.input_types, kernel.output_type))
print("repr: %r" % sinks)
print("f32 kernel repr unchanged: %r" % attn.compile(spec("plain", "f32"), cache_dir=cache))

# ---- against numpy, N = 1, 7, 100

run_against_numpy(sbf, "bf16", softmax_attention)
run_against_numpy(sbf_out, "bf16", softmax_attention)
run_against_numpy(sf16_out, "f16", softmax_attention)
run_against_numpy(causal, "bf16", lambda q, k, v: softmax_attention(q, k, v, causal=True))
run_against_numpy(linear, "f16", linear_elu1_attention)

# ---- random_inputs: the kernel's types, rounded to nearest even

drawn = attn.random_inputs(sinks, {"N": 5})
print("random_inputs: %s" % {n: str(a.dtype) for n, a in drawn.items()})
q32 = np.random.default_rng(0).standard_normal((1, 2, 5, 64)).astype(np.float32)
print("random_inputs bf16 rounding: %s" % np.array_equal(drawn["q"], bf16_bits(round_bf16(q32))))
drawn16 = attn.random_inputs(sf16_out, {"N": 5})
print("random_inputs f16 rounding: %s" % np.array_equal(drawn16["q"], q32.astype(np.float16)))
print("check (random_inputs, mixed types): %s" % attn.check(sinks, sizes={"N": 50})["ok"])

# ---- f16 as uint16 bits; zero copy

(q, k, v), _ = narrow_inputs("f16", 9)
print("f16 uint16 bits: same output %s" % np.array_equal(sf16_out(q, k, v), sf16_out(q.view(np.uint16), k, v)))
keep = sf16_out._bind((q, k.view(np.uint16), v), {}, None)[0]
print("zero-copy: %s" % all(ptr(a) == ptr(b) for a, b in zip(keep, (q, k, v))))
(bq, bk, bv), _ = narrow_inputs("bf16", 9)
keep = sbf._bind((bq, bk, bv), {}, None)[0]
print("zero-copy bf16: %s" % all(ptr(a) == ptr(b) for a, b in zip(keep, (bq, bk, bv))))

# ---- out=

out = sbf_out(bq, bk, bv)
buffer = np.zeros(out.shape, np.uint16)
print("out= bf16: returned %s, equal %s" % (sbf_out(bq, bk, bv, out=buffer) is buffer, np.array_equal(buffer, out)))
buffer = np.zeros(out.shape, np.uint16)
print("reference out= bf16: %s" % (sbf_out.reference(bq, bk, bv, out=buffer) is buffer and np.array_equal(buffer, sbf_out.reference(bq, bk, bv))))
out16 = sf16_out(q, k, v)
buffer = np.zeros(out16.shape, np.float16)
print("out= f16: returned %s, equal %s" % (sf16_out(q, k, v, out=buffer) is buffer, np.array_equal(buffer, out16)))
bits_buffer = np.zeros(out16.shape, np.uint16)
sf16_out(q, k, v, out=bits_buffer)
print("out= f16 as uint16: %s" % np.array_equal(bits_buffer, out16.view(np.uint16)))
buffer = np.zeros(out.shape, np.float32)
print("out= f32 (bf16 inputs): %s" % (sbf(bq, bk, bv, out=buffer) is buffer))

# ---- compare / check on narrow arrays

ref = sbf_out.reference(bq, bk, bv)
print("compare bf16 bits: %s" % attn.compare(out, ref, sbf_out.tolerance, element_type="bf16")["ok"])
print("compare f16: %s" % attn.compare(out16, sf16_out.reference(q, k, v), sf16_out.tolerance)["ok"])
print("compare f16 against float32: %s" % attn.compare(out16, out16.astype(np.float32), 0.0)["ok"])
# A negative control: a bf16 output compared with one scaled by 2.
print("compare doubled: %s" % attn.compare(out, bf16_bits(2 * widen(out, "bf16")), sbf_out.tolerance, element_type="bf16")["ok"])

# ---- wrong dtypes

case("bf16 given float32", lambda: sbf(bq, widen(bk, "bf16").astype(np.float32), bv))
case("bf16 given float16", lambda: sbf(bq.view(np.float16), bk, bv))
case("bf16 given int16", lambda: sbf(bq, bk, bv.view(np.int16)))
case("bf16 given byte-swapped uint16", lambda: sbf(bq.astype(">u2"), bk, bv))
case("f16 given float64", lambda: sf16_out(q.astype(np.float64), k, v))
case("f16 given float32", lambda: sf16_out(q, k, v.astype(np.float32)))
case("f32 input given bf16 bits", lambda: sinks(bq, bk, bv, np.zeros(2, np.uint16)))
case("out float32 for bf16", lambda: sbf_out(bq, bk, bv, out=np.zeros(out.shape, np.float32)))
case("out float32 for f16", lambda: sf16_out(q, k, v, out=np.zeros(out16.shape, np.float32)))
case("out uint16 for f32", lambda: sbf(bq, bk, bv, out=np.zeros(out.shape, np.uint16)))
case("compare uint16", lambda: attn.compare(out, ref, 1e-2))
case("compare float64", lambda: attn.compare(out16.astype(np.float64), out16, 1e-2))
case("compare element_type", lambda: attn.compare(out, ref, 1e-2, element_type="f8"))
