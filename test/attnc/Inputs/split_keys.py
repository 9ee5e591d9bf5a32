"""Splits the saved inputs of a run (FULL_DIR/q.npy, k.npy, v.npy) at key
SPLIT into the inputs of two runs over the first and the last keys:
A_DIR (keys [0, SPLIT)) and B_DIR (keys [SPLIT, M)), the queries whole.

usage: split_keys.py FULL_DIR A_DIR B_DIR SPLIT
"""

import os
import sys

import numpy as np


def main():
    full, first, last, split = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    for directory in (first, last):
        os.makedirs(directory, exist_ok=True)
    for name in ("q", "k", "v"):
        array = np.load(os.path.join(full, name + ".npy"))
        if name == "q":
            np.save(os.path.join(first, "q.npy"), array)
            np.save(os.path.join(last, "q.npy"), array)
            continue
        np.save(os.path.join(first, name + ".npy"), np.ascontiguousarray(array[:, :, :split]))
        np.save(os.path.join(last, name + ".npy"), np.ascontiguousarray(array[:, :, split:]))


if __name__ == "__main__":
    main()
