"""Calls attn code compiled ahead of time (attn-opt --attn-lower-to-llvm,
mlir-translate, clang -shared) through its C interface, on .npy inputs.

usage: call_shared.py LIB.so NAME DIR IN1 [IN2 ...] --out-shape B,H,N,E

Reads DIR/<IN>.npy for each input, in the function's argument order, calls
_mlir_ciface_NAME(&desc(IN1), ..., &desc(out)) and writes DIR/compiled.npy.
Sizes are passed only through the memref descriptors, so a function with
dynamic dims sees the real N at run time (this is how the runtime crossover
of a dynamic spec is exercised; `attnc run` binds every size statically).
"""
import argparse
import ctypes
import os
import sys

import numpy as np


def descriptor(array):
    rank = array.ndim

    class Desc(ctypes.Structure):
        _fields_ = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
            ("sizes", ctypes.c_int64 * rank),
            ("strides", ctypes.c_int64 * rank),
        ]

    d = Desc()
    ptr = array.ctypes.data_as(ctypes.c_void_p)
    d.allocated = ptr
    d.aligned = ptr
    d.offset = 0
    for i in range(rank):
        d.sizes[i] = array.shape[i]
        d.strides[i] = array.strides[i] // array.itemsize
    return d


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lib")
    parser.add_argument("name")
    parser.add_argument("dir")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out-shape", required=True)
    args = parser.parse_args()

    arrays = [
        np.ascontiguousarray(np.load(os.path.join(args.dir, n + ".npy")), np.float32)
        for n in args.inputs
    ]
    shape = tuple(int(x) for x in args.out_shape.split(","))
    # NaN-filled, so that rows the code forgets to write are caught.
    out = np.full(shape, np.nan, dtype=np.float32)
    descs = [descriptor(a) for a in arrays] + [descriptor(out)]

    lib = ctypes.CDLL(os.path.abspath(args.lib))
    fn = getattr(lib, "_mlir_ciface_" + args.name)
    fn.restype = None
    fn(*[ctypes.byref(d) for d in descs])
    np.save(os.path.join(args.dir, "compiled.npy"), out)
    print(f"called _mlir_ciface_{args.name}: out {list(shape)}")


if __name__ == "__main__":
    sys.exit(main())
