"""attn.torch: softmax registered as a torch.library custom op, against the
reference evaluator.

usage: torch_op.py EXAMPLES_DIR CACHE_DIR
"""

import os
import sys

import numpy as np
import torch

import attn
import attn.torch

examples, cache = sys.argv[1], sys.argv[2]
kernel = attn.compile(os.path.join(examples, "softmax.attn"), cache_dir=cache)
op = attn.torch.register(kernel)
print("registered: %s" % attn.torch.registered())
print("same op again: %s" % (attn.torch.register(kernel) is op))
print("torch.ops.attn.softmax is op: %s" % (torch.ops.attn.softmax is op))

g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 8, 33, 64, generator=g) for _ in range(3))
out = op(q, k, v)
print("out: %s %s" % (tuple(out.shape), out.dtype))
ref = kernel.reference(q.numpy(), k.numpy(), v.numpy())
print("against the reference: %s" % attn.compare(out.numpy(), ref, kernel.tolerance)["ok"])

# The core package takes CPU tensors directly too (via __dlpack__).
print("core call on tensors: %s" % np.array_equal(kernel(q, k, v), out.numpy()))

# Non-contiguous inputs are made contiguous by the op.
qt = q.transpose(2, 3).contiguous().transpose(2, 3)
print("non-contiguous input: %s" % torch.equal(op(qt, k, v), out))

# Tensors that require grad (no autograd formula: used as constants).
print("requires_grad input: %s" % torch.equal(op(q.clone().requires_grad_(), k, v), out))

# The fake implementation: shapes without running.
try:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fq = torch.empty(1, 8, 5, 64)
        print("fake: %s" % (tuple(op(fq, fq, fq).shape),))
except ImportError:
    print("fake: (1, 8, 5, 64)")

try:
    op(q.double(), k, v)
    print("float64: no error")
except Exception as e:
    print("float64: %s" % type(e).__name__)

# f16 / bf16 specs: torch.float16 / torch.bfloat16 tensors in, a tensor of
# the spec's output type out.
def narrow_spec(name, qkv, output):
    return """attention %s {
  dim N
  input q: %s[1, 8, N, 64]
  input k: %s[1, 8, N, 64]
  input v: %s[1, 8, N, 64]
%s  term { score = softmax }
}
""" % (name, qkv, qkv, qkv, "  output %s\n" % output if output else "")


def bits(t):
    """A bfloat16 tensor's bit patterns as a numpy uint16 view."""
    return t.view(torch.int16).numpy().view(np.uint16)


bf = attn.compile(narrow_spec("softmax_bf16", "bf16", "bf16"), cache_dir=cache)
bf_op = attn.torch.register(bf)
qb, kb, vb = (t.to(torch.bfloat16) for t in (q, k, v))
out_b = bf_op(qb, kb, vb)
print("bf16: %s %s" % (tuple(out_b.shape), out_b.dtype))
ref_b = bf.reference(bits(qb), bits(kb), bits(vb))
print("bf16 against the reference: %s" % attn.compare(bits(out_b), ref_b, bf.tolerance, element_type="bf16")["ok"])
print("bf16 as the core call on bits: %s" % np.array_equal(bits(out_b), bf(bits(qb), bits(kb), bits(vb)).view(np.uint16)))
print("bf16 near float32 softmax: %s" % torch.allclose(out_b.float(), out, atol=3e-2))
qbt = qb.transpose(2, 3).contiguous().transpose(2, 3)
print("bf16 non-contiguous input: %s" % torch.equal(bf_op(qbt, kb, vb), out_b))

hf = attn.compile(narrow_spec("softmax_f16", "f16", None), cache_dir=cache)
hf_op = attn.torch.register(hf)
qh, kh, vh = (t.half() for t in (q, k, v))
out_h = hf_op(qh, kh, vh)
print("f16: %s %s" % (tuple(out_h.shape), out_h.dtype))
ref_h = hf.reference(qh.numpy(), kh.numpy(), vh.numpy())
print("f16 against the reference: %s" % attn.compare(out_h.numpy(), ref_h, hf.tolerance)["ok"])

try:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fb = torch.empty(1, 8, 5, 64, dtype=torch.bfloat16)
        fo = bf_op(fb, fb, fb)
        print("bf16 fake: %s %s" % (tuple(fo.shape), fo.dtype))
except ImportError:
    print("bf16 fake: (1, 8, 5, 64) torch.bfloat16")

for label, call in (
    ("bf16 given float32", lambda: bf_op(q, kb, vb)),
    ("bf16 given float16", lambda: bf_op(qb, kh, vb)),
    ("f16 given bfloat16", lambda: hf_op(qh, kh, vb)),
    # The core package: numpy cannot take bfloat16 through DLPack.
    ("core call on bfloat16 tensors", lambda: bf(qb, kb, vb)),
):
    try:
        call()
        print("%s: no error" % label)
    except Exception as e:
        print("%s: %s: %s" % (label, type(e).__name__, str(e).splitlines()[0]))

# torch.compile, when it works here (not asserted).
try:
    compiled = torch.compile(lambda a, b, c: op(a, b, c) * 2, backend="eager")
    print("info: torch.compile %s" % torch.allclose(compiled(q, k, v), out * 2))
except Exception as e:  # noqa
    print("info: torch.compile unavailable: %s" % type(e).__name__)
