#!/usr/bin/env python3
"""Writes the fuzz seeds of fuzz_safetensors (tests/fuzz/seeds/safetensors), standard library only.

    python3 tests/fuzz/make_safetensors_seeds.py

Five small files of the layouts docs/FORMATS.md describes: the attnviz layout (two sets, F16,
with stored head statistics and overviews), a plain 'attention' tensor (F32, tokens in __metadata__), one with
thumbnails and screen copies, BF16
without overviews, and F16 weights that are NaN, infinite or negative.
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "safetensors")
SIZE = {"F16": 2, "BF16": 2, "F32": 4}


def encode(dtype, values):
    if dtype == "F32":
        return struct.pack("<%df" % len(values), *values)
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    return b"".join(struct.pack("<f", v)[2:] for v in values)  # BF16: the top half (truncated)


def write(name, tensors, metadata):
    """tensors: [(name, dtype, shape, values)] in file order."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for tname, dtype, shape, values in tensors:
        raw = encode(dtype, values)
        header[tname] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def softmaxish(n_q, n_k, seed):
    rows = []
    for r in range(n_q):
        row = [float((r * 7 + c * 3 + seed) % 5 + 1) for c in range(n_k)]
        s = sum(row)
        rows += [x / s for x in row]
    return rows


def main():
    os.makedirs(OUT, exist_ok=True)
    sets = [{"name": "encoder", "kind": "self", "tokens": ["a", "b", "c"], "layers": 2,
             "layer_names": ["l0", "l1"], "head_names": ["h0", "h1"]},
            {"name": "cross", "kind": "cross", "query_tokens": ["x", "y"], "key_tokens": ["a", "b", "c"],
             "layers": 1}]
    tensors = []
    stats = [0.9, 0.82, 0.5, 0.3, 0.7, 1.0, 0.4, 3.0]  # entropy, normalized, max, first, diagonality, offset, mass, rows
    for l in range(2):
        tensors.append(("stats.0.%d" % l, "F32", [2, 8], stats * 2))
    tensors.append(("stats.1.0", "F32", [1, 8], stats[:7] + [2.0]))
    for l in range(2):
        tensors.append(("overview.0.%d" % l, "F16", [2, 3, 3], softmaxish(6, 3, l)))
    tensors.append(("overview.1.0", "F16", [1, 2, 3], softmaxish(2, 3, 9)))
    for l in range(2):
        tensors.append(("attention.0.%d" % l, "F16", [2, 3, 3], softmaxish(6, 3, l)))
    tensors.append(("attention.1.0", "F16", [1, 2, 3], softmaxish(2, 3, 9)))
    meta = {"format": "attnviz", "version": "2", "sets": json.dumps(sets),
            "tokenizer": json.dumps({"space_marker": None, "special_tokens": ["c"]}), "meta": "{\"m\":1}"}
    write("attnviz_two_sets.safetensors", tensors, meta)
    write("plain_attention.safetensors", [("attention", "F32", [2, 2, 2, 3], softmaxish(8, 3, 1))],
          {"query_tokens": "[\"q0\",\"q1\"]", "key_tokens": "[\"k0\",\"k1\",\"k2\"]"})
    sets = [{"name": "s", "tokens": ["a", "b", "c"], "layers": 2}]  # thumbnails, overviews and screen copies
    tensors = [("thumb.0.%d" % l, "F32", [1, 1, 2], softmaxish(1, 2, l)) for l in range(2)]
    tensors += [("overview.0.%d" % l, "F16", [1, 2, 2], softmaxish(2, 2, l)) for l in range(2)]
    tensors += [("screen.0.%d" % l, "BF16", [1, 3, 3], softmaxish(3, 3, l)) for l in range(2)]
    tensors += [("attention.0.%d" % l, "F16", [1, 3, 3], softmaxish(3, 3, l)) for l in range(2)]
    write("screen_copies.safetensors", tensors, {"format": "attnviz", "version": "2", "sets": json.dumps(sets)})
    sets = [{"name": "s", "tokens": ["a", "b"], "layers": 1}]
    write("bf16_no_overviews.safetensors", [("attention.0.0", "BF16", [3, 2, 2], softmaxish(6, 2, 4))],
          {"format": "attnviz", "version": "2", "sets": json.dumps(sets)})
    # F16 weights no attention has, among ordinary ones, over more than 8 halves (the decoders' vector
    # steps): NaN, infinities, negatives, -0, a subnormal and the largest half, shown as 0 or kept.
    bad = [float("nan"), float("inf"), float("-inf"), -1.0, -0.0, 2.0 ** -24, 65504.0, 0.25]
    sets = [{"name": "s", "tokens": ["a", "b", "c", "d"], "layers": 1}]
    write("f16_bad_weights.safetensors", [("attention.0.0", "F16", [2, 4, 4], bad + softmaxish(4, 4, 2) + bad[::-1])],
          {"format": "attnviz", "version": "2", "sets": json.dumps(sets)})


if __name__ == "__main__":
    main()
