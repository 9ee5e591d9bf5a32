"""Poisons one input of a spec with NaN and +-inf at chosen key positions,
runs the compiled code and the reference evaluator on the same inputs, and
compares them: the same NaN / +inf / -inf entries, and the finite entries
within the tolerance. A key a row cannot see must not reach that row, so a
NaN in V (or K) at a future key leaves every earlier row finite.

usage: nonfinite.py ATTNC DIR SPEC N INPUT KEYS [attnc run options...]

KEYS: comma-separated key positions (negative: from the end). Head 0 gets a
NaN in one value column at each key, the last head +inf in the whole row,
and -inf goes into head 0's last key. Prints one line:
`NAME INPUT: same non-finite entries (C of T), finite max rel error E,
rows before key J finite` (J the first poisoned key).
"""

import os
import subprocess
import sys

import numpy as np

attnc, work, spec, n, name, keys = sys.argv[1:7]
options = sys.argv[7:]
n = int(n)
label = os.path.basename(spec)[: -len(".attn")]


def run(*args):
    subprocess.run([attnc, "run", spec, "--set", "N=%d" % n] + list(args),
                   check=True, stdout=subprocess.DEVNULL)


run("--reference", "--save", os.path.join(work, "in"))
path = os.path.join(work, "in", name + ".npy")
x = np.load(path)
positions = [int(k) % n for k in keys.split(",")]
for j in positions:
    x[:, 0, j, x.shape[3] // 2] = np.nan
    x[:, -1, j, :] = np.inf
x[:, 0, n - 1, :] = -np.inf
np.save(path, x)

run("--inputs", os.path.join(work, "in"), "--save", os.path.join(work, "out"), *options)
run("--inputs", os.path.join(work, "in"), "--save", os.path.join(work, "ref"), "--reference")
out = np.load(os.path.join(work, "out", "out.npy"))
ref = np.load(os.path.join(work, "ref", "out.npy"))

same = all((f(out) == f(ref)).all() for f in (np.isnan, np.isposinf, np.isneginf))
finite = np.isfinite(ref)
scale = max(float(np.abs(ref[finite]).max()), 1e-30)
error = float(np.abs(out[finite] - ref[finite]).max()) / scale
first = min(positions)
before = bool(np.isfinite(out[:, :, :first]).all())
print("%s %s: %s non-finite entries (%d of %d), finite max rel error %s, rows before key %d %s"
      % (label, name, "same" if same else "DIFFERENT", (~finite).sum(), ref.size,
         "ok" if error <= 1e-4 else "%.2e" % error, first, "finite" if before else "NOT finite"))
sys.exit(0 if same and error <= 1e-4 and before else 1)
