#!/usr/bin/python3
"""Inputs and numpy reference outputs for the attnviz-cli tests (tests/cli/data/).

Run with Debian's interpreter:  /usr/bin/python3 tests/cli/make_cli_fixtures.py
For every case NAME it writes NAME.npz (the `attend --in` file) and NAME.expected.npz (output,
weights and, for several heads, head_weights computed here in float64).
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
os.makedirs(OUT, exist_ok=True)


def softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def save(name, inputs, expected):
    np.savez(os.path.join(OUT, name + ".npz"), **inputs)
    np.savez(os.path.join(OUT, name + ".expected.npz"), **expected)


# Seed 002 (decoder state vs four annotations, plain dot scores): weights ~ [0.1192, 0, 0, 0.8808].
dec_hidden_state = np.array([[5, 1, 20]], dtype=np.float64)
annotations = np.array([[3, 12, 45], [59, 2, 5], [1, 43, 5], [4, 3, 45.3]], dtype=np.float64)
w = softmax(dec_hidden_state @ annotations.T)
assert abs(w[0, 0] - 0.1192) < 1e-4 and abs(w[0, 3] - 0.8808) < 1e-4
save("seed002", {"query": dec_hidden_state.astype(np.float32), "key": annotations.astype(np.float32),
                 "value": annotations.astype(np.float32)},
     {"weights": w, "output": w @ annotations})

# Seed 004 (self-attention over four words, integer W_Q/W_K/W_V from np.random.seed(42), scaled dot).
words = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=np.float64)
np.random.seed(42)
W_Q = np.random.randint(3, size=(3, 3))
W_K = np.random.randint(3, size=(3, 3))
W_V = np.random.randint(3, size=(3, 3))
Q, K, V = words @ W_Q, words @ W_K, words @ W_V
w = softmax(Q @ K.T / K.shape[1] ** 0.5, axis=1)
save("seed004", {"query": Q.astype(np.float32), "key": K.astype(np.float32), "value": V.astype(np.float32)},
     {"weights": w, "output": w @ V})
# ... and with a causal mask and temperature 2: softmax((s + mask) / 2)
s = Q @ K.T / K.shape[1] ** 0.5
s[np.triu_indices(4, 1)] = -np.inf
w = softmax(s / 2.0)
np.savez(os.path.join(OUT, "seed004_causal_t2.expected.npz"), weights=w, output=w @ V)

rng = np.random.default_rng(2024)
# general (Luong): s = q W k^T
q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 6)), rng.normal(size=(5, 2))
W = rng.normal(size=(4, 6)) * 0.5
w = softmax(q @ W @ k.T)
save("general", {"query": q, "key": k, "value": v, "W": W}, {"weights": w, "output": w @ v})
# additive (Bahdanau): s = v . tanh(W_q q + W_k k + b), with a key padding mask (last key ignored)
q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 6)), rng.normal(size=(5, 2))
W_q, W_k, va, b = rng.normal(size=(7, 4)), rng.normal(size=(7, 6)), rng.normal(size=7), rng.normal(size=7)
s = np.tanh((q @ W_q.T)[:, None, :] + (k @ W_k.T)[None, :, :] + b) @ va
pad = np.array([False, False, False, False, True])
s[:, pad] = -np.inf
w = softmax(s)
save("additive", {"query": q.astype(np.float32), "key": k.astype(np.float32), "value": v.astype(np.float32),
                  "W_q": W_q, "W_k": W_k, "v": va, "b": b, "key_padding_mask": pad},
     {"weights": w, "output": w @ v})
# cosine: s = cos(q, k) / 0.1 (the core's default cosine_temperature)
q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
cos = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (k / np.linalg.norm(k, axis=1, keepdims=True)).T
w = softmax(cos / 0.1)
save("cosine", {"query": q, "key": k, "value": v}, {"weights": w, "output": w @ v})


def torch_mha(query, key, value, in_w, in_b, out_w, out_b, h, key_padding_mask=None, attn_mask=None):
    """numpy version of torch.nn.functional.multi_head_attention_forward (batch_first, no batch)."""
    E = query.shape[1]
    d = E // h
    q = query @ in_w[:E].T + in_b[:E]
    k = key @ in_w[E:2 * E].T + in_b[E:2 * E]
    v = value @ in_w[2 * E:].T + in_b[2 * E:]
    heads, outs = [], []
    for i in range(h):
        sl = slice(i * d, (i + 1) * d)
        s = q[:, sl] @ k[:, sl].T / np.sqrt(d)
        if attn_mask is not None:
            s = np.where(attn_mask, -np.inf, s) if attn_mask.dtype == bool else s + attn_mask
        if key_padding_mask is not None:
            s[:, key_padding_mask] = -np.inf
        a = softmax(s)
        heads.append(a)
        outs.append(a @ v[:, sl])
    out = np.concatenate(outs, axis=1) @ out_w.T + out_b
    return out, np.mean(heads, axis=0), np.stack(heads)


E, h = 8, 2
query, key = rng.normal(size=(3, E)), rng.normal(size=(5, E))
value = rng.normal(size=(5, E))
in_w, in_b = rng.normal(size=(3 * E, E)) / np.sqrt(E), rng.normal(size=3 * E) * 0.1
out_w, out_b = rng.normal(size=(E, E)) / np.sqrt(E), rng.normal(size=E) * 0.1
params = {"in_proj_weight": in_w, "in_proj_bias": in_b, "out_proj_weight": out_w, "out_proj_bias": out_b}
out, mean_w, head_w = torch_mha(query, key, value, in_w, in_b, out_w, out_b, h)
save("mha", dict(query=query, key=key, value=value, **params), {"output": out, "weights": mean_w, "head_weights": head_w})
# masks: key padding (bool) + a float attn_mask with one -inf and finite biases
kpm = np.array([False, True, False, False, False])
am = rng.normal(size=(3, 5)).astype(np.float32)
am[0, 0] = -np.inf
out, mean_w, head_w = torch_mha(query, key, value, in_w, in_b, out_w, out_b, 4, kpm, am)
save("mha_masked", dict(query=query, key=key, value=value, key_padding_mask=kpm, attn_mask=am, **params),
     {"output": out, "weights": mean_w, "head_weights": head_w})

# bad inputs
np.savez(os.path.join(OUT, "bad_missing_value.npz"), query=query, key=key)
np.savez(os.path.join(OUT, "bad_shapes.npz"), query=np.ones((2, 3)), key=np.ones((4, 5)), value=np.ones((4, 2)))
np.savez(os.path.join(OUT, "bad_nan.npz"), query=np.array([[np.nan, 1.0]]), key=np.ones((2, 2)), value=np.ones((2, 2)))
with open(os.path.join(OUT, "bad_not_npz.npz"), "wb") as f:
    f.write(b"this is not a zip file at all")
print("wrote CLI fixtures to", OUT)
