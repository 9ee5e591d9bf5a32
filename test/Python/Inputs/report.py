"""attn.report: the cost model's report as a dict.

usage: report.py EXAMPLES_DIR
"""

import os
import sys

import attn

examples = sys.argv[1]
spec = os.path.join(examples, "linear_elu1.attn")

r = attn.report(spec, sizes={"N": 8192})
print("type: %s" % type(r).__name__)
print("spec: %s, target: %s" % (r["spec"], r["target"]))
print("terms: %d" % len(r["terms"]))
print("order: %s" % r["terms"][0]["chosen"]["order"])
print("strategies: %s" % ",".join(s["order"] for s in r["terms"][0]["strategies"]))
print("layer without heads: %s" % ("layer" in r))
print("assumed sizes: %s" % r.get("assumed_sizes"))

layer = attn.report(spec, sizes={"N": 8192}, heads=12, head_dim=64)["layer"]
print("layer: attention_exceeds_ffn_n=%d" % layer["attention_exceeds_ffn_n"])

# N left dynamic: the report assumes a size for it.
print("dynamic: assumed %s" % attn.report(spec).get("assumed_sizes"))

# Spec text, and the nvptx target.
with open(spec) as f:
    text = f.read()
print("text: order %s" % attn.report(text, sizes={"N": 8192})["terms"][0]["chosen"]["order"])
print("nvptx: target %s" % attn.report(spec, sizes={"N": 8192}, target="nvptx")["target"])
# Small N: quadratic wins for softmax-like costs; only printed.
print("info: N=16 order %s" % attn.report(spec, sizes={"N": 16})["terms"][0]["chosen"]["order"])
