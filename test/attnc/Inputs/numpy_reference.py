#!/usr/bin/env python3
"""An independent numpy implementation of DESIGN §1, to check `attnc run`.

    numpy_reference.py DIR --term SETTINGS [--term SETTINGS ...]
                       [--value NAME] [--gate NAME] [--tol T]

reads the inputs that `attnc run --save DIR` wrote (DIR/<input name>.npy),
computes O = G ⊙ Σ_t term_t from them in float64, and compares it with
DIR/out.npy. It shares no code with attn: the spec is restated on the
command line, one --term per term, as comma-separated settings:

    score=softmax|relu2|kernel      (required)
    map=identity|relu|elu1|favor+|cosformer|rfa   (kernel only)
    q=NAME k=NAME                   (default q and k)
    mask=none|causal|block:C|block_causal:C|prior_blocks:C
    normalizer=rows|length|none     (default rows; length for relu2)
    scale=S                         (default 1/sqrt(D); not used by
                                     kernel maps other than favor+)
    eps=E                           (default 1e-6 for kernel, else 0)
    omega=NAME                      (favor+ and rfa, required: ω [m, D])
    project=E_NAME:F_NAME           (Linformer: E, F [k, M])
    decay=G | decay=NAME            (kernel only, DESIGN §1.2: a number
                                     g in (0, 1], or an input of shape [H]
                                     or [B, H, N] with values in [0, 1];
                                     needs mask=causal or block_causal:C and
                                     normalizer rows or none. A value that
                                     float() accepts is a number, else a name)
    key_weight=NAME                 (kernel only, not with project: κ
                                     [B, H, M], w_ij ← κ_j · w_ij)

map=rfa (Random Feature Attention, DESIGN §1.2) is φ(x) = [sin(ω x̂),
cos(ω x̂)] / sqrt(m) ∈ R^(2m) with x̂ = x / ‖x‖ (x̂ = 0 for x = 0) and no
scale; combined with decay=NAME and key_weight=NAME (κ = 1 − g) it is RFA's
gated causal form.

With decay, a visible pair (i, j ≤ i) weighs d_ij = Π_{t=j+1..i} g_t. It is
computed in log space, from cumulative sums of log g (zeros counted apart so
that g = 0 gives d = 0 and never log 0 or NaN), as an independent check on
the evaluator's literal products.

Prints the maximum absolute error and exits 0 when it is below the
tolerance (default 1e-4), 1 otherwise (or when out.npy is not a float32
array of the expected shape, or holds a NaN or an infinity).

Why 1e-4: both sides start from the same float32 inputs and compute in double;
out.npy is rounded to float32 (relative error 6e-8), so on the small
problems of the tests (|o| below about 100) the two agree to about 1e-5. A
mistake in the math (a wrong scale, mask, normaliser or feature map) moves
the output by far more than 1e-4.
"""

import argparse
import math
import os
import sys

import numpy as np


def parse_term(text):
    term = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            sys.exit(f"numpy_reference: bad term setting '{item}' (want key=value)")
        key, value = item.split("=", 1)
        if key in term:
            sys.exit(f"numpy_reference: duplicate term setting '{key}'")
        term[key] = value
    known = {"score", "map", "q", "k", "mask", "normalizer", "scale", "eps",
             "omega", "project", "decay", "key_weight"}
    unknown = set(term) - known
    if unknown:
        sys.exit(f"numpy_reference: unknown term settings {sorted(unknown)}")
    if term.get("score") not in ("softmax", "relu2", "kernel"):
        sys.exit("numpy_reference: every term needs score=softmax|relu2|kernel")
    if (term["score"] == "kernel") != ("map" in term):
        sys.exit("numpy_reference: map= goes with score=kernel, and only there")
    for key in ("decay", "key_weight"):
        if key in term and term["score"] != "kernel":
            sys.exit(f"numpy_reference: {key}= needs score=kernel")
    return term


def load(directory, name):
    path = os.path.join(directory, name + ".npy")
    array = np.load(path)
    if array.dtype != np.float32:
        sys.exit(f"numpy_reference: {path} is {array.dtype}, not float32")
    return array.astype(np.float64)


def mask_matrix(spec, n, m):
    """allowed[i, j]: may query i see key j (DESIGN §1 masks)."""
    i = np.arange(n)[:, None]
    j = np.arange(m)[None, :]
    if spec == "none":
        return np.ones((n, m), dtype=bool)
    if spec == "causal":
        return np.broadcast_to(j <= i, (n, m))
    kind, _, size = spec.partition(":")
    c = int(size)
    if kind == "block":
        return np.broadcast_to(i // c == j // c, (n, m))
    if kind == "block_causal":
        return np.broadcast_to((i // c == j // c) & (j <= i), (n, m))
    if kind == "prior_blocks":
        return np.broadcast_to(j // c < i // c, (n, m))
    sys.exit(f"numpy_reference: unknown mask '{spec}'")


def parse_decay(value):
    """decay=: a float for a number, None for an input name."""
    try:
        return float(value)
    except ValueError:
        return None


def decay_matrix(directory, value, shape):
    """d[b, h, i, j] = Π_{t=j+1..i} g_t for j ≤ i, else 0 (DESIGN §1.2).

    Log space: with Λ_t = Σ_{s≤t, g_s>0} log g_s and Z_t the number of zeros
    among g_0..g_t, d_ij = exp(Λ_i − Λ_j) when no g_t in (j, i] is zero
    (Z_i = Z_j), else 0. Every Λ is finite, so no inf − inf appears.
    """
    b, h, n = shape
    rate = parse_decay(value)
    if rate is not None:
        if not (math.isfinite(rate) and 0.0 < rate <= 1.0):
            sys.exit(f"numpy_reference: decay={value} is not in (0, 1]")
        g = np.full((b, h, n), rate, dtype=np.float64)
    else:
        g = load(directory, value)
        if g.shape == (h,):
            g = np.broadcast_to(g[None, :, None], (b, h, n))
        elif g.shape != (b, h, n):
            sys.exit(f"numpy_reference: decay input '{value}' has shape "
                     f"{list(g.shape)}, want [{h}] or [{b}, {h}, {n}]")
        if not np.all(np.isfinite(g) & (g >= 0.0) & (g <= 1.0)):
            sys.exit(f"numpy_reference: decay input '{value}' has values "
                     "outside [0, 1]")
    positive = g > 0.0
    log_g = np.where(positive, np.log(np.where(positive, g, 1.0)), 0.0)
    cum_log = np.cumsum(log_g, axis=-1)                      # Λ [B, H, N]
    cum_zero = np.cumsum(~positive, axis=-1)                 # Z [B, H, N]
    lower = np.tril(np.ones((n, n), dtype=bool))             # j ≤ i
    no_zero = (cum_zero[..., :, None] - cum_zero[..., None, :]) == 0
    visible = lower & no_zero
    exponent = cum_log[..., :, None] - cum_log[..., None, :]
    return np.where(visible, np.exp(np.where(visible, exponent, 0.0)), 0.0)


def feature_map(name, x, positions, length, scale, omega):
    """φ applied to the rows of x [B, H, L, D] at the given positions."""
    if name == "identity":
        return x
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "elu1":
        return np.where(x > 0.0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    if name in ("favor+", "favor_plus"):
        xs = x * math.sqrt(scale)
        m = omega.shape[0]
        projected = np.einsum("bhld,rd->bhlr", xs, omega)
        half_norm = 0.5 * np.sum(xs * xs, axis=-1, keepdims=True)
        return np.exp(projected - half_norm) / math.sqrt(m)
    if name == "rfa":
        # x̂ = x/‖x‖ row by row, 0 where the row is 0; then the angles ω x̂.
        norm = np.linalg.norm(x, axis=-1, keepdims=True)
        unit = np.divide(x, norm, out=np.zeros_like(x), where=norm > 0.0)
        m = omega.shape[0]
        angles = np.einsum("bhld,rd->bhlr", unit, omega)
        return np.concatenate([np.sin(angles), np.cos(angles)],
                              axis=-1) / math.sqrt(m)
    if name == "cosformer":
        angle = math.pi * positions / (2.0 * length)
        r = np.maximum(x, 0.0)
        return np.concatenate(
            [r * np.cos(angle)[:, None], r * np.sin(angle)[:, None]], axis=-1)
    sys.exit(f"numpy_reference: unknown feature map '{name}'")


def evaluate_term(directory, term, v):
    q = load(directory, term.get("q", "q"))
    k = load(directory, term.get("k", "k"))
    n, m, d = q.shape[2], k.shape[2], q.shape[3]
    score = term["score"]
    scale = float(term["scale"]) if "scale" in term else 1.0 / math.sqrt(d)
    normalizer = term.get("normalizer",
                          "length" if score == "relu2" else "rows")
    eps = float(term["eps"]) if "eps" in term else (
        1e-6 if score == "kernel" else 0.0)
    mask = term.get("mask", "none")

    keys, values, key_positions = k, v, np.arange(m, dtype=np.float64)
    if "project" in term:
        if mask != "none":
            sys.exit("numpy_reference: projection with a mask is not defined")
        e_name, f_name = term["project"].split(":")
        e = load(directory, e_name)
        f = load(directory, f_name)
        keys = np.einsum("pm,bhmd->bhpd", e, k)
        values = np.einsum("pm,bhme->bhpe", f, v)
        key_positions = np.arange(e.shape[0], dtype=np.float64)
    mk = keys.shape[2]
    allowed = mask_matrix(mask, n, mk)

    if score == "kernel":
        if term["map"] in ("favor+", "favor_plus", "rfa"):
            if "omega" not in term:
                sys.exit(f"numpy_reference: map={term['map']} needs "
                         "omega=NAME")
        omega = load(directory, term["omega"]) if "omega" in term else None
        if omega is not None and (omega.ndim != 2 or omega.shape[1] != d):
            sys.exit(f"numpy_reference: omega '{term['omega']}' has shape "
                     f"{list(omega.shape)}, want [m, {d}]")
        length = max(n, m)
        query_positions = np.arange(n, dtype=np.float64)
        phi_q = feature_map(term["map"], q, query_positions, length, scale,
                            omega)
        phi_k = feature_map(term["map"], keys, key_positions, length, scale,
                            omega)
        w = np.einsum("bhnf,bhmf->bhnm", phi_q, phi_k)
        w = np.where(allowed, w, 0.0)
        if "key_weight" in term:
            if "project" in term:
                sys.exit("numpy_reference: key_weight with project is not "
                         "defined")
            kappa = load(directory, term["key_weight"])
            if kappa.shape != (q.shape[0], q.shape[1], m):
                sys.exit(f"numpy_reference: key weight '{term['key_weight']}'"
                         f" has shape {list(kappa.shape)}, want "
                         f"[{q.shape[0]}, {q.shape[1]}, {m}]")
            w = w * kappa[:, :, None, :]
        if "decay" in term:
            if mask != "causal" and not mask.startswith("block_causal:"):
                sys.exit("numpy_reference: decay needs mask=causal or "
                         "block_causal:C")
            if normalizer not in ("rows", "none"):
                sys.exit("numpy_reference: decay needs normalizer rows or "
                         "none")
            if n != m:
                sys.exit("numpy_reference: decay needs N == M")
            w = w * decay_matrix(directory, term["decay"],
                                 (q.shape[0], q.shape[1], n))
    else:
        logits = scale * np.einsum("bhnd,bhmd->bhnm", q, keys)
        if score == "softmax":
            masked = np.where(allowed, logits, -np.inf)
            row_max = np.max(masked, axis=-1, keepdims=True)
            row_max = np.where(np.isfinite(row_max), row_max, 0.0)
            w = np.where(allowed, np.exp(np.minimum(masked - row_max, 0.0)),
                         0.0)
        else:  # relu2
            w = np.where(allowed, np.maximum(logits, 0.0) ** 2, 0.0)

    count = np.sum(allowed, axis=-1).astype(np.float64)  # [n]
    if normalizer == "rows":
        z = np.sum(w, axis=-1) + eps
    elif normalizer == "length":
        z = np.broadcast_to(count, w.shape[:-1])
    elif normalizer == "none":
        z = np.ones(w.shape[:-1])
    else:
        sys.exit(f"numpy_reference: unknown normalizer '{normalizer}'")
    numerator = np.einsum("bhnm,bhme->bhne", w, values)
    # A row with no unmasked key (or a zero normaliser) contributes 0.
    empty = (np.broadcast_to(count, z.shape) == 0) | (z == 0)
    safe_z = np.where(empty, 1.0, z)
    return np.where(empty[..., None], 0.0, numerator / safe_z[..., None])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--term", action="append", required=True)
    parser.add_argument("--value", default="v")
    parser.add_argument("--gate")
    parser.add_argument("--tol", type=float, default=1e-4)
    args = parser.parse_args()

    v = load(args.directory, args.value)
    expected = sum(evaluate_term(args.directory, parse_term(t), v)
                   for t in args.term)
    if args.gate:
        expected = load(args.directory, args.gate) * expected

    out_path = os.path.join(args.directory, "out.npy")
    out = np.load(out_path)
    if out.dtype != np.float32:
        print(f"FAIL: {out_path} is {out.dtype}, not float32")
        return 1
    if out.shape != expected.shape:
        print(f"FAIL: {out_path} has shape {out.shape}, expected "
              f"{expected.shape}")
        return 1
    if not np.all(np.isfinite(out)):
        print(f"FAIL: {out_path} holds NaN or infinity")
        return 1
    error = float(np.max(np.abs(out.astype(np.float64) - expected)))
    verdict = "ok" if error < args.tol else "FAIL"
    print(f"{verdict}: max abs error {error:.3g} (tolerance {args.tol:g}) "
          f"over shape {list(out.shape)}, max |o| "
          f"{float(np.max(np.abs(expected))):.3g}")
    return 0 if error < args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
