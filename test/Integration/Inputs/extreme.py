"""Rewrites saved inputs (`attnc run --save DIR`) in place into an extreme
case, for the stress tests of extreme-inputs.test.

usage: extreme.py DIR scale FQ FK   q *= FQ, k *= FK
       extreme.py DIR align NORM     every q and k row NORM * w_r / |w_r| for
                                     a random row r of omega (FAVOR+ features
                                     e^(NORM |w| s^(1/2) - ...), which overflow
                                     f32 without a stabiliser)
"""

import sys

import numpy as np

work, mode = sys.argv[1], sys.argv[2]


def path(name):
    return "%s/%s.npy" % (work, name)


if mode == "scale":
    for name, factor in (("q", float(sys.argv[3])), ("k", float(sys.argv[4]))):
        x = np.load(path(name)).astype(np.float64) * factor
        np.save(path(name), x.astype(np.float32))
elif mode == "align":
    norm = float(sys.argv[3])
    omega = np.load(path("omega")).astype(np.float64)
    rng = np.random.default_rng(7)
    for name in ("q", "k"):
        x = np.load(path(name))
        rows = rng.integers(0, omega.shape[0], size=x.shape[:3])
        unit = omega[rows] / np.linalg.norm(omega[rows], axis=-1, keepdims=True)
        np.save(path(name), (norm * unit).astype(np.float32))
else:
    sys.exit("unknown mode " + mode)
