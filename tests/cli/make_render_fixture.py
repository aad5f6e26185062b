#!/usr/bin/python3
"""Writes tests/cli/data/translation10.json: a version 2 attention file of a 10-word translation
(encoder self-attention, decoder cross-attention, 2 layers x 2 heads), for render/export tests and
the GIF in docs/. Deterministic: softmax of a near-diagonal alignment plus seeded noise."""
import json
import os

import numpy as np

src = ["▁the", "▁black", "▁cat", "▁sat", "▁on", "▁the", "▁warm", "▁mat", "▁.", "</s>"]
tgt = ["▁le", "▁chat", "▁noir", "▁s'est", "▁assis", "▁sur", "▁le", "▁tapis", "▁chaud", "▁."]
align = [0, 2, 1, 3, 3, 4, 5, 7, 6, 8]  # target word -> source word


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


rng = np.random.default_rng(7)
cross, selfs = [], []
for layer in range(2):
    ch, sh = [], []
    for head in range(2):
        s = rng.normal(0, 0.6, (len(tgt), len(src)))
        for i, j in enumerate(align):
            s[i, j] += 3.0 + layer + head
        ch.append(softmax(s).round(5).tolist())
        e = rng.normal(0, 0.6, (len(src), len(src))) + 2.0 * np.eye(len(src))
        sh.append(softmax(e).round(5).tolist())
    cross.append(ch)
    selfs.append(sh)
doc = {
    "format": "attnviz", "version": 2,
    "sets": [
        {"name": "encoder", "kind": "self", "tokens": src, "weights": selfs},
        {"name": "cross", "kind": "cross", "query_tokens": tgt, "key_tokens": src, "weights": cross},
    ],
    "tokenizer": {"space_marker": "▁"},
    "meta": {"model": "synthetic alignment (tests/cli/make_render_fixture.py)"},
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "translation10.json")
with open(out, "w", encoding="utf-8") as f:
    json.dump(doc, f, ensure_ascii=False)
print("wrote", out)
