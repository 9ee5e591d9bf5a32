"""Zero-copy array passing: the pointers handed to the C library are those of
the caller's memory (numpy arrays, views at an offset, objects exposing
__array_interface__ or __dlpack__), and out= is written in place.

usage: zero_copy.py EXAMPLES_DIR CACHE_DIR
"""

import os
import sys

import numpy as np

import attn
from attn._core import _as_array

examples_dir, cache = sys.argv[1], sys.argv[2]
kernel = attn.compile(os.path.join(examples_dir, "softmax.attn"), cache_dir=cache)
rng = np.random.default_rng(0)
N = 9
q, k, v = (rng.standard_normal((1, 8, N, 64)).astype(np.float32) for _ in range(3))
expected = kernel(q, k, v)
print("baseline ok: %s" % attn.check(kernel, q, k, v)["ok"])


def ptr(a):
    return a.__array_interface__["data"][0]


class Interface:
    """Exposes only __array_interface__ (of a numpy array it keeps alive)."""

    def __init__(self, array):
        self._keep = array
        self.__array_interface__ = array.__array_interface__


class DLPack:
    """Exposes only __dlpack__ / __dlpack_device__ (numpy's own)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


# __array_interface__: no copy, and the kernel reads that memory.
iq = Interface(q)
print("interface: same pointer %s" % (ptr(_as_array(iq, "q")) == ptr(q)))
out = kernel(iq, Interface(k), Interface(v))
print("interface: same output %s" % np.array_equal(out, expected))
q2 = q.copy()
iq2 = Interface(q2)
q2[0, 0, 0, :] += 1.0  # written after the object was made: seen by the kernel
changed = kernel(iq2, k, v)
print("interface: reads current memory %s" % (np.array_equal(changed, kernel(q2, k, v)) and not np.array_equal(changed, expected)))
# out= through __array_interface__: written in place, so no copy either.
buffer = np.full((1, 8, N, 64), np.nan, np.float32)
result = kernel(q, k, v, out=Interface(buffer))
print("interface out: written in place %s, returned the object %s" % (np.array_equal(buffer, expected), isinstance(result, Interface)))

# __dlpack__ (as PyTorch CPU tensors have).
dq = DLPack(q)
print("dlpack: same pointer %s" % (ptr(_as_array(dq, "q")) == ptr(q)))
print("dlpack: same output %s" % np.array_equal(kernel(dq, DLPack(k), DLPack(v)), expected))
buffer = np.full((1, 8, N, 64), np.nan, np.float32)
kernel(q, k, v, out=DLPack(buffer))
print("dlpack out: written in place %s" % np.array_equal(buffer, expected))

# A C-contiguous view at an offset: a slice of a bigger array along axis 0.
big = rng.standard_normal((3, 8, N, 64)).astype(np.float32)
view = big[1:2]
print("view: c-contiguous %s, offset %d bytes" % (view.flags.c_contiguous, ptr(view) - ptr(big)))
print("view: passed as is %s" % (_as_array(view, "q") is view))
print("view: same output as a copy %s" % np.array_equal(kernel(view, k, v), kernel(view.copy(), k, v)))
# The same along the sequence axis is not contiguous (N rows of 2N).
long = rng.standard_normal((1, 8, 2 * N, 64)).astype(np.float32)
try:
    kernel(long[:, :, :N], k, v)
    print("sequence slice: no error")
except ValueError as e:
    print("sequence slice: ValueError: %s" % e)

# A transposed array (right shape, wrong layout) is refused, not copied.
transposed = np.ascontiguousarray(q.swapaxes(2, 3)).swapaxes(2, 3)
print("transposed: shape %s, c-contiguous %s" % (list(transposed.shape), transposed.flags.c_contiguous))
try:
    kernel(transposed, k, v)
    print("transposed: no error")
except ValueError as e:
    print("transposed: ValueError: %s" % e)

# out= in place: the same object back, every element written; a view into a
# bigger buffer leaves its neighbours alone.
out = np.full((1, 8, N, 64), np.nan, np.float32)
result = kernel(q, k, v, out=out)
print("out: returned the same object %s, equal %s" % (result is out, np.array_equal(out, expected)))
canvas = np.full((3, 8, N, 64), -7.0, np.float32)
kernel(q, k, v, out=canvas[2:3])
print("out view: written %s, neighbours untouched %s" % (np.array_equal(canvas[2:3], expected), bool(np.all(canvas[:2] == -7.0))))
ref = np.full((1, 8, N, 64), np.nan, np.float32)
result = kernel.reference(q, k, v, out=ref)
print("reference out: in place %s, close %s" % (result is ref, attn.compare(expected, ref, kernel.tolerance)["ok"]))

# Inputs are only read.
before = [a.copy() for a in (q, k, v)]
kernel(q, k, v)
kernel.reference(q, k, v)
print("inputs unchanged: %s" % all(np.array_equal(a, b) for a, b in zip((q, k, v), before)))

# Several Python threads on one kernel (each Kernel serialises its calls)
# and on two kernels at once (independent handles): same results as
# sequential calls.
import threading

other = attn.compile(os.path.join(examples_dir, "softmax_causal.attn"), cache_dir=cache)
jobs = [(kernel if i % 2 == 0 else other, [rng.standard_normal((1, 8, 3 + i, 64)).astype(np.float32) for _ in range(3)]) for i in range(6)]
expected_outs = [kern(*arrays) for kern, arrays in jobs]
results = [None] * len(jobs)


def work(i):
    kern, arrays = jobs[i]
    for _ in range(5):
        results[i] = kern(*arrays)


threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads: same as sequential %s" % all(np.array_equal(r, e) for r, e in zip(results, expected_outs)))
