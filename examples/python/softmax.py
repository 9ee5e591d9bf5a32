"""Compile examples/softmax.attn, run it on numpy arrays, check it against the
reference evaluator and print the order the cost model chose.

    PYTHONPATH=python /usr/bin/python3 examples/python/softmax.py
"""

import os

import numpy as np

import attn

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "softmax.attn")

kernel = attn.compile(SPEC)  # N stays dynamic: one kernel for every length
print(kernel, "from the cache" if kernel.from_cache else "compiled")
print("inputs:", kernel.input_shapes)

rng = np.random.default_rng(0)
N = 128
q, k, v = (rng.standard_normal((1, 8, N, 64), dtype=np.float32) for _ in range(3))

out = kernel(q, k, v)  # float32 [1, 8, N, 64], inputs passed without a copy
print("out:", out.shape, out.dtype, "mean |o| = %.4f" % np.abs(out).mean())

result = attn.check(kernel, q, k, v)  # the kernel and the reference, same inputs
print("check:", result)

report = attn.report(SPEC, sizes={"N": N})
print("chosen order at N = %d:" % N, report["terms"][0]["chosen"]["order"])
kernel.close()
