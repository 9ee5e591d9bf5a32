#!/usr/bin/env python3
"""Checks the inputs that `attnc run --seed S --save DIR` generated against an
independent Python implementation of the documented generator
(include/attn/Support/InputGenerator.h, docs/language.md):

    check_generated.py DIR --seed S [--normal a,b] [--projection E,F]
                       [--omega W] [--uniform NAME:LO:HI,...] [--retention G]

  --normal a,b      DIR/a.npy ... are N(0, 1): Random(seedFor(S, name)).normal()
  --projection E,F  DIR/E.npy ... are N(0, 1/k), k = rows: the same stream
                    times 1/sqrt(k)
  --omega W         DIR/W.npy [m, D] is FAVOR+'s orthogonal Gaussian ω: per
                    block of D rows, a D×D Gaussian G, then D Gaussian vectors
                    whose norms become the row lengths; G's rows are
                    orthonormalised by Gram-Schmidt (each projection twice)
  --uniform g:0.9:1 DIR/g.npy is lo + (hi - lo) u, u = Random(seedFor(S,
                    name)).uniform() (per-token decays in [0.9, 1), key
                    weights in [0, 1))
  --retention G     DIR/G.npy [H] is RetNet's 1 - 2^(-5-h) (no randomness)

where seedFor(S, name) = mix(mix(S) ^ FNV-1a-64(name)), mix is splitmix64's
finaliser, Random is xoshiro256** seeded by four splitmix64 outputs, and
normal() is Box-Muller sqrt(-2 ln(1 - u1)) cos(2π u2) on 53-bit uniforms.
Normals go through the C library's log and cos on both sides, so they agree
to the last bit or so; values are compared with a tolerance of 1e-6 (ω: 1e-5,
after an orthonormalisation in double). Prints one line per input; exits 1
on the first mismatch.
"""

import argparse
import math
import os
import sys

import numpy as np

MASK = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def seed_for(seed, name):
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h ^= byte
        h = (h * 0x100000001B3) & MASK
    return mix64(mix64(seed) ^ h)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Random:
    def __init__(self, seed):
        self.s = []
        state = seed
        for _ in range(4):
            state = (state + 0x9E3779B97F4A7C15) & MASK
            self.s.append(mix64(state))

    def next(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def gaussian(seed, count, stddev=1.0):
    r = Random(seed)
    return np.array([r.normal() * stddev for _ in range(count)],
                    dtype=np.float64).astype(np.float32)


def orthogonal_gaussian(seed, m, d):
    r = Random(seed)
    out = np.zeros((m, d), dtype=np.float64)
    for start in range(0, m, d):
        block = np.array([[r.normal() for _ in range(d)] for _ in range(d)])
        norms = [math.sqrt(sum(r.normal() ** 2 for _ in range(d)))
                 for _ in range(d)]
        for i in range(min(d, m - start)):
            row = block[i]
            for _ in range(2):
                for j in range(i):
                    row -= np.dot(row, block[j]) * block[j]
            row /= np.linalg.norm(row)
            out[start + i] = row * norms[i]
    return out.astype(np.float32)


def compare(directory, name, expected, tol):
    actual = np.load(os.path.join(directory, name + ".npy"))
    if actual.dtype != np.float32 or actual.size != expected.size:
        print(f"FAIL: {name}: {actual.dtype} {actual.shape}, expected float32 "
              f"with {expected.size} elements")
        return False
    error = float(np.max(np.abs(actual.reshape(-1).astype(np.float64) -
                                expected.reshape(-1).astype(np.float64)),
                         initial=0.0))
    ok = error <= tol
    print(f"{'ok' if ok else 'FAIL'}: {name} {list(actual.shape)} "
          f"max abs difference {error:.3g}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--normal", default="")
    parser.add_argument("--projection", default="")
    parser.add_argument("--omega", default="")
    parser.add_argument("--uniform", default="")
    parser.add_argument("--retention", default="")
    parser.add_argument("--lengths", default="",
                        help="NAME:L,...: lengths in [0, L] (batch 1 L, 2 zero)")
    args = parser.parse_args()
    ok = True
    for name in filter(None, args.normal.split(",")):
        count = np.load(os.path.join(args.directory, name + ".npy")).size
        ok &= compare(args.directory, name,
                      gaussian(seed_for(args.seed, name), count), 1e-6)
    for name in filter(None, args.projection.split(",")):
        shape = np.load(os.path.join(args.directory, name + ".npy")).shape
        ok &= compare(args.directory, name,
                      gaussian(seed_for(args.seed, name), int(np.prod(shape)),
                               1.0 / math.sqrt(shape[0])), 1e-6)
    for name in filter(None, args.omega.split(",")):
        m, d = np.load(os.path.join(args.directory, name + ".npy")).shape
        ok &= compare(args.directory, name,
                      orthogonal_gaussian(seed_for(args.seed, name), m, d),
                      1e-5)
    for item in filter(None, args.uniform.split(",")):
        name, lo, hi = item.split(":")
        count = np.load(os.path.join(args.directory, name + ".npy")).size
        random = Random(seed_for(args.seed, name))
        expected = np.array([float(lo) + (float(hi) - float(lo)) * random.uniform()
                             for _ in range(count)])
        ok &= compare(args.directory, name, expected, 1e-6)
    for name in filter(None, args.retention.split(",")):
        heads = np.load(os.path.join(args.directory, name + ".npy")).size
        ok &= compare(args.directory, name,
                      1.0 - 2.0 ** (-5.0 - np.arange(heads)), 1e-7)
    for item in filter(None, args.lengths.split(",")):
        name, limit = item.split(":")
        limit = int(limit)
        count = np.load(os.path.join(args.directory, name + ".npy")).size
        random = Random(seed_for(args.seed, name))
        # uniform [0, L + 1) rounded to f32, then its floor (at most L)
        drawn = np.array([(limit + 1.0) * random.uniform() for _ in range(count)],
                         dtype=np.float64).astype(np.float32)
        expected = np.minimum(np.floor(drawn), limit).astype(np.float64)
        if count > 1:
            expected[1] = limit
        if count > 2:
            expected[2] = 0
        ok &= compare(args.directory, name, expected, 0.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
