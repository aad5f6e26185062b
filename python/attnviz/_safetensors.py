"""Attention in the safetensors layout the viewer reads lazily, head by head (docs/FORMATS.md).

    with attnviz.SafetensorsWriter("model.safetensors", tokens=tokens, layers=32, heads=32) as w:
        for l, a in enumerate(outputs.attentions):   # transformers: [batch, heads, n, n] per layer
            w.write_layer(l, a[0])

Each layer is written when it is given, so a model whose attention does not fit in memory at once
can be written as it is computed. The file holds, per set s and layer l, "attention.s.l"
[heads, n_q, n_k] and its max-pooled overview "overview.s.l" [heads, min(n_q, 256), min(n_k, 256)]
(F16 by default); a set with heads over 1024 on a side also gets max-pooled screen copies
"screen.s.l" [heads, min(n_q, 1024), min(n_k, 1024)] (the heatmap draws them zoomed out while the
head is read); a set with heads over 64 on a side gets max-pooled thumbnails "thumb.s.l"
[heads, min(n_q, 64), min(n_k, 64)] (the grid draws them in small cells); every head's statistics "stats.s.l" F32 [heads, 8] (stored_stats: the grid sorts a
1024-head model before reading any head); and the tokens, names and kinds in __metadata__ (format
"attnviz", version "2").
`attnviz-cli convert` writes the same layout (src/io/lazy_attention_write.cpp).
"""
from __future__ import annotations

import json
import math
import os
import struct
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ._model import KINDS, AttentionFile, index_tokens, json_safe, normalize_tokenizer, to_numpy, token_list

OVERVIEW_SIDE = 256
SCREEN_SIDE = 1024
THUMB_SIDE = 64
DTYPES = {"f16": ("F16", 2), "bf16": ("BF16", 2), "f32": ("F32", 4)}


def overview(weights: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """[heads, n_q, n_k] -> [heads, rows, cols]: the largest weight of each block; block r covers
    query rows [r n_q / rows, (r + 1) n_q / rows) (integer division), columns likewise."""
    n_q, n_k = weights.shape[1:]
    r_edges = (np.arange(rows) * n_q) // rows
    c_edges = (np.arange(cols) * n_k) // cols
    return np.maximum.reduceat(np.maximum.reduceat(weights, r_edges, axis=1), c_edges, axis=2)


STATS_COLUMNS = 8  # as kHeadStatsColumns in src/core/head_stats.h
_LN2 = math.log(2.0)


def stored_stats(a: np.ndarray) -> np.ndarray:
    """A head's statistics as stored in "stats.s.l" (src/core/head_stats.h, HeadStatsToRow): float32
    [entropy, entropy_normalized, max_weight, first_token, diagonality, dominant_offset,
    dominant_offset_mass, rows_counted] of weights [n_q, n_k] that are finite and >= 0 (the readers'
    fix-ups done). The same definitions as head_stats() in float32 passes with float64 sums: ~0.2 s for
    a 4096^2 head, where head_stats() takes ~3 s. Computed from the float32 weights given, not their F16
    rounding: a viewer that reads the head computes values within ~1e-4 of these."""
    n_q, n_k = a.shape
    rows = int(np.count_nonzero(a.sum(axis=1, dtype=np.float64)))  # fully masked queries count in no mean
    out = np.zeros(STATS_COLUMNS, np.float32)
    out[7] = rows
    if rows == 0:
        return out
    t = np.maximum(a, np.float32(1e-30))  # p ln p of p <= 1e-30 adds nothing that shows
    np.log2(t, out=t)  # numpy's float32 log2 is vectorized, its log is not (12x slower here)
    t *= a
    entropy = -float(t.sum(dtype=np.float64)) * _LN2 / rows
    near = sum(float(np.trace(a, offset=k, dtype=np.float64)) for k in (-1, 0, 1))
    # Mass by diagonal i - j, a block of rows at a time: the block's rows reversed and shifted one more
    # each (padded with as many zeros as it has rows), so column c of the skewed block holds every
    # a[i, j] with i - j = r0 + c - (n_k - 1). Blocks bound the memory (a whole 32k-token head skewed
    # at once would take 8 GiB).
    mass = np.zeros(n_q + n_k - 1, np.float64)
    block = max(1, min(n_q, 2048, (1 << 22) // (n_k + 256)))  # at most ~4 Mi floats skewed
    for r0 in range(0, n_q, block):
        b = min(block, n_q - r0)
        skew = np.zeros((b, n_k + b), np.float32)
        skew[:, :n_k] = a[r0:r0 + b, ::-1]
        mass[r0:r0 + n_k + b - 1] += skew.ravel()[: b * (n_k + b - 1)].reshape(b, n_k + b - 1).sum(axis=0,
                                                                                                 dtype=np.float64)
    best, best_mass = 0, -1.0
    for idx in np.nonzero(mass > mass.max() - 2e-12)[0]:  # ties as HeadStatsAccumulator::Finish breaks them
        o, m = int(idx) - (n_k - 1), float(mass[idx])
        if m > best_mass + 1e-12 or (abs(m - best_mass) <= 1e-12 and
                                     (abs(o) < abs(best) or (abs(o) == abs(best) and o > best))):
            best, best_mass = o, m
    out[:7] = [entropy, entropy / math.log(n_k) if n_k > 1 else 0.0,
               float(a.max(axis=1).sum(dtype=np.float64)) / rows, float(a[:, 0].sum(dtype=np.float64)) / rows,
               near / rows, best, best_mass / rows]
    return out


def encode(weights: np.ndarray, dtype: str) -> bytes:
    """float32 weights -> little-endian F16 / BF16 / F32 bytes (round to nearest even)."""
    w = np.ascontiguousarray(weights, dtype=np.float32)
    if dtype == "f16":
        return w.astype("<f2").tobytes()
    if dtype == "f32":
        return w.astype("<f4").tobytes()
    bits = w.view(np.uint32).astype(np.uint64)
    nan = np.isnan(w)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded.astype("<u2").tobytes()


class SafetensorsWriter:
    """Writes attention layer by layer into the lazily read safetensors layout.

    One set: tokens (or query_tokens + key_tokens), layers, heads (an int, or one per layer),
    and optionally name, kind, layer_names, head_names. Several sets: sets=[dict(...)] with the
    same keys, and write_layer(l, w, set=i). dtype: "f16" (default), "bf16" or "f32".
    tokenizer, meta: as in save(). Every layer of every set must be written before close().
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, tokens: Optional[Sequence] = None,
                 query_tokens: Optional[Sequence] = None, key_tokens: Optional[Sequence] = None,
                 layers: Optional[int] = None, heads: Union[int, Sequence[int], None] = None,
                 name: str = "attention", kind: Optional[str] = None, layer_names: Optional[Sequence[str]] = None,
                 head_names: Optional[Sequence[str]] = None, sets: Optional[List[Dict[str, Any]]] = None,
                 dtype: str = "f16", tokenizer: Optional[Dict[str, Any]] = None,
                 meta: Optional[Dict[str, Any]] = None):
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be 'f16', 'bf16' or 'f32', got {dtype!r}")
        if sets is None:
            sets = [dict(tokens=tokens, query_tokens=query_tokens, key_tokens=key_tokens, layers=layers, heads=heads,
                         name=name, kind=kind, layer_names=layer_names, head_names=head_names)]
        if not sets:
            raise ValueError("no attention sets to write")
        self.path = os.fspath(path)
        self.dtype = dtype
        self._sets = [self._describe(i, s) for i, s in enumerate(sets)]
        self._written = [[False] * s["layers"] for s in self._sets]
        tag, size = DTYPES[dtype]
        # (name, shape, dtype, item size) in file order: every set's statistics, thumbnails, overviews,
        # screen copies, then the layers (as PlanLazyAttention in src/io/lazy_attention_write.cpp)
        tensors = []
        for i, s in enumerate(self._sets):
            for l in range(s["layers"]):
                tensors.append((f"stats.{i}.{l}", [s["heads"][l], STATS_COLUMNS], "F32", 4))
        for i, s in enumerate(self._sets):
            for l in range(s["layers"] if s["TR"] else 0):
                tensors.append((f"thumb.{i}.{l}", [s["heads"][l], s["TR"], s["TC"]], tag, size))
        for i, s in enumerate(self._sets):
            for l in range(s["layers"]):
                tensors.append((f"overview.{i}.{l}", [s["heads"][l], s["R"], s["C"]], tag, size))
        for i, s in enumerate(self._sets):
            for l in range(s["layers"] if s["SR"] else 0):
                tensors.append((f"screen.{i}.{l}", [s["heads"][l], s["SR"], s["SC"]], tag, size))
        for i, s in enumerate(self._sets):
            for l in range(s["layers"]):
                tensors.append((f"attention.{i}.{l}", [s["heads"][l], s["n_q"], s["n_k"]], tag, size))
        metadata = {"format": "attnviz", "version": "2", "sets": json.dumps([s["meta"] for s in self._sets])}
        tok = normalize_tokenizer(tokenizer)
        if tok:
            metadata["tokenizer"] = json.dumps(tok)
        if meta:
            metadata["meta"] = json.dumps(json_safe(meta), allow_nan=False)
        header: Dict[str, Any] = {"__metadata__": metadata}
        offsets: Dict[str, int] = {}
        at = 0
        for tname, shape, ttag, tsize in tensors:
            nbytes = int(np.prod(shape)) * tsize
            header[tname] = {"dtype": ttag, "shape": shape, "data_offsets": [at, at + nbytes]}
            offsets[tname] = at
            at += nbytes
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        text += b" " * ((8 - len(text) % 8) % 8)
        self._start = 8 + len(text)
        self._offsets = {k: self._start + v for k, v in offsets.items()}
        self.size = self._start + at
        self._f = open(self.path, "wb")
        self._f.write(struct.pack("<Q", len(text)) + text)
        self._f.truncate(self.size)  # unwritten layers are holes until written

    @staticmethod
    def _describe(i: int, s: Dict[str, Any]) -> Dict[str, Any]:
        where = f"set {i}"
        tokens, q, k = s.get("tokens"), s.get("query_tokens"), s.get("key_tokens")
        if tokens is not None and (q is not None or k is not None):
            raise ValueError(f"{where}: give either tokens or query_tokens/key_tokens, not both")
        if tokens is None and (q is None or k is None):
            raise ValueError(f"{where}: needs tokens, or query_tokens and key_tokens (the shape of every head)")
        layers = s.get("layers")
        if not isinstance(layers, int) or layers < 1:
            raise ValueError(f"{where}: layers must be a positive int, got {layers!r}")
        heads = s.get("heads")
        heads = [heads] * layers if isinstance(heads, int) else list(heads or [])
        if len(heads) != layers or any(not isinstance(h, int) or h < 1 for h in heads):
            raise ValueError(f"{where}: heads must be a positive int or one per layer, got {s.get('heads')!r}")
        meta: Dict[str, Any] = {"name": str(s.get("name") or f"set {i}")}
        if tokens is not None:
            qt = kt = token_list(tokens, "tokens")
            meta["tokens"] = qt
        else:
            qt, kt = token_list(q, "query_tokens"), token_list(k, "key_tokens")
            meta["query_tokens"], meta["key_tokens"] = qt, kt
        kind = s.get("kind") or ("self" if qt == kt else "cross")
        if kind not in KINDS:
            raise ValueError(f"{where}: kind must be 'self', 'causal' or 'cross', got {kind!r}")
        meta["kind"] = kind
        meta["layers"] = layers
        if s.get("layer_names") is not None:
            names = token_list(s["layer_names"], "layer_names")
            if len(names) != layers:
                raise ValueError(f"{where}: layer_names has {len(names)} names for {layers} layers")
            meta["layer_names"] = names
        if s.get("head_names") is not None:
            meta["head_names"] = token_list(s["head_names"], "head_names")
        n_q, n_k = len(qt), len(kt)
        screen = n_q > SCREEN_SIDE or n_k > SCREEN_SIDE
        thumb = n_q > THUMB_SIDE or n_k > THUMB_SIDE
        return {"meta": meta, "layers": layers, "heads": heads, "n_q": n_q, "n_k": n_k,
                "R": min(n_q, OVERVIEW_SIDE), "C": min(n_k, OVERVIEW_SIDE),
                "SR": min(n_q, SCREEN_SIDE) if screen else 0, "SC": min(n_k, SCREEN_SIDE) if screen else 0,
                "TR": min(n_q, THUMB_SIDE) if thumb else 0, "TC": min(n_k, THUMB_SIDE) if thumb else 0}

    def write_layer(self, layer: int, weights: Any, set: int = 0) -> None:  # noqa: A002 - the set's index
        """Writes layer `layer` of set `set`: [heads, n_q, n_k] weights (numpy, torch, lists); a
        leading batch dimension of 1 is dropped."""
        if self._f is None:
            raise ValueError("the writer is closed")
        if not 0 <= set < len(self._sets):
            raise ValueError(f"no set {set} (there are {len(self._sets)})")
        s = self._sets[set]
        if not 0 <= layer < s["layers"]:
            raise ValueError(f"set {set}: no layer {layer} (there are {s['layers']})")
        w = to_numpy(weights, f"set {set} layer {layer}")
        if w.ndim == 4 and w.shape[0] == 1:
            w = w[0]
        want = (s["heads"][layer], s["n_q"], s["n_k"])
        if w.shape != want:
            raise ValueError(f"set {set} layer {layer}: weights {list(w.shape)}, expected {list(want)}")
        w = np.ascontiguousarray(w, dtype=np.float32)
        stats = np.stack([stored_stats(np.where(np.isfinite(h) & (h > 0), h, np.float32(0))) for h in w])
        self._f.seek(self._offsets[f"stats.{set}.{layer}"])
        self._f.write(stats.astype("<f4").tobytes())
        clean = np.where(np.isnan(w), 0, w)
        if s["TR"]:
            self._f.seek(self._offsets[f"thumb.{set}.{layer}"])
            self._f.write(encode(overview(clean, s["TR"], s["TC"]), self.dtype))
        self._f.seek(self._offsets[f"overview.{set}.{layer}"])
        self._f.write(encode(overview(clean, s["R"], s["C"]), self.dtype))
        if s["SR"]:
            self._f.seek(self._offsets[f"screen.{set}.{layer}"])
            self._f.write(encode(overview(clean, s["SR"], s["SC"]), self.dtype))
        self._f.seek(self._offsets[f"attention.{set}.{layer}"])
        self._f.write(encode(w, self.dtype))
        self._written[set][layer] = True

    def close(self) -> None:
        """Finishes the file; ValueError (and no file) if a layer was not written."""
        if self._f is None:
            return
        self._f.close()
        self._f = None
        missing = [f"set {i} layer {l}" for i, s in enumerate(self._written) for l, ok in enumerate(s) if not ok]
        if missing:
            os.remove(self.path)
            raise ValueError(f"{self.path}: not every layer was written ({', '.join(missing[:4])}"
                             f"{', ...' if len(missing) > 4 else ''}); the file was removed")

    def __enter__(self) -> "SafetensorsWriter":
        return self

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is None:
            self.close()
        elif self._f is not None:  # an error while writing: no half-written file
            self._f.close()
            self._f = None
            os.remove(self.path)


def save_safetensors(path: str, data: Any, *, dtype: str = "f16", **kwargs: Any) -> str:
    """save(..., format="safetensors"): an AttentionFile-like `data` (see save()), or a list/tuple of
    per-layer weights ([heads, n_q, n_k], or [1, heads, n_q, n_k] as transformers' outputs.attentions),
    written one layer at a time without stacking them."""
    if isinstance(data, (list, tuple)) and data and hasattr(data[0], "shape") and len(data[0].shape) in (3, 4):
        layers = list(data)
        first = to_numpy(layers[0], "layer 0")
        if first.ndim == 4:
            first = first[0]
        heads = kwargs.pop("heads", None)
        tokens = kwargs.get("tokens")
        if tokens is None and kwargs.get("query_tokens") is None:
            kwargs["query_tokens"], kwargs["key_tokens"] = index_tokens(first.shape[1]), index_tokens(first.shape[2])
        with SafetensorsWriter(path, layers=len(layers), heads=heads or first.shape[0], dtype=dtype, **kwargs) as w:
            for l, a in enumerate(layers):
                w.write_layer(l, a)
        return path
    from ._model import as_file

    doc: AttentionFile = as_file(data, **kwargs)
    sets = [dict(name=s.name, kind=s.kind, layers=s.n_layers, heads=s.heads_per_layer, layer_names=s.layer_names,
                 head_names=s.shared_head_names() or s.head_names[0],
                 **({"tokens": s.query_tokens} if s.tokens is not None
                    else {"query_tokens": s.query_tokens, "key_tokens": s.key_tokens}))
            for s in doc.sets]
    with SafetensorsWriter(path, sets=sets, dtype=dtype, tokenizer=doc.tokenizer, meta=doc.meta) as w:
        for i, s in enumerate(doc.sets):
            for l, a in enumerate(s.layers):
                w.write_layer(l, a, set=i)
    return path


def decode_safetensors(data: bytes) -> AttentionFile:
    """Every head of an attnviz safetensors file in memory (it must fit: see attnviz-cli convert)."""
    from ._model import AttentionSet

    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    start = 8 + n
    meta = header.get("__metadata__", {})
    if meta.get("format") != "attnviz" or meta.get("version") != "2":
        raise ValueError("safetensors: not the attnviz layout (__metadata__ format 'attnviz', version '2')")
    types = {"F16": "<f2", "BF16": None, "F32": "<f4", "F64": "<f8"}
    sets = []
    for i, s in enumerate(json.loads(meta["sets"])):
        layers = []
        for l in range(s["layers"]):
            t = header[f"attention.{i}.{l}"]
            a, b = t["data_offsets"]
            raw = np.frombuffer(data, dtype=np.uint8, count=b - a, offset=start + a)
            if t["dtype"] == "BF16":
                w = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
            else:
                w = raw.view(types[t["dtype"]]).astype(np.float32)
            layers.append(w.reshape(t["shape"]))
        tokens = {"tokens": s["tokens"]} if "tokens" in s else {"query_tokens": s["query_tokens"],
                                                                  "key_tokens": s["key_tokens"]}
        sets.append(AttentionSet(layers, name=s.get("name"), kind=s.get("kind"), layer_names=s.get("layer_names"),
                                 head_names=s.get("head_names"), **tokens))
    tokenizer = json.loads(meta["tokenizer"]) if "tokenizer" in meta else None
    return AttentionFile(sets, tokenizer=tokenizer, meta=json.loads(meta["meta"]) if "meta" in meta else None,
                         version=2)


def read_safetensors_header(path: str) -> Dict[str, Any]:
    """The JSON header of a safetensors file (its tensors and __metadata__), without reading the data."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        size = os.fstat(f.fileno()).st_size
        if n > min(size - 8, 100 << 20):
            raise ValueError(f"{path}: not a safetensors file (header length {n})")
        return json.loads(f.read(n))


def is_safetensors(first: bytes, size: int) -> bool:
    """The first bytes look like a safetensors file (as LooksLikeSafetensors in src/io/safetensors.h)."""
    if len(first) < 9 or size < 10 or first[8:9] != b"{":
        return False
    n = struct.unpack("<Q", first[:8])[0]
    return 2 <= n <= size - 8
