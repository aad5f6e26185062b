"""Per-head statistics, as the viewer's grid and `attnviz-cli inspect --heads` compute them
(src/core/head_stats.h): which heads are sharp, which park their attention on the first token,
which look at the previous one.

    for h in attnviz.head_stats(outputs.attentions, tokens=tokens, sort="entropy")[:5]:
        print(h["layer"], h["head"], h["entropy"], h["dominant_offset"])
"""
from __future__ import annotations

import json
import math
import os
import struct
from typing import Any, Dict, List, Optional, Union

import numpy as np

from ._model import as_file

SORTS = ("layer", "entropy", "max_weight", "first_token", "diagonality")
_KEYS = ("rows_counted", "entropy", "entropy_normalized", "max_weight", "first_token", "diagonality",
         "dominant_offset", "dominant_offset_mass")


def _one_head(a: np.ndarray) -> Optional[Dict[str, Any]]:
    """Statistics of weights [n_q, n_k] (float64 sums); None when a weight is not finite."""
    a = np.asarray(a, dtype=np.float64)
    if not np.isfinite(a).all():
        return None
    n_q, n_k = a.shape
    live = np.abs(a).sum(axis=1) != 0  # fully masked queries count in no mean
    rows = int(live.sum())
    out: Dict[str, Any] = {"rows_counted": rows}
    if rows == 0:
        return {**out, "entropy": 0.0, "entropy_normalized": 0.0, "max_weight": 0.0, "first_token": 0.0,
                "diagonality": 0.0, "dominant_offset": 0, "dominant_offset_mass": 0.0}
    p = a[live]
    logs = np.log(np.where(p > 1e-30, p, 1.0))
    h = float(-(np.where(p > 1e-30, p, 0.0) * logs).sum(axis=1).mean())
    i = np.nonzero(live)[0][:, None]
    j = np.arange(n_k)[None, :]
    near = np.where(np.abs(i - j) <= 1, p, 0.0).sum(axis=1)
    mass = np.bincount((i - j + n_k - 1).ravel(), weights=p.ravel(), minlength=n_q + n_k - 1) / rows
    offsets = np.arange(n_q + n_k - 1) - (n_k - 1)
    # the most mass; ties (within 1e-12) to the smallest |offset|, then to the positive one
    best = max(range(len(mass)), key=lambda k: (round(mass[k] / 1e-12), -abs(offsets[k]), offsets[k]))
    return {**out, "entropy": h, "entropy_normalized": h / math.log(n_k) if n_k > 1 else 0.0,
            "max_weight": float(np.maximum(p.max(axis=1), 0).mean()), "first_token": float(p[:, 0].mean()),
            "diagonality": float(near.mean()), "dominant_offset": int(offsets[best]),
            "dominant_offset_mass": float(mass[best])}


def head_stats(data: Any, *, set: Optional[Union[int, str]] = None, sort: str = "layer",
               **kwargs: Any) -> List[Dict[str, Any]]:
    """One dict per head of one attention set: layer, head, entropy (mean row entropy, nats),
    entropy_normalized (over ln n_k), max_weight (mean row maximum), first_token (mean weight on
    key 0), diagonality (mean mass within one position of the diagonal), dominant_offset (the
    diagonal i - j with the most mass: 1 = the previous token) and its mass, rows_counted.

    data: anything show() takes (then kwargs such as tokens= describe it). set: the set's name or
    index (default the first). A path to an attnviz safetensors file that stores its heads'
    statistics (written by save() or SafetensorsWriter, attnviz-cli convert) gives those, read
    without the weights: a 32 GiB model answers at once. sort: layer (default), entropy (lowest first), max_weight,
    first_token or diagonality (highest first), as the grid sorts; heads whose weights are not
    finite have None statistics, and come last with those whose every row is zero.
    """
    if sort not in SORTS:
        raise ValueError(f"sort={sort!r}: one of {', '.join(SORTS)}")
    stored = _stored(data, set) if not kwargs else None
    if stored is not None:
        return _sorted(stored, sort)
    doc = as_file(data, **kwargs)
    names = [s.name for s in doc.sets]
    if set is None:
        s = doc.sets[0]
    elif isinstance(set, int) and 0 <= set < len(doc.sets):
        s = doc.sets[set]
    elif set in names:
        s = doc.sets[names.index(set)]
    else:
        raise ValueError(f"set={set!r} is not in the data (its sets: {', '.join(names)})")
    out = []
    for l, layer in enumerate(s.layers):
        for h in range(layer.shape[0]):
            st = _one_head(layer[h])
            out.append({"layer": l, "head": h, **(st or dict.fromkeys(_KEYS))})
    return _sorted(out, sort)


def _stored(data: Any, set: Optional[Union[int, str]]) -> Optional[List[Dict[str, Any]]]:  # noqa: A002
    """The statistics an attnviz safetensors file stores ("stats.s.l", docs/FORMATS.md) for the set,
    read without its weights (a 32 GiB file answers at once); None when data is not such a file or
    the set's are not all there. A stored row that cannot be a head's statistics gives None values."""
    if not (isinstance(data, str) or hasattr(data, "__fspath__")):
        return None
    from ._safetensors import STATS_COLUMNS, is_safetensors, read_safetensors_header

    path = os.fspath(data)
    try:
        with open(path, "rb") as f:
            first = f.read(16)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return None
    if not is_safetensors(first, size):
        return None
    header = read_safetensors_header(path)
    meta = header.get("__metadata__", {})
    if meta.get("format") != "attnviz" or "sets" not in meta:
        return None
    sets = json.loads(meta["sets"])
    names = [s.get("name") for s in sets]
    if set is None:
        i = 0
    elif isinstance(set, int) and 0 <= set < len(sets):
        i = set
    elif set in names:
        i = names.index(set)
    else:
        raise ValueError(f"set={set!r} is not in the data (its sets: {', '.join(map(str, names))})")
    s = sets[i]
    n_q = len(s.get("tokens") or s.get("query_tokens") or [])
    n_k = len(s.get("tokens") or s.get("key_tokens") or [])
    start = 8 + struct.unpack("<Q", first[:8])[0]
    out = []
    for l in range(int(s.get("layers", 0))):
        t = header.get(f"stats.{i}.{l}")
        if not t or t.get("dtype") != "F32" or len(t.get("shape", [])) != 2 or t["shape"][1] != STATS_COLUMNS:
            return None
        rows = np.fromfile(path, dtype="<f4", count=t["shape"][0] * STATS_COLUMNS,
                           offset=start + t["data_offsets"][0]).reshape(-1, STATS_COLUMNS).astype(np.float64)
        for h, r in enumerate(rows):
            ok = (np.isfinite(r).all() and (r[[2, 3, 4, 6, 7]] >= 0).all() and r[5] == int(r[5]) and
                  -(n_k - 1) <= r[5] <= n_q - 1 and r[7] == int(r[7]) and r[7] <= n_q)  # as HeadStatsFromRow
            st = {"rows_counted": int(r[7]), "entropy": float(r[0]), "entropy_normalized": float(r[1]),
                  "max_weight": float(r[2]), "first_token": float(r[3]), "diagonality": float(r[4]),
                  "dominant_offset": int(r[5]), "dominant_offset_mass": float(r[6])} if ok else dict.fromkeys(_KEYS)
            out.append({"layer": l, "head": h, **st})
    return out


def _sorted(out: List[Dict[str, Any]], sort: str) -> List[Dict[str, Any]]:
    if sort != "layer":
        sign = 1.0 if sort == "entropy" else -1.0
        # heads without statistics (weights not finite, every row zero) last, in layer order
        out.sort(key=lambda r: (not r.get("rows_counted"), sign * (r.get(sort) or 0.0) if r.get("rows_counted") else 0))
    return out
