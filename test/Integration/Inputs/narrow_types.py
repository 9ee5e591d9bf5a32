#!/usr/bin/env python3
"""Checks, independently of attn, that the arrays `attnc run --save DIR`
wrote for a spec with f16 / bf16 arrays hold values of those types:

    narrow_types.py DIR NAME=TYPE [NAME=TYPE ...]

TYPE is f16 (the value survives a round trip through numpy's float16) or
bf16 (the low 16 bits of the float32 pattern are 0). Prints one line per
array and exits 1 at the first that does not hold such values, or holds
only zeros (a vacuous pass).
"""
import os
import sys

import numpy as np


def main():
    directory = sys.argv[1]
    for item in sys.argv[2:]:
        name, kind = item.split("=")
        a = np.load(os.path.join(directory, name + ".npy"))
        assert a.dtype == np.float32, (name, a.dtype)
        if kind == "f16":
            exact = np.array_equal(a.astype(np.float16).astype(np.float32), a)
        elif kind == "bf16":
            exact = not np.any(a.view(np.uint32) & 0xFFFF)
        else:
            raise SystemExit("unknown type " + kind)
        if not exact or not np.any(a):
            print("%s: NOT %s values" % (name, kind))
            return 1
        print("%s: %s values" % (name, kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
