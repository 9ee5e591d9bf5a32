"""target="nvptx": compiling needs no GPU; running needs one (without a
driver it is a RunError that says so). With emulate_gpu=True the GPU
kernels run on the host (attnc's --emulate-gpu), checked against the
reference evaluator.

usage: nvptx.py EXAMPLES_DIR CACHE_DIR
"""

import os
import sys

import attn

examples, cache = sys.argv[1], sys.argv[2]

with attn.compile(os.path.join(examples, "softmax.attn"), target="nvptx", cache_dir=cache) as kernel:
    print("compiled for the GPU: %s sizes=%s" % (kernel.name, ",".join(kernel.sizes)))
    try:
        r = attn.check(kernel, sizes={"N": 7})
        print("gpu run: %s" % ("ok" if r["ok"] else "FAIL"))
    except attn.RunError as e:
        print("gpu run: RunError: %s" % e)
for name in ("softmax", "linear_elu1_causal"):
    with attn.compile(
        os.path.join(examples, name + ".attn"),
        target="nvptx",
        chip="sm_90",
        emulate_gpu=True,
        cache_dir=cache,
    ) as kernel:
        print("compiled %s sizes=%s" % (kernel.name, ",".join(kernel.sizes)))
        for n in (1, 7, 100):
            r = attn.check(kernel, sizes={"N": n}, seed=n)
            print("%s %s N=%d rel=%.1e" % ("ok" if r["ok"] else "FAIL", name, n, r["max_rel_error"]))
