#!/usr/bin/env python3
"""Writes the seed corpus of attn-npy-fuzzer into corpus-npy/.

Small arrays as numpy writes them: the float32/float64 shapes that
attn::npy::parse accepts (0-d, 1-d, 2-d, 4-d, empty, special values, format
versions 1.0, 2.0 and 3.0), and a few it must reject (int32, big-endian,
Fortran order) to seed the error paths. Deterministic: rerunning it with the
same numpy gives the same bytes.

Usage: python3 test/Fuzz/make-npy-corpus.py
"""

import os

import numpy as np
from numpy.lib import format as npy_format

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-npy")


def save(name, array, version=None):
    with open(os.path.join(HERE, name), "wb") as f:
        if version is None:
            np.save(f, array)
        else:
            npy_format.write_array(f, array, version=version)


def main():
    os.makedirs(HERE, exist_ok=True)
    rng = np.random.default_rng(0)
    save("f4-1d.npy", np.arange(5, dtype="<f4"))
    save("f4-2d.npy", rng.standard_normal((2, 3)).astype("<f4"))
    save("f4-4d.npy", rng.standard_normal((1, 2, 2, 3)).astype("<f4"))
    save("f4-0d.npy", np.array(3.5, dtype="<f4"))
    save("f4-empty.npy", np.zeros((0, 3), dtype="<f4"))
    save("f4-special.npy",
         np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], dtype="<f4"))
    save("f8-2d.npy", np.array([[1.0, -2.5], [1e300, 1e-300]], dtype="<f8"))
    save("f4-v2.npy", np.arange(3, dtype="<f4"), version=(2, 0))
    save("f4-v3.npy", np.arange(2, dtype="<f4"), version=(3, 0))
    # Rejected by attn::npy::parse.
    save("i4-1d.npy", np.arange(4, dtype="<i4"))
    save("f4-big-endian.npy", np.arange(3, dtype=">f4"))
    save("f4-fortran.npy",
         np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))


if __name__ == "__main__":
    main()
