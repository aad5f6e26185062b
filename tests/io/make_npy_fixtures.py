#!/usr/bin/python3
"""Writes the .npy/.npz fixtures of tests/io/data with numpy itself, plus manifest.txt.

Run with Debian's interpreter (numpy is importable there):  /usr/bin/python3 tests/io/make_npy_fixtures.py
Each manifest line:  <file>[:<member>] <dtype name> <shape, comma separated or '-'> <values...>
Numeric values are repr(float(x)) in C order (exact doubles; 'nan', 'inf' allowed); strings are
the hex of their UTF-8 bytes ('-' for an empty string).
"""
import io
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
os.makedirs(OUT, exist_ok=True)
manifest = []

DTYPE_NAMES = {"b": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8",
               "u2": "uint16", "u4": "uint32", "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64"}


def dtype_name(a):
    if a.dtype.kind == "U":
        return "unicode"
    if a.dtype.kind == "S":
        return "bytes"
    if a.dtype.kind == "b":
        return "bool"
    return DTYPE_NAMES[a.dtype.kind + str(a.dtype.itemsize)]


def record(key, a):
    shape = ",".join(str(d) for d in a.shape) or "-"
    flat = np.ascontiguousarray(a).reshape(-1)
    if a.dtype.kind == "U":
        vals = [s.encode("utf-8").hex() or "-" for s in flat]
    elif a.dtype.kind == "S":
        vals = [s.rstrip(b"\0").hex() or "-" for s in flat]
    else:
        vals = [repr(float(x)) for x in flat]
    manifest.append(" ".join([key, dtype_name(a), shape] + vals))


def save_npy(name, a, version=None):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    back = np.load(path)
    assert back.dtype == a.dtype and back.shape == a.shape
    record(name, a)


base = (np.arange(12, dtype=np.float64) * 0.375 - 1.5).reshape(3, 4)
save_npy("v1_f4_c.npy", base.astype(np.float32))
save_npy("v1_f4_fortran.npy", np.asfortranarray(base.astype(np.float32)))
save_npy("v1_f8_fortran_3d.npy", np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7.0))
save_npy("v1_f8.npy", (np.arange(10, dtype=np.float64).reshape(2, 5) - 3.3) / 3.0)
save_npy("v1_f2.npy", np.array([[0.0, -0.0, 1.0], [-2.5, 65504.0, 6e-08], [0.333, np.inf, -np.inf], [1e-4, 3.14159, -7.0]],
                                dtype=np.float16))
save_npy("v1_b1.npy", np.array([[True, False, True], [False, False, True], [True, True, False]]))
save_npy("v1_i4.npy", np.array([[1, -2, 3], [2147483647, -2147483648, 0]], dtype=np.int32))
save_npy("v1_i8.npy", np.array([0, -1, 5, 2**40, -(2**40)], dtype=np.int64))
save_npy("v1_u1.npy", np.array([[0, 1, 255], [7, 128, 9]], dtype=np.uint8))
save_npy("v1_scalar.npy", np.array(2.75))
save_npy("v1_empty.npy", np.zeros((0, 3), dtype=np.float32))
save_npy("v1_1d.npy", np.linspace(0, 1, 5).astype(np.float32))
save_npy("v1_5d.npy", np.arange(12, dtype=np.float32).reshape(1, 2, 1, 3, 2))
save_npy("v1_5d_fortran.npy", np.asfortranarray(np.arange(12, dtype=np.float32).reshape(1, 2, 1, 3, 2) * -0.5))
save_npy("be_f4.npy", base.astype(">f4"))
save_npy("be_i8_fortran.npy", np.asfortranarray(np.array([[1, -2], [3, 2**50]], dtype=">i8")))
save_npy("be_f2.npy", np.array([1.5, -0.25, 1024.0], dtype=">f2"))
save_npy("v2_f4.npy", base.astype(np.float32), version=(2, 0))
save_npy("v3_f8.npy", base, version=(3, 0))
tokens = np.array(["le", "chat", "été", "\U0001F600", "", "日本語"])
save_npy("U_tokens.npy", tokens)
save_npy("be_U.npy", tokens.astype(">U4"))
save_npy("v3_U.npy", tokens, version=(3, 0))
save_npy("S_bytes.npy", np.array([b"ab", b"", b"xyz"]))
save_npy("nan_f4.npy", np.array([1.0, np.nan, np.inf, -np.inf, 0.5], dtype=np.float32))

# npz: np.savez (stored) and np.savez_compressed (deflate), every member force_zip64 (numpy does so).
arrays = {
    "query": (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0) / 3.0,
    "key": np.asfortranarray(np.arange(12, dtype=np.float64).reshape(4, 3) * 0.1),
    "mask": np.array([False, True, False, False]),
    "half": np.array([0.5, -1.0, 2.0], dtype=np.float16),
    "tokens": tokens,
    "ids": np.array([3, 1, 4, 1, 5], dtype=np.int64),
}
for fname, fn in (("savez.npz", np.savez), ("savez_compressed.npz", np.savez_compressed)):
    path = os.path.join(OUT, fname)
    fn(path, **arrays)
    for name, a in arrays.items():
        record(fname + ":" + name, a)

# Zip64 end records and central-directory extras, as numpy produces for arrays above 4 GiB:
# lowering zipfile's limits makes it take exactly those code paths on a small file.
saved = (zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT)
zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 8, 0
try:
    for fname, fn in (("zip64.npz", np.savez), ("zip64_compressed.npz", np.savez_compressed)):
        path = os.path.join(OUT, fname)
        fn(path, query=arrays["query"], tokens=tokens)
        record(fname + ":query", arrays["query"])
        record(fname + ":tokens", tokens)
finally:
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved
with open(os.path.join(OUT, "zip64.npz"), "rb") as f:
    raw = f.read()
assert b"PK\x06\x06" in raw and b"PK\x06\x07" in raw, "expected Zip64 end records"

# Attention files (docs/FORMATS.md): [layers, heads, n_q, n_k] with token arrays, a self-attention
# file with one `tokens` list, and a bare float16 .npy of [heads, n_q, n_k].
rng = np.random.default_rng(7)
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
att = softmax(rng.normal(size=(2, 3, 4, 5))).astype(np.float32)
np.savez_compressed(os.path.join(OUT, "attention_lhqk.npz"), attention=att,
                    source_tokens=np.array(["the", "cat", "sat", "<ü>", "\U0001F431"]),
                    target_tokens=np.array(["le", "chat", "s'est", "assis"]),
                    layer_names=np.array(["enc.0", "enc.1"]), head_names=np.array(["h0", "h1", "h2"]))
record("attention_lhqk.npz:attention", att)
self_att = softmax(rng.normal(size=(3, 3)))
np.savez(os.path.join(OUT, "attention_self.npz"), attention=self_att, tokens=np.array(["a", "b", "c"]))
record("attention_self.npz:attention", self_att)
save_npy("attention_f16.npy", softmax(rng.normal(size=(2, 4, 4))).astype(np.float16))

with open(os.path.join(OUT, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print("wrote %d fixtures to %s" % (len(manifest), OUT))
