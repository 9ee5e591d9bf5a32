#!/usr/bin/env python3
"""An independent numpy implementation of DESIGN §1, to check `attnc run`.

    numpy_reference.py DIR --term SETTINGS [--term SETTINGS ...]
                       [--value NAME] [--gate NAME] [--lse] [--tol T]
    numpy_reference.py --merge A_DIR B_DIR FULL_DIR [--tol T]

reads the inputs that `attnc run --save DIR` wrote (DIR/<input name>.npy),
computes O = G ⊙ Σ_t term_t from them in float64, and compares it with
DIR/out.npy. It shares no code with attn: the spec is restated on the
command line, one --term per term, as comma-separated settings:

    score=softmax|relu2|kernel      (required)
    map=identity|relu|elu1|favor+|cosformer|rfa   (kernel only)
    q=NAME k=NAME                   (default q and k)
    mask=none|causal|window:W|window:L:R|block:C|block_causal:C|prior_blocks:C
    normalizer=rows|length|none     (default rows; length for relu2)
    scale=S                         (default 1/sqrt(D); not used by
                                     kernel maps other than favor+)
    eps=E                           (default 1e-6 for kernel, else 0)
    omega=NAME                      (favor+ and rfa, required: ω [m, D])
    project=E_NAME:F_NAME           (Linformer: E, F [k, M])
    decay=G | decay=NAME            (kernel only, DESIGN §1.2: a number
                                     g in (0, 1], or an input of shape [H]
                                     or [B, H, N] with values in [0, 1];
                                     needs mask=causal or block_causal:C,
                                     N == M and normalizer rows or none. A
                                     value that float() accepts is a number,
                                     else a name)
    key_weight=NAME                 (kernel only, not with project: κ
                                     [B, H, M], w_ij ← κ_j · w_ij)
    key_lengths=NAME                (DESIGN §1.3: an input [B]; key j of
                                     batch b is visible only if j < L_b;
                                     not with project)
    query_lengths=NAME              (an input [B]; rows i ≥ L_b of batch b
                                     are 0 in this term)
    lengths=NAME                    (both of the above from one input)
    softcap=C                       (softmax and relu2: C > 0, s ← C·tanh(s/C))
    alibi=default | alibi=NAME      (softmax and relu2, not with project:
                                     s ← s − a_h·|p_i − j|; default: the
                                     ALiBi reference slopes for H query
                                     heads, else an input [H] of slopes; an
                                     input cannot be called "default")
    sink=NAME                       (softmax with normalizer rows: an input
                                     [H] of one logit σ_h per head, added to
                                     the denominator only)

Length inputs hold integers ≥ 0, as float32, int32 or int64 .npy; a length
above the sequence length means all of it.

Heads (DESIGN §1.3) come from the shapes: q is [B, H, N, D], k [B, Hkv, M, D]
and the value [B, Hkv, M, E] with Hkv dividing H; query head h uses key/value
head h // (H / Hkv). Key weights, decay inputs, ALiBi slopes and sinks are per
query head; the output and the gate are [B, H, N, E].

Query i sits at position p_i = M − N + i (bottom-right alignment; M keys of
the term, so p_i = i when N == M). causal is j ≤ p_i and window:L:R is
p_i − L ≤ j ≤ p_i + R (L, R ≥ 0); window:W (W ≥ 1) is window:(W−1):0. The
block masks compare chunks of i and j as before (p_i and i agree when
N == M). Lengths combine with every mask. A row with no visible key is 0.

For softmax and relu2 the score is s = scale·q·k, then the soft-cap, then the
ALiBi bias, then the mask, then softmax or relu². With a sink σ_h the row
maximum is m_i = max(max_j s_ij, σ_h) and the rows normaliser is
z_i = Σ_j exp(s_ij − m_i) + exp(σ_h − m_i) + ε.

--lse (one --term only: softmax, normalizer rows, eps 0) also checks
DIR/lse.npy (float32 [B, H, N]) against lse_i = m_i + log z_i (without ε,
with the sink when there is one), −inf for a row with no visible key: the
−inf entries must match exactly and the others to within the tolerance
(absolute). It prints a second line, `ok: lse max abs error ...`.

--merge merges two runs over the two halves of the keys, A_DIR and B_DIR
(each with out.npy and lse.npy), as DESIGN §1.3 says:
l = log(e^lse_A + e^lse_B), o = e^(lse_A − l) o_A + e^(lse_B − l) o_B (a row
−inf in both halves stays 0 and −inf), and compares o and l with
FULL_DIR/out.npy and FULL_DIR/lse.npy (absolute error, tolerance --tol).

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
             "omega", "project", "decay", "key_weight", "key_lengths",
             "query_lengths", "lengths", "softcap", "alibi", "sink"}
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
    for key in ("softcap", "alibi"):
        if key in term and term["score"] == "kernel":
            sys.exit(f"numpy_reference: {key}= needs score=softmax or relu2")
    if "sink" in term and term["score"] != "softmax":
        sys.exit("numpy_reference: sink= needs score=softmax")
    if "lengths" in term:
        for key in ("key_lengths", "query_lengths"):
            if key in term:
                sys.exit(f"numpy_reference: lengths= already sets {key}=")
        term["key_lengths"] = term["query_lengths"] = term.pop("lengths")
    for key in ("key_lengths", "alibi"):
        if key in term and "project" in term:
            sys.exit(f"numpy_reference: {key}= with project is not defined")
    return term


def load(directory, name):
    path = os.path.join(directory, name + ".npy")
    array = np.load(path)
    if array.dtype != np.float32:
        sys.exit(f"numpy_reference: {path} is {array.dtype}, not float32")
    return array.astype(np.float64)


def load_lengths(directory, name, batch):
    """A lengths input [B] of integers ≥ 0 (float32, int32 or int64)."""
    path = os.path.join(directory, name + ".npy")
    array = np.load(path)
    if array.dtype not in (np.float32, np.int32, np.int64):
        sys.exit(f"numpy_reference: {path} is {array.dtype}, not float32, "
                 "int32 or int64")
    if array.shape != (batch,):
        sys.exit(f"numpy_reference: lengths input '{name}' has shape "
                 f"{list(array.shape)}, want [{batch}]")
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values) & (values >= 0.0)
                  & (values == np.floor(values))):
        sys.exit(f"numpy_reference: lengths input '{name}' holds a value "
                 "that is not an integer ≥ 0")
    return values


def parse_count(text, what, least):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < least:
        sys.exit(f"numpy_reference: {what} '{text}' is not an integer "
                 f"≥ {least}")
    return value


def mask_matrix(spec, n, m):
    """allowed[i, j]: may query i see key j (DESIGN §1.1 and §1.3 masks).

    Query i sits at p_i = m − n + i; the block masks compare i itself.
    """
    i = np.arange(n)[:, None]
    p = (m - n) + i
    j = np.arange(m)[None, :]
    if spec == "none":
        return np.ones((n, m), dtype=bool)
    if spec == "causal":
        return np.broadcast_to(j <= p, (n, m))
    kind, _, size = spec.partition(":")
    if kind == "window":
        parts = size.split(":")
        if len(parts) == 1:
            left = parse_count(parts[0], "window size", 1) - 1
            right = 0
        elif len(parts) == 2:
            left = parse_count(parts[0], "window left", 0)
            right = parse_count(parts[1], "window right", 0)
        else:
            sys.exit(f"numpy_reference: bad mask '{spec}' (want window:W or "
                     "window:L:R)")
        return np.broadcast_to((p - left <= j) & (j <= p + right), (n, m))
    if kind not in ("block", "block_causal", "prior_blocks"):
        sys.exit(f"numpy_reference: unknown mask '{spec}'")
    c = parse_count(size, "block size", 1)
    if kind == "block":
        return np.broadcast_to(i // c == j // c, (n, m))
    if kind == "block_causal":
        return np.broadcast_to((i // c == j // c) & (j <= i), (n, m))
    return np.broadcast_to(j // c < i // c, (n, m))


def alibi_default_slopes(h):
    """The ALiBi reference get_slopes for h heads (DESIGN §1.3).

    For h a power of two a_k = 2^(−8(k+1)/h), k = 0..h−1; otherwise the
    slopes of that rule for the largest power of two p ≤ h, then slopes
    0, 2, 4, ... of the rule for 2p until there are h.
    """
    def rule(n):
        return [2.0 ** (-8.0 * (k + 1) / n) for k in range(n)]
    p = 1 << (h.bit_length() - 1)
    if p == h:
        return np.array(rule(h))
    return np.array(rule(p) + rule(2 * p)[0::2][:h - p])


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


def per_head_input(directory, name, heads, what):
    array = load(directory, name)
    if array.shape != (heads,):
        sys.exit(f"numpy_reference: {what} input '{name}' has shape "
                 f"{list(array.shape)}, want [{heads}]")
    if not np.all(np.isfinite(array)):
        sys.exit(f"numpy_reference: {what} input '{name}' holds NaN or "
                 "infinity")
    return array


def evaluate_term(directory, term, v):
    """The term's output [B, H, N, E] and, for softmax, lse [B, H, N]."""
    q_name, k_name = term.get("q", "q"), term.get("k", "k")
    q = load(directory, q_name)
    k = load(directory, k_name)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        sys.exit(f"numpy_reference: q '{q_name}' {list(q.shape)}, k "
                 f"'{k_name}' {list(k.shape)} and the value "
                 f"{list(v.shape)} must all have rank 4")
    batch, heads, n, d = q.shape
    kv_heads, m = k.shape[1], k.shape[2]
    if k.shape[0] != batch or k.shape[3] != d:
        sys.exit(f"numpy_reference: k '{k_name}' has shape {list(k.shape)}, "
                 f"want [{batch}, Hkv, M, {d}] for q {list(q.shape)}")
    if v.shape[:3] != k.shape[:3]:
        sys.exit(f"numpy_reference: the value has shape {list(v.shape)}, "
                 f"want [{batch}, {kv_heads}, {m}, E] like k '{k_name}' "
                 f"{list(k.shape)} (k and v disagree)")
    if heads % kv_heads != 0:
        sys.exit(f"numpy_reference: k '{k_name}' has {kv_heads} heads, which "
                 f"does not divide the {heads} heads of q '{q_name}'")
    # Grouped heads (DESIGN §1.3): query head h uses key/value head h // r.
    group = heads // kv_heads
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)

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
    base = mask_matrix(mask, n, mk)
    # allowed[b, 0, i, j]: the mask, then the lengths (DESIGN §1.3).
    allowed = np.broadcast_to(base, (batch, 1, n, mk))
    if "key_lengths" in term:
        key_len = load_lengths(directory, term["key_lengths"], batch)
        allowed = allowed & (np.arange(mk)[None, None, None, :]
                             < key_len[:, None, None, None])
    if "query_lengths" in term:
        query_len = load_lengths(directory, term["query_lengths"], batch)
        allowed = allowed & (np.arange(n)[None, None, :, None]
                             < query_len[:, None, None, None])

    lse = None
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
            if kappa.shape != (batch, heads, m):
                sys.exit(f"numpy_reference: key weight '{term['key_weight']}'"
                         f" has shape {list(kappa.shape)}, want "
                         f"[{batch}, {heads}, {m}]")
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
            w = w * decay_matrix(directory, term["decay"], (batch, heads, n))
    else:
        # The score pipeline (DESIGN §1.3): scale, soft-cap, ALiBi, mask.
        logits = scale * np.einsum("bhnd,bhmd->bhnm", q, keys)
        if "softcap" in term:
            try:
                cap = float(term["softcap"])
            except ValueError:
                cap = float("nan")
            if not (math.isfinite(cap) and cap > 0.0):
                sys.exit(f"numpy_reference: softcap={term['softcap']} is not "
                         "a number > 0")
            logits = cap * np.tanh(logits / cap)
        if "alibi" in term:
            if term["alibi"] == "default":
                slopes = alibi_default_slopes(heads)
            else:
                slopes = per_head_input(directory, term["alibi"], heads,
                                        "alibi")
            p = (mk - n) + np.arange(n)[:, None]
            distance = np.abs(p - np.arange(mk)[None, :]).astype(np.float64)
            logits = logits - slopes[None, :, None, None] * distance
        if score == "softmax":
            masked = np.where(allowed, logits, -np.inf)
            row_max = np.max(masked, axis=-1)                # −inf if empty
            if "sink" in term:
                if normalizer != "rows":
                    sys.exit("numpy_reference: sink= needs normalizer rows")
                sink = per_head_input(directory, term["sink"], heads, "sink")
                row_max = np.maximum(row_max, sink[None, :, None])
            row_max = np.where(np.isfinite(row_max), row_max, 0.0)
            w = np.where(allowed,
                         np.exp(np.minimum(masked - row_max[..., None], 0.0)),
                         0.0)
            total = np.sum(w, axis=-1)
            if "sink" in term:
                total = total + np.exp(sink[None, :, None] - row_max)
            visible = np.broadcast_to(np.any(allowed, axis=-1), total.shape)
            lse = np.where(visible,
                           row_max + np.log(np.where(visible, total, 1.0)),
                           -np.inf)
        else:  # relu2
            w = np.where(allowed, np.maximum(logits, 0.0) ** 2, 0.0)

    count = np.sum(allowed, axis=-1).astype(np.float64)  # [B, 1, N]
    if normalizer == "rows":
        z = np.sum(w, axis=-1) + eps
        if "sink" in term:
            z = z + np.exp(sink[None, :, None] - row_max)
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
    return (np.where(empty[..., None], 0.0, numerator / safe_z[..., None]),
            lse)


def check_lse(path, expected, tol):
    """Compare lse.npy with the float64 lse; −inf entries must match."""
    lse = np.load(path)
    if lse.dtype != np.float32:
        print(f"FAIL: {path} is {lse.dtype}, not float32")
        return False
    if lse.shape != expected.shape:
        print(f"FAIL: {path} has shape {lse.shape}, expected "
              f"{expected.shape}")
        return False
    lse = lse.astype(np.float64)
    if np.any(np.isnan(lse) | (lse == np.inf)):
        print(f"FAIL: {path} holds NaN or +infinity")
        return False
    want_empty = expected == -np.inf
    got_empty = lse == -np.inf
    if np.any(want_empty != got_empty):
        print(f"FAIL: {path} has −inf at {int(np.sum(got_empty))} rows, "
              f"expected {int(np.sum(want_empty))} and "
              f"{int(np.sum(want_empty != got_empty))} differ")
        return False
    finite = ~want_empty
    error = float(np.max(np.abs(lse[finite] - expected[finite]),
                         initial=0.0))
    verdict = "ok" if error < tol else "FAIL"
    print(f"{verdict}: lse max abs error {error:.3g} (tolerance {tol:g}) "
          f"over shape {list(lse.shape)}, {int(np.sum(want_empty))} rows −inf")
    return error < tol


def merge(a_dir, b_dir, full_dir, tol):
    """DESIGN §1.3: merge two key halves by their log-sum-exps."""
    arrays = {}
    for directory in (a_dir, b_dir, full_dir):
        for name in ("out", "lse"):
            path = os.path.join(directory, name + ".npy")
            array = np.load(path)
            if array.dtype != np.float32:
                print(f"FAIL: {path} is {array.dtype}, not float32")
                return 1
            if np.any(np.isnan(array) | (array == np.inf)) or (
                    name == "out" and not np.all(np.isfinite(array))):
                print(f"FAIL: {path} holds NaN or infinity")
                return 1
            arrays[directory, name] = array.astype(np.float64)
    shape = arrays[full_dir, "out"].shape
    for directory in (a_dir, b_dir, full_dir):
        out, lse = arrays[directory, "out"], arrays[directory, "lse"]
        if out.shape != shape or lse.shape != shape[:-1]:
            print(f"FAIL: {directory} has out {list(out.shape)} and lse "
                  f"{list(lse.shape)}, expected {list(shape)} and "
                  f"{list(shape[:-1])}")
            return 1
    lse_a, lse_b = arrays[a_dir, "lse"], arrays[b_dir, "lse"]
    total = np.logaddexp(lse_a, lse_b)                       # −inf if both
    empty = total == -np.inf
    safe = np.where(empty, 0.0, total)
    weight_a = np.where(empty, 0.0, np.exp(lse_a - safe))
    weight_b = np.where(empty, 0.0, np.exp(lse_b - safe))
    out = (weight_a[..., None] * arrays[a_dir, "out"]
           + weight_b[..., None] * arrays[b_dir, "out"])
    full_out, full_lse = arrays[full_dir, "out"], arrays[full_dir, "lse"]
    if np.any(empty != (full_lse == -np.inf)):
        print(f"FAIL: merge gives −inf at {int(np.sum(empty))} rows, "
              f"{full_dir} at {int(np.sum(full_lse == -np.inf))}")
        return 1
    out_error = float(np.max(np.abs(out - full_out), initial=0.0))
    lse_error = float(np.max(np.abs(total[~empty] - full_lse[~empty]),
                             initial=0.0))
    ok = out_error < tol and lse_error < tol
    print(f"{'ok' if ok else 'FAIL'}: merge max abs error {out_error:.3g} on "
          f"out, {lse_error:.3g} on lse (tolerance {tol:g}) over shape "
          f"{list(shape)}, {int(np.sum(empty))} rows −inf")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", nargs="?")
    parser.add_argument("--term", action="append")
    parser.add_argument("--value")
    parser.add_argument("--gate")
    parser.add_argument("--lse", action="store_true")
    parser.add_argument("--merge", nargs=3,
                        metavar=("A_DIR", "B_DIR", "FULL_DIR"))
    parser.add_argument("--tol", type=float, default=1e-4)
    args = parser.parse_args()

    if args.merge:
        if (args.directory or args.term or args.value or args.gate
                or args.lse):
            parser.error("--merge takes only its three directories and --tol")
        return merge(*args.merge, args.tol)
    if not args.directory or not args.term:
        parser.error("need DIR and at least one --term (or --merge)")

    terms = [parse_term(t) for t in args.term]
    if args.lse:
        if len(terms) != 1 or terms[0]["score"] != "softmax" or \
                terms[0].get("normalizer", "rows") != "rows":
            sys.exit("numpy_reference: --lse needs exactly one --term, a "
                     "softmax with normalizer rows")
        if float(terms[0].get("eps", "0")) != 0.0:
            sys.exit("numpy_reference: --lse needs eps=0 (DESIGN §1.3's lse "
                     "has no ε)")

    v = load(args.directory, args.value or "v")
    results = [evaluate_term(args.directory, t, v) for t in terms]
    expected = sum(output for output, _ in results)
    if args.gate:
        gate = load(args.directory, args.gate)
        if gate.shape != expected.shape:
            sys.exit(f"numpy_reference: gate '{args.gate}' has shape "
                     f"{list(gate.shape)}, want {list(expected.shape)}")
        expected = gate * expected

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
    ok = error < args.tol
    if args.lse:
        ok = check_lse(os.path.join(args.directory, "lse.npy"),
                       results[0][1], args.tol) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
