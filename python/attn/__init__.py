"""attn: compile attention variants (.attn specs) to CPU/NVPTX kernels and run
them on numpy arrays, through the C API of libattn_c.so (ctypes).

    import attn, numpy as np
    kernel = attn.compile("examples/softmax.attn")       # N stays dynamic
    q, k, v = (np.random.standard_normal((1, 8, 100, 64)).astype(np.float32)
               for _ in range(3))
    out = kernel(q, k, v)                                  # [1, 8, 100, 64]
    print(attn.check(kernel, q, k, v))                     # against the reference

Reference: docs/python.md. PyTorch integration: ``import attn.torch``.
"""

import re as _re

from ._core import (
    CompileError,
    Kernel,
    OutOfMemoryError,
    RunError,
    check,
    compare,
    compile,
    random_inputs,
    report,
    version,
)
from ._capi import library_path

__all__ = [
    "CompileError",
    "Kernel",
    "OutOfMemoryError",
    "RunError",
    "check",
    "compare",
    "compile",
    "random_inputs",
    "report",
    "version",
    "library_path",
    "__version__",
]


def _package_version():
    # attnVersion() is "attn <version> ..."; the package is the library's.
    match = _re.match(r"\s*attn\s+v?([0-9][^\s,;()]*)", version() or "")
    return match.group(1) if match else "0+unknown"


__version__ = _package_version()
