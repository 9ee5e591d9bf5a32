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
# gpu_precision="tf32": f32 softmax on the (emulated) tensor cores, checked
# at the tf32 tolerance; a cache entry of its own (the same spec under f32
# was compiled above); bad values and the CPU target are refused.
with attn.compile(
    os.path.join(examples, "softmax.attn"),
    target="nvptx",
    emulate_gpu=True,
    gpu_precision="tf32",
    cache_dir=cache,
) as kernel:
    r = attn.check(kernel, sizes={"N": 100}, seed=3)
    print("tf32 %s tolerance=%g from_cache=%s" % ("ok" if r["ok"] else "FAIL", r["tolerance"], kernel.from_cache))
for bad in ({"target": "nvptx", "gpu_precision": "fp8"}, {"gpu_precision": "tf32"}):
    try:
        attn.compile(os.path.join(examples, "softmax.attn"), cache_dir=False, **bad)
        print("accepted %r" % (bad,))
    except ValueError as e:
        print("ValueError: %s" % e)
# bf16 with N and M left dynamic (compiled once, run at several sizes): the
# tensor-core kernel takes its grid, key tiles and masks from the sizes at
# run time.
cross = """attention cross_bf16 {
  dim N
  dim M
  input q: bf16[1, 2, N, 64]
  input k: bf16[1, 2, M, 64]
  input v: bf16[1, 2, M, 64]
  term {
    score = softmax
    mask = causal
  }
}
"""
with attn.compile(cross, target="nvptx", emulate_gpu=True, cache_dir=False) as kernel:
    for n, m in ((1, 1), (7, 100), (100, 7), (130, 300)):
        r = attn.check(kernel, sizes={"N": n, "M": m}, seed=n)
        print("bf16 dynamic N=%d M=%d %s tolerance=%g" % (n, m, "ok" if r["ok"] else "FAIL", r["tolerance"]))
