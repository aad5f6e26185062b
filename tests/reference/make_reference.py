#!/usr/bin/python3
"""Reference data for tests/core: attention computed by numpy (float64) from float32 inputs.

Run with Debian's interpreter (the one that has numpy):
    /usr/bin/python3 tests/reference/make_reference.py
It rewrites tests/reference/data/attention_cases.txt, a plain text file read by
tests/core/reference_reader.h:

    case <name>
    param <key> <value>                 (kind, score, temperature, causal, heads, ...)
    tensor <name> <rows> <cols>         followed by one line of rows*cols values, row-major
    end

Inputs are rounded to float32 before anything is computed, and written with 9 significant
digits, so the C++ side reads exactly the numbers numpy used. -inf is written as "-inf".

What is here:
  * seed002  dot scores of the decoder state [5,1,20] against four annotations
  * seed004  numpy random.seed(42); W_Q, W_K, W_V = randint(3, size=(3,3)) in that order;
             scaled dot self-attention of four words (the 4x3 result depends on numpy's RNG)
  * attend_* random cases for every score function x mask kind x temperature
  * mha_*    torch.nn.MultiheadAttention semantics (batch_first, no batch dim), written out
             in numpy: in_proj [3E,E] + bias, per-head softmax(q k^T / sqrt(hd) + mask) v,
             out_proj, head-averaged weights; bool masks True = not allowed, float masks added.
Fully masked rows: torch would give NaN; attnviz gives zeros and a flag, and so does this file.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "attention_cases.txt")
NEG_INF = -np.inf


def f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def fmt(x):
    if np.isneginf(x):
        return "-inf"
    if np.isposinf(x):
        return "inf"
    return "%.9g" % x


class Writer:
    def __init__(self):
        self.lines = []

    def case(self, name, params, tensors):
        self.lines.append("case %s" % name)
        for k, v in params.items():
            self.lines.append("param %s %s" % (k, v))
        for k, t in tensors.items():
            t = np.atleast_2d(np.asarray(t, dtype=np.float64))
            self.lines.append("tensor %s %d %d" % (k, t.shape[0], t.shape[1]))
            self.lines.append(" ".join(fmt(x) for x in t.ravel()))
        self.lines.append("end")


# ---------------------------------------------------------------------------
# single-head attention in float64
# ---------------------------------------------------------------------------
def raw_scores(score, q, k, extra):
    if score in ("dot", "scaled_dot"):
        return q @ k.T, (1.0 / np.sqrt(k.shape[1]) if score == "scaled_dot" else 1.0)
    if score == "general":
        return q @ extra["W"] @ k.T, 1.0
    if score == "additive":
        pq = q @ extra["W_q"].T  # [n_q, a]
        pk = k @ extra["W_k"].T + extra.get("b", 0.0)  # [n_k, a]
        return np.tanh(pq[:, None, :] + pk[None, :, :]) @ extra["vvec"].ravel(), 1.0
    if score == "cosine":
        qn = np.linalg.norm(q, axis=1, keepdims=True)
        kn = np.linalg.norm(k, axis=1, keepdims=True)
        qu = np.where(qn > 0, q / np.where(qn > 0, qn, 1), 0)
        ku = np.where(kn > 0, k / np.where(kn > 0, kn, 1), 0)
        return qu @ ku.T, 1.0 / extra["cosine_temperature"]
    raise ValueError(score)


def boolean_mask(n_q, n_k, m):
    """True = masked. m holds the optional mask parts of attnviz::AttentionMask."""
    out = np.zeros((n_q, n_k), dtype=bool)
    i = np.arange(n_q)[:, None]
    j = np.arange(n_k)[None, :]
    if "key_lengths" in m:
        lens = np.asarray(m["key_lengths"]).ravel()
        lens = np.repeat(lens, n_q) if lens.size == 1 else lens
        out |= j >= lens[:, None]
    if "key_padding" in m:
        out |= np.asarray(m["key_padding"]).ravel()[None, :] != 0
    if m.get("causal", 0):
        out |= j > i + m.get("causal_offset", 0)
    if m.get("window", -1) >= 0:
        out |= np.abs(i - j) > m["window"]
    if "boolean" in m:
        out |= np.asarray(m["boolean"]) != 0
    return out


def softmax_rows(masked):
    n_q = masked.shape[0]
    weights = np.zeros_like(masked)
    exp = np.zeros_like(masked)
    row_max = np.zeros(n_q)
    row_sum = np.zeros(n_q)
    dead = np.zeros(n_q)
    for r in range(n_q):
        m = masked[r].max()
        if m == NEG_INF:
            dead[r] = 1
            continue
        e = np.exp(masked[r] - m)
        exp[r] = e
        row_max[r] = m
        row_sum[r] = e.sum()
        weights[r] = e / e.sum()
    return weights, exp, row_max, row_sum, dead


def attend(score, q, k, v, temperature, extra, mask):
    raw, fn_scale = raw_scores(score, q, k, extra)
    scaled = raw * fn_scale / temperature
    masked = np.where(boolean_mask(q.shape[0], k.shape[0], mask), NEG_INF, scaled)
    if "additive" in mask:
        masked = masked + mask["additive"]
    weights, exp, row_max, row_sum, dead = softmax_rows(masked)
    return dict(raw=raw, scaled=scaled, masked=masked, exp=exp, row_max=row_max, row_sum=row_sum,
                weights=weights, output=weights @ v, fully_masked=dead)


# ---------------------------------------------------------------------------
# torch.nn.MultiheadAttention semantics
# ---------------------------------------------------------------------------
def mha(query, key, value, h, w_in, b_in, w_out, b_out, key_padding=None, attn_mask_bool=None,
        attn_mask_float=None):
    E = query.shape[1]
    hd = E // h
    q = query @ w_in[:E].T + b_in[:E]
    k = key @ w_in[E:2 * E].T + b_in[E:2 * E]
    v = value @ w_in[2 * E:].T + b_in[2 * E:]
    add = np.zeros((query.shape[0], key.shape[0]))
    if attn_mask_bool is not None:
        add = np.where(attn_mask_bool != 0, NEG_INF, add)
    if attn_mask_float is not None:
        add = add + attn_mask_float
    if key_padding is not None:
        add = np.where(np.asarray(key_padding).ravel()[None, :] != 0, NEG_INF, add)
    heads, outs = [], []
    for i in range(h):
        sl = slice(i * hd, (i + 1) * hd)
        s = (q[:, sl] / np.sqrt(hd)) @ k[:, sl].T + add
        w, _, _, _, dead = softmax_rows(s)
        heads.append(w)
        outs.append(w @ v[:, sl])
    out = np.concatenate(outs, axis=1) @ w_out.T + b_out
    return out, heads, np.mean(heads, axis=0), dead


def main():
    wr = Writer()

    # ---- seed 002 --------------------------------------------------------
    q = f32([[5, 1, 20]])
    ann = f32([[3, 12, 45], [59, 2, 5], [1, 43, 5], [4, 3, 45.3]])
    r = attend("dot", q, ann, ann, 1.0, {}, {})
    wr.case("seed002", {"kind": "attend", "score": "dot", "temperature": 1},
            {"q": q, "k": ann, "v": ann, "expected_raw": r["raw"], "expected_weights": r["weights"],
             "expected_output": r["output"]})

    # ---- seed 004: numpy legacy RNG -----------------------------------------
    words = f32([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    np.random.seed(42)
    W_Q = np.random.randint(3, size=(3, 3))
    W_K = np.random.randint(3, size=(3, 3))
    W_V = np.random.randint(3, size=(3, 3))
    Q, K, V = words @ W_Q, words @ W_K, words @ W_V
    scores = Q @ K.T
    x = scores / K.shape[1] ** 0.5
    e = np.exp(x - x.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)  # scipy.special.softmax(axis=1)
    attention = weights @ V
    wr.case("seed004", {"kind": "attend", "score": "scaled_dot", "temperature": 1},
            {"q": Q, "k": K, "v": V, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "words": words,
             "expected_weights": weights, "expected_output": attention})

    # ---- random single-head cases -------------------------------------------
    rng = np.random.RandomState(2024)
    mask_kinds = ["none", "lengths", "padding", "causal", "window", "boolean", "additive", "combined"]
    temperatures = [1.0, 0.5, 2.5]
    for fi, score in enumerate(["dot", "scaled_dot", "general", "additive", "cosine"]):
        for mi, mk in enumerate(mask_kinds):
            n_q, n_k = rng.randint(3, 8), rng.randint(4, 10)
            d_q = rng.randint(2, 7)
            d_k = d_q if score in ("dot", "scaled_dot", "cosine") else rng.randint(2, 7)
            d_v = rng.randint(1, 6)
            q = f32(rng.uniform(-1.5, 1.5, (n_q, d_q)))
            k = f32(rng.uniform(-1.5, 1.5, (n_k, d_k)))
            v = f32(rng.uniform(-2, 2, (n_k, d_v)))
            if score == "cosine":
                q[0] = 0.0  # a zero query: cosine score 0 by definition
            T = temperatures[(fi + mi) % 3]
            extra, tensors = {}, {}
            params = {"kind": "attend", "score": score, "temperature": fmt(f32(T))}
            if score == "general":
                extra["W"] = f32(rng.uniform(-1, 1, (d_q, d_k)))
                tensors["W"] = extra["W"]
            if score == "additive":
                a = rng.randint(2, 6)
                extra["W_q"] = f32(rng.uniform(-1, 1, (a, d_q)))
                extra["W_k"] = f32(rng.uniform(-1, 1, (a, d_k)))
                extra["vvec"] = f32(rng.uniform(-1, 1, (1, a)))
                tensors.update(W_q=extra["W_q"], W_k=extra["W_k"], vvec=extra["vvec"])
                if mi % 2 == 0:
                    extra["b"] = f32(rng.uniform(-0.5, 0.5, (a,)))
                    tensors["b"] = extra["b"][None, :]
            if score == "cosine":
                ct = f32(0.2)
                extra["cosine_temperature"] = float(ct)
                params["cosine_temperature"] = fmt(ct)
            mask = {}
            if mk in ("lengths", "combined"):
                mask["key_lengths"] = rng.randint(1, n_k + 1, (1, n_q))
                if mk == "lengths":
                    mask["key_lengths"][0, 1] = 0  # one fully masked row
            if mk in ("padding", "combined"):
                mask["key_padding"] = (rng.uniform(size=(1, n_k)) < 0.3).astype(float)
                mask["key_padding"][0, 0] = 0
            if mk in ("causal", "combined"):
                mask["causal"] = 1
                mask["causal_offset"] = int(rng.randint(0, 3)) if mk == "causal" else 1
                params["causal"] = 1
                params["causal_offset"] = mask["causal_offset"]
            if mk == "window":
                mask["window"] = 1
                params["window"] = 1
            if mk == "boolean":
                b = (rng.uniform(size=(n_q, n_k)) < 0.4).astype(float)
                b[:, 0] = 0
                b[n_q - 1, :] = 1  # fully masked row
                mask["boolean"] = b
            if mk in ("additive", "combined"):
                add = f32(rng.uniform(-2, 1, (n_q, n_k)))
                add[rng.uniform(size=(n_q, n_k)) < 0.2] = NEG_INF
                add[:, 0] = 0.0
                mask["additive"] = add
            for key in ("key_lengths", "key_padding", "boolean", "additive"):
                if key in mask:
                    tensors[key] = mask[key]
            r = attend(score, q, k, v, float(f32(T)), extra, mask)
            tensors.update(q=q, k=k, v=v)
            for key in ("raw", "scaled", "masked", "exp", "weights", "output", "row_max", "row_sum",
                        "fully_masked"):
                tensors["expected_" + key] = r[key]
            wr.case("attend_%s_%s" % (score, mk), params, tensors)

    # ---- multi-head (torch semantics) ---------------------------------------
    mha_cases = [("mha_e8_h2", 8, 2, 5, 5, "none", True),
                 ("mha_e12_h3_cross", 12, 3, 4, 7, "padding", True),
                 ("mha_e8_h4_bool", 8, 4, 6, 6, "bool", True),
                 ("mha_e6_h1_float", 6, 1, 3, 5, "float", False),
                 ("mha_e16_h4_both", 16, 4, 7, 9, "padding+bool", True)]
    for name, E, h, n_q, n_k, mk, bias in mha_cases:
        query = f32(rng.uniform(-1, 1, (n_q, E)))
        key = f32(rng.uniform(-1, 1, (n_k, E)))
        value = f32(rng.uniform(-1, 1, (n_k, E)))
        w_in = f32(rng.uniform(-0.6, 0.6, (3 * E, E)))
        w_out = f32(rng.uniform(-0.6, 0.6, (E, E)))
        b_in = f32(rng.uniform(-0.2, 0.2, (3 * E,))) if bias else np.zeros(3 * E)
        b_out = f32(rng.uniform(-0.2, 0.2, (E,))) if bias else np.zeros(E)
        kp = bm = fm = None
        if "padding" in mk:
            kp = np.zeros((1, n_k))
            kp[0, n_k - 2:] = 1
        if "bool" in mk:
            bm = (rng.uniform(size=(n_q, n_k)) < 0.3).astype(float)
            bm[:, 0] = 0
        if mk == "float":
            fm = f32(rng.uniform(-1.5, 0.5, (n_q, n_k)))
        out, heads, mean, dead = mha(query, key, value, h, w_in, b_in, w_out, b_out, kp, bm, fm)
        tensors = {"query": query, "key": key, "value": value, "in_proj_weight": w_in,
                   "out_proj_weight": w_out}
        if bias:
            tensors["in_proj_bias"] = b_in[None, :]
            tensors["out_proj_bias"] = b_out[None, :]
        if kp is not None:
            tensors["key_padding"] = kp
        if bm is not None:
            tensors["boolean"] = bm
        if fm is not None:
            tensors["additive"] = fm
        tensors["expected_output"] = out
        tensors["expected_mean_weights"] = mean
        for i, w in enumerate(heads):
            tensors["expected_head%d" % i] = w
        wr.case(name, {"kind": "mha", "heads": h}, tensors)

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("# generated by tests/reference/make_reference.py (numpy %s); do not edit\n" % np.__version__)
        f.write("\n".join(wr.lines) + "\n")
    print("wrote %s (%d cases, %d bytes)" % (OUT, sum(1 for l in wr.lines if l.startswith("case ")),
                                             os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
