"""A kernel keeps its workspaces (qk-first softmax packs K and V into
buffers of the inputs' size) from one call to the next: calls whose sizes
grow, shrink and grow again, and calls from several Python threads at once
(the package releases the GIL, so they overlap), must all give what numpy
gives. A kernel that is dropped frees them (its destructor runs; the test
only sees that nothing breaks), and a new one works.

usage: workspaces.py EXAMPLES_DIR CACHE_DIR
"""

import gc
import os
import sys
import threading

import numpy as np

import attn

examples_dir, cache = sys.argv[1], sys.argv[2]


def softmax_attention(q, k, v, causal):
    """numpy, in float64: softmax(q k^T / sqrt(D)) v per head."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 8, n, 64)).astype(np.float32) for _ in range(3)]


def agrees(kernel, n, seed, causal):
    q, k, v = inputs(n, seed)
    out = kernel(q, k, v)
    return np.allclose(out, softmax_attention(q, k, v, causal), rtol=2e-4, atol=2e-5)


# Sizes that grow, shrink (the held block is larger than needed), cross the
# small-N branch (N <= 8 has workspaces of its own) and grow past the held
# block again.
SIZES = (300, 40, 1000, 5, 300, 1, 1200)
for name, causal in (("softmax", False), ("softmax_causal", True)):
    kernel = attn.compile(
        os.path.join(examples_dir, name + ".attn"),
        cache_dir=cache,
        force_order="qk_first",
    )
    results = [agrees(kernel, n, seed, causal) for seed, n in enumerate(SIZES)]
    print("%s sequence: %s" % (name, all(results)))

    # Four threads at once, each over its own sizes: a slot's block is taken
    # by one call at a time (the others allocate their own), and what comes
    # back to a full slot is freed.
    failures = []

    def run(offset):
        for i, n in enumerate(SIZES[offset:] + SIZES[:offset]):
            if not agrees(kernel, n, 100 * offset + i, causal):
                failures.append((offset, n))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%s concurrent: %s" % (name, not failures))

    del kernel
    gc.collect()

kernel = attn.compile(os.path.join(examples_dir, "softmax.attn"), cache_dir=cache)
print("after unload: %s" % agrees(kernel, 200, 7, False))
