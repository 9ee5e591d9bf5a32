"""DESIGN §1.3's lengths through the attn package: integer and float32
lengths, checked against the reference (attn.check) and against a numpy
restatement of the padded batch; bad lengths raise with the input named.

usage: lengths.py EXAMPLES_DIR CACHE_DIR
"""

import os
import sys

import numpy as np

import attn


def numpy_padded_causal(q, k, v, lengths):
    """softmax(q k^T / sqrt(D)) v per batch element over its own first L
    keys, causal; rows at or past L are 0."""
    b, h, n, d = q.shape
    out = np.zeros((b, h, n, v.shape[3]))
    for bi in range(b):
        length = int(lengths[bi])
        for hi in range(h):
            for i in range(min(n, length)):
                s = q[bi, hi, i].astype(np.float64) @ k[bi, hi, : i + 1].T / np.sqrt(d)
                w = np.exp(s - s.max())
                out[bi, hi, i] = w @ v[bi, hi, : i + 1] / w.sum()
    return out


def main():
    examples, cache = sys.argv[1], sys.argv[2]
    with attn.compile(os.path.join(examples, "padded_batch.attn"), cache_dir=cache) as kernel:
        inputs = attn.random_inputs(kernel, sizes={"N": 40}, seed=5)
        print("generated lengths:", [int(x) for x in inputs["lens"]])
        print("check:", attn.check(kernel, **inputs)["ok"])
        for dtype in (np.int32, np.int64, np.float32):
            inputs["lens"] = np.array([0, 40, 1, 23], dtype)
            out = kernel(**inputs)
            expected = numpy_padded_causal(inputs["q"], inputs["k"], inputs["v"], inputs["lens"])
            error = np.abs(out - expected).max() / np.abs(expected).max()
            print("%s: numpy agrees %s, padded rows 0: %s" % (
                np.dtype(dtype).name, error < 1e-4,
                not out[0].any() and not out[3, :, 23:].any()))
        for label, bad in (("fraction", np.array([0, 2.5, 1, 3], np.float32)),
                           ("negative", np.array([0, -1, 1, 3], np.int32)),
                           ("nan", np.array([0, np.nan, 1, 3], np.float32))):
            inputs["lens"] = bad
            try:
                kernel(**inputs)
                print("%s: no error" % label)
            except ValueError as error:
                print("%s: ValueError: %s" % (label, error))


if __name__ == "__main__":
    main()
