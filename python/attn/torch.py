"""PyTorch integration: an attn Kernel as a ``torch.library`` custom op.

    import attn, attn.torch
    kernel = attn.compile("examples/softmax.attn")
    op = attn.torch.register(kernel)            # torch.ops.attn.softmax
    out = op(q, k, v)                           # CPU float32 tensors

Inputs a spec declares f16 / bf16 are torch.float16 / torch.bfloat16
tensors, and the output is a tensor of the spec's output type.

The op has a CPU implementation (the kernel, on the tensors' memory, without
copying contiguous inputs) and a fake ("meta") implementation giving the
output shape, so it works under torch.compile / FakeTensor tracing. It has
no autograd formula. Importing this module needs torch; the core ``attn``
package never imports torch.
"""

try:
    import torch as _torch
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "attn.torch needs PyTorch, which is not importable here (%s); "
        "install torch, or use attn without attn.torch" % e
    ) from e

import keyword as _keyword
import re as _re

import numpy as _np

from ._core import Kernel

__all__ = ["register", "registered"]

# name -> (Library, kernel, op): the Library objects must stay alive for the
# registrations to last, and a kernel must outlive its op.
_registry = {}


def registered():
    """The names of the ops registered by this module."""
    return sorted(_registry)


def _arg_name(name, taken):
    arg = _re.sub(r"\W", "_", name)
    if not arg or arg[0].isdigit():
        arg = "_" + arg
    # Names the schema parser or Python would take for something else.
    while _keyword.iskeyword(arg) or arg in ("out", "self", "Tensor") or arg in taken:
        arg += "_"
    taken.add(arg)
    return arg


# The kernel's element types (Kernel.input_types, output_type) as dtypes.
_DTYPES = {"f32": _torch.float32, "f16": _torch.float16, "bf16": _torch.bfloat16}


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _numpy_view(tensor, etype):
    """A numpy view (no copy) of the contiguous CPU tensor TENSOR of ETYPE.
    numpy has no bfloat16 (nor can DLPack hand one to it), so a bf16 tensor
    is viewed as its bit patterns, uint16, which the kernel takes as well."""
    if etype == "bf16":
        return tensor.view(_torch.int16).numpy().view(_np.uint16)
    return tensor.numpy()


def _as_numpy(tensor, label, etype):
    if not isinstance(tensor, _torch.Tensor):
        raise TypeError("%s must be a torch.Tensor, got %s" % (label, type(tensor).__name__))
    if tensor.device.type != "cpu":
        raise ValueError(
            "%s is on %s: the op has a CPU implementation only" % (label, tensor.device)
        )
    if tensor.dtype != _DTYPES[etype]:
        raise TypeError(
            "%s must be %s, got %s"
            % (label, _dtype_name(_DTYPES[etype]), _dtype_name(tensor.dtype))
        )
    return _numpy_view(tensor.detach().contiguous(), etype)


def register(kernel, name=None):
    """Registers KERNEL as the custom op NAME (default ``attn::<spec
    name>``, i.e. ``torch.ops.attn.<spec name>``) and returns it. Its
    arguments are the kernel's inputs in declaration order, CPU tensors of
    their element types (float32; float16 / bfloat16 for inputs the spec
    declares f16 / bf16); it returns a new tensor [B, H, N, E] of the
    output's type (float32 unless the spec says ``output f16`` / ``output
    bf16``). Inputs that are not contiguous are made contiguous (a copy),
    other dtypes are an error. Registering a name again raises ValueError unless it is the
    same kernel, for which the existing op is returned."""
    if not isinstance(kernel, Kernel):
        raise TypeError("register() needs an attn.Kernel, got %s" % type(kernel).__name__)
    if name is None:
        name = "attn::%s" % kernel.name
    if name.count("::") != 1:
        raise ValueError("op name must be 'namespace::name', got %r" % name)
    namespace, opname = name.split("::")
    if name in _registry:
        _, old_kernel, op = _registry[name]
        if old_kernel is kernel:
            return op
        raise ValueError("op %s is already registered for another kernel" % name)

    taken = set()
    args = [_arg_name(n, taken) for n in kernel.inputs]
    schema = "(%s) -> Tensor" % ", ".join("Tensor %s" % a for a in args)

    def cpu_impl(*tensors):
        if len(tensors) != len(kernel.inputs):
            raise TypeError(
                "%s takes %d tensors (%s), got %d"
                % (name, len(kernel.inputs), ", ".join(kernel.inputs), len(tensors))
            )
        arrays = [
            _as_numpy(t, "input '%s'" % n, kernel.input_types[n])
            for t, n in zip(tensors, kernel.inputs)
        ]
        shape = kernel.output_shape_for(*arrays)
        out = _torch.empty(shape, dtype=_DTYPES[kernel.output_type])
        kernel(*arrays, out=_numpy_view(out, kernel.output_type))
        return out

    def fake_impl(*tensors):
        # The output dims: fixed ones from the kernel, dynamic ones from
        # the first input that takes the same size.
        shape = []
        for fixed, dyn in kernel._out_dims:
            if dyn is None:
                shape.append(fixed)
                continue
            for t, dims in zip(tensors, kernel._dims):
                d = next((j for j, (_, dd) in enumerate(dims) if dd == dyn), None)
                if d is not None:
                    shape.append(t.shape[d])
                    break
            else:
                raise ValueError("size %s of the output is not bound by any input" % kernel.sizes[dyn])
        return tensors[0].new_empty(shape, dtype=_DTYPES[kernel.output_type])

    library = _torch.library.Library(namespace, "FRAGMENT")
    library.define(opname + schema)
    library.impl(opname, cpu_impl, "CPU")
    if hasattr(_torch.library, "register_fake"):  # torch >= 2.4
        _torch.library.register_fake(name, fake_impl, lib=library)
    elif hasattr(_torch.library, "impl_abstract"):  # torch 2.1 - 2.3
        _torch.library.impl_abstract(name, fake_impl, lib=library)
    else:  # older: a Meta kernel
        library.impl(opname, fake_impl, "Meta")

    op = getattr(getattr(_torch.ops, namespace), opname)
    _registry[name] = (library, kernel, op)
    return op
