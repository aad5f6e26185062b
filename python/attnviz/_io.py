"""Attention files in and out: JSON and NPZ, versions 1 and 2, and BertViz's data (docs/FORMATS.md).

save()/encode() write version 2 by default (version 1 holds a single set). load()/decode() read
everything the C++ reader (src/io/attention_sets.cpp) reads, with the same rules and defaults:
version 1 and 2 JSON, BertViz's {"attention": [...]} data or its bare list, version 1 and 2
NPZ, `attnviz-cli attend` output and bare .npy arrays.
"""
from __future__ import annotations

import io
import json
import os
import warnings
import zipfile
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from ._model import (AttentionFile, AttentionSet, AttentionWarning, as_file, index_tokens, json_safe,
                     normalize_tokenizer, token_list)

PathLike = Union[str, "os.PathLike[str]"]

# A version 1 file has no place for a set's name, kind or the tokenizer; they travel in its
# meta under this key and load() puts them back.
V1_SET_KEY = "attnviz_set"


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------
def save(path: PathLike, data: Any, *, version: int = 2, format: Optional[str] = None,
         compressed: bool = True, **kwargs: Any) -> str:
    """Writes an attention file; the format follows the extension (.json, .npz) unless given.

    data: an AttentionFile, AttentionSet, list of sets, capture, or an array of weights (then
    kwargs such as tokens=, query_tokens=, key_tokens=, name=, kind= describe it).
    format "safetensors" (or a .safetensors path): the layout the viewer reads lazily, head by head,
    for big models; data may also be a list of per-layer weights (transformers' outputs.attentions),
    written one layer at a time; dtype="f16" (default), "bf16" or "f32". See SafetensorsWriter.
    version: 2 (sets, kinds, tokenizer) or 1 (one set; what older viewers read).
    Returns the path written.
    """
    path = os.fspath(path)
    format = format or _format_from_name(path)
    if format == "safetensors":  # streamed layer by layer (attnviz._safetensors)
        from ._safetensors import save_safetensors

        return save_safetensors(path, data, **kwargs)
    body = encode(data, format=format, version=version, compressed=compressed, **kwargs)
    with open(path, "wb") as f:
        f.write(body)
    return path


def encode(data: Any, format: str = "json", version: int = 2, compressed: bool = True, **kwargs: Any) -> bytes:
    """The bytes save() would write: format "json" or "npz", version 1 or 2."""
    doc = as_file(data, **kwargs)
    if version not in (1, 2):
        raise ValueError(f"version must be 1 or 2, got {version!r}")
    if format not in ("json", "npz"):
        raise ValueError(f"format must be 'json' or 'npz', got {format!r}")
    if version == 1 and len(doc.sets) != 1:
        raise ValueError(f"version 1 holds one attention set; this file has {len(doc.sets)} "
                         f"({', '.join(s.name for s in doc.sets)}): write version 2, or pick one set")
    if format == "json":
        text = _json_v1(doc) if version == 1 else _json_v2(doc)
        return text.encode("utf-8")
    arrays = _npz_v1(doc) if version == 1 else _npz_v2(doc)
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _format_from_name(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext in (".json", ".npz", ".safetensors"):
        return ext[1:]
    raise ValueError(f"{path}: cannot tell the format from the extension '{ext}'; "
                     "use .json, .npz or .safetensors, or pass format='json' / 'npz' / 'safetensors'")


def _v1_meta(doc: AttentionFile) -> Dict[str, Any]:
    meta = json_safe(doc.meta)
    s = doc.sets[0]
    extra: Dict[str, Any] = {}
    if s.name != "attention":
        extra["name"] = s.name
    default_kind = "self" if s.query_tokens == s.key_tokens else "cross"
    if s.kind != default_kind:
        extra["kind"] = s.kind
    if doc.tokenizer:
        extra["tokenizer"] = json_safe(doc.tokenizer, "tokenizer")
    if extra:
        meta[V1_SET_KEY] = extra
    return meta


def _num(x: np.float32) -> str:
    return str(x)  # numpy prints the shortest text that reads back to the same float32


def _matrix(m: np.ndarray, indent: str) -> str:
    rows = ["[" + ",".join(map(_num, row)) + "]" for row in m]
    return "[" + (",\n" + indent + " ").join(rows) + "]"


def _dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


def _json_v1(doc: AttentionFile) -> str:
    s = doc.sets[0]
    out = ['{"format": "attnviz", "version": 1,']
    if s.tokens is not None:
        out.append(f' "tokens": {_dumps(s.tokens)},')
    else:
        out.append(f' "source_tokens": {_dumps(s.key_tokens)},')
        out.append(f' "target_tokens": {_dumps(s.query_tokens)},')
    out.append(' "layers": [')
    out.append(",\n".join(_layer_json(s, l, "  ") for l in range(s.n_layers)))
    meta = _v1_meta(doc)
    out.append(" ]" + (f',\n "meta": {_dumps(meta)}' if meta else "") + "\n}\n")
    return "\n".join(out)


def _layer_json(s: AttentionSet, l: int, pad: str) -> str:
    heads = []
    for h in range(s.heads_per_layer[l]):
        w = _matrix(s.layers[l][h], pad + "   ")
        heads.append(f'{pad} {{"name": {_dumps(s.head_names[l][h])}, "weights": {w}}}')
    return f'{pad}{{"name": {_dumps(s.layer_names[l])}, "heads": [\n' + ",\n".join(heads) + f"\n{pad}]}}"


def _json_v2(doc: AttentionFile) -> str:
    out = ['{"format": "attnviz", "version": 2,']
    if doc.tokenizer:
        out.append(f' "tokenizer": {_dumps(json_safe(doc.tokenizer, "tokenizer"))},')
    out.append(' "sets": [')
    out.append(",\n".join(_set_json(s) for s in doc.sets))
    meta = json_safe(doc.meta)
    out.append(" ]" + (f',\n "meta": {_dumps(meta)}' if meta else "") + "\n}\n")
    return "\n".join(out)


def _set_json(s: AttentionSet) -> str:
    head = f'  {{"name": {_dumps(s.name)}, "kind": "{s.kind}", '
    if s.tokens is not None:
        head += f'"tokens": {_dumps(s.tokens)},\n'
    else:
        head += f'"query_tokens": {_dumps(s.query_tokens)},\n   "key_tokens": {_dumps(s.key_tokens)},\n'
    head += f'   "layer_names": {_dumps(s.layer_names)},\n'
    shared = s.shared_head_names()
    if s.uniform and shared is not None:
        head += f'   "head_names": {_dumps(shared)},\n'
        layers = []
        for l in range(s.n_layers):
            heads = [_matrix(s.layers[l][h], "      ") for h in range(s.heads_per_layer[l])]
            layers.append("    [" + ",\n     ".join(heads) + "]")
        return head + '   "weights": [\n' + ",\n".join(layers) + "\n   ]}"
    layers = ",\n".join(_layer_json(s, l, "    ") for l in range(s.n_layers))
    return head + '   "layers": [\n' + layers + "\n   ]}"


def _strings(tokens: List[str]) -> np.ndarray:
    return np.array(tokens, dtype=np.str_)


def _npz_v1(doc: AttentionFile) -> Dict[str, np.ndarray]:
    s = doc.sets[0]
    arrays = {"attention": _npz_weights(s)}
    if s.tokens is not None:
        arrays["tokens"] = _strings(s.tokens)
    else:
        arrays["source_tokens"] = _strings(s.key_tokens)
        arrays["target_tokens"] = _strings(s.query_tokens)
    arrays["layer_names"] = _strings(s.layer_names)
    shared = s.shared_head_names()
    if shared is not None:
        arrays["head_names"] = _strings(shared)
    meta = _v1_meta(doc)
    if meta:
        arrays["meta_json"] = np.array(_dumps(meta))  # not in version 1; the C++ reader ignores it
    return arrays


def _npz_weights(s: AttentionSet) -> np.ndarray:
    if not s.uniform:
        raise ValueError(f"set '{s.name}': NPZ holds one [layers, heads, n_q, n_k] array per set, but its layers "
                         f"have {s.heads_per_layer} heads; save it as JSON")
    if s.shared_head_names() is None:
        warnings.warn(f"set '{s.name}': head names differ between layers; NPZ keeps none of them (JSON keeps them)",
                      AttentionWarning, stacklevel=4)
    return s.weights


def _npz_v2(doc: AttentionFile) -> Dict[str, np.ndarray]:
    arrays: Dict[str, np.ndarray] = {
        "attnviz_version": np.array(2, dtype=np.int64),
        "set_names": _strings([s.name for s in doc.sets]),
        "set_kinds": _strings([s.kind for s in doc.sets]),
    }
    for i, s in enumerate(doc.sets):
        p = f"set{i}_"
        arrays[p + "attention"] = _npz_weights(s)
        if s.tokens is not None:
            arrays[p + "tokens"] = _strings(s.tokens)
        else:
            arrays[p + "query_tokens"] = _strings(s.query_tokens)
            arrays[p + "key_tokens"] = _strings(s.key_tokens)
        arrays[p + "layer_names"] = _strings(s.layer_names)
        shared = s.shared_head_names()
        if shared is not None:
            arrays[p + "head_names"] = _strings(shared)
    meta = json_safe(doc.meta)
    if meta:
        arrays["meta_json"] = np.array(_dumps(meta))
    if doc.tokenizer:
        arrays["tokenizer_json"] = np.array(_dumps(json_safe(doc.tokenizer, "tokenizer")))
    return arrays


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------
def load(source: Union[PathLike, bytes, Any]) -> AttentionFile:
    """Reads an attention file (path, bytes or a binary file object); the format is sniffed.

    Raises ValueError with the reason (naming the set, layer, head, row or column) when the
    file is malformed. Non-fatal findings are in .warnings and are also emitted as
    AttentionWarnings.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        data = source.read()
    else:
        with open(os.fspath(source), "rb") as f:
            data = f.read()
    doc = decode(data)
    doc.warn()
    return doc


def decode(data: bytes) -> AttentionFile:
    """load() on bytes, without emitting the warnings."""
    if not data:
        raise ValueError("attention: the file is empty")
    if data[:6] == b"\x93NUMPY" or data[:2] == b"PK":
        return _read_npz(data)
    from ._safetensors import decode_safetensors, is_safetensors

    if is_safetensors(data[:16], len(data)):
        return decode_safetensors(data)
    try:
        text = data.decode("utf-8-sig")  # an optional BOM is dropped
    except UnicodeDecodeError as e:
        raise ValueError(f"attention: the file is neither NPZ/NPY nor UTF-8 JSON ({e})") from None
    stripped = text.lstrip(" \t\r\n")
    if not stripped or stripped[0] not in "{[":
        raise ValueError("attention: unrecognised file: expected JSON ('{'), NPZ ('PK') or NPY ('\\x93NUMPY')")
    root = _parse_json(text)
    if _bertviz_list(root) is not None:
        return _read_bertviz(_bertviz_list(root))
    if isinstance(root, dict) and ("sets" in root or root.get("version") == 2):
        return _read_json_v2(root)
    return _read_json_v1(root)


def _reject_constant(name: str) -> None:
    raise ValueError(f"attention json: {name} is not valid JSON (NaN and Infinity are not valid JSON numbers)")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"attention json: {e}") from None


# ---- JSON pieces ---------------------------------------------------------------------------
def _json_tokens(v: Any, key: str) -> List[str]:
    if not isinstance(v, list):
        raise ValueError(f'attention json: "{key}" must be an array of strings')
    if v and all(type(t) in (int, float) for t in v):  # token ids, kept as text
        return [str(int(t)) if float(t).is_integer() else repr(t) for t in v]
    for i, t in enumerate(v):
        if not isinstance(t, str):
            raise ValueError(f'attention json: "{key}"[{i}] is a {_json_type(t)}, expected a string')
    return token_list(v, key)


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(v), type(v).__name__)


def _json_matrix(v: Any, where: str) -> np.ndarray:
    if not isinstance(v, list) or (v and not isinstance(v[0], list)):
        raise ValueError(f'attention json: {where}: "weights" must be an array of rows (arrays of numbers)')
    cols = None
    for i, row in enumerate(v):
        if not isinstance(row, list) or not all(type(x) is float or type(x) is int for x in row):
            raise ValueError(f"attention json: {where}: row {i} must be an array of numbers "
                             "(null, strings, NaN are not allowed)")
        if cols is None:
            cols = len(row)
        elif len(row) != cols:
            raise ValueError(f"attention json: {where}: row {i} has {len(row)} values, row 0 has {cols}")
    try:
        return np.array(v, dtype=np.float64).reshape(len(v), cols or 0)
    except OverflowError:
        raise ValueError(f"attention json: {where}: number out of range") from None


def _json_head(h: Any, where: str, index: int) -> Tuple[str, np.ndarray]:
    if isinstance(h, list):  # a bare matrix is an unnamed head
        return f"head {index}", _json_matrix(h, where)
    if not isinstance(h, dict):
        raise ValueError(f'attention json: {where} must be an object with "weights"')
    name = h.get("name")
    if "weights" not in h:
        raise ValueError(f'attention json: {where} has no "weights"')
    return (name if isinstance(name, str) else f"head {index}"), _json_matrix(h["weights"], where)


class _Layers:
    """Layers read from a file: per layer a name and its heads' names and matrices."""

    def __init__(self) -> None:
        self.names: List[str] = []
        self.head_names: List[List[str]] = []
        self.heads: List[List[np.ndarray]] = []

    def add(self, name: str, heads: List[Tuple[str, np.ndarray]]) -> None:
        self.names.append(name)
        self.head_names.append([h[0] for h in heads])
        self.heads.append([h[1] for h in heads])

    def first_shape(self) -> Tuple[int, int]:
        return self.heads[0][0].shape if self.heads and self.heads[0] else (0, 0)

    def to_set(self, name: str, kind: Optional[str], q: List[str], k: List[str]) -> AttentionSet:
        where = f"set '{name}'"
        if not self.heads:
            raise ValueError(f"attention: {where} has no layers")
        for l, heads in enumerate(self.heads):
            if not heads:
                raise ValueError(f"attention: {where} layer {l} ('{self.names[l]}') has no heads")
            for h, m in enumerate(heads):
                if m.shape != (len(q), len(k)):
                    raise ValueError(
                        f"attention: {where} layer {l} ('{self.names[l]}') head {h} ('{self.head_names[l][h]}') "
                        f"has weights [{m.shape[0]}, {m.shape[1]}] but there are {len(q)} query tokens (rows) "
                        f"and {len(k)} key tokens (columns)")
        return AttentionSet([np.stack(h) for h in self.heads], query_tokens=q, key_tokens=k, name=name, kind=kind,
                            layer_names=self.names, head_names=self.head_names)


def _json_layers(layers: Any) -> _Layers:
    if not isinstance(layers, list):
        raise ValueError('attention json: "layers" must be an array of objects')
    out = _Layers()
    for l, lv in enumerate(layers):
        where = f"layers[{l}]"
        if not isinstance(lv, dict):
            raise ValueError(f'attention json: {where} must be an object with "heads"')
        heads = lv.get("heads")
        if not isinstance(heads, list) or (heads and not isinstance(heads[0], (dict, list))):
            raise ValueError(f'attention json: {where} needs "heads": an array of {{"name", "weights"}}')
        name = lv.get("name")
        out.add(name if isinstance(name, str) else f"layer {l}",
                [_json_head(h, f"{where}.heads[{i}]", i) for i, h in enumerate(heads)])
    return out


def _depth(v: Any) -> int:
    d = 0
    while isinstance(v, list):
        d += 1
        if not v:
            break
        v = v[0]
    return d


def _json_nested(w: Any, where: str) -> _Layers:
    """[layers][heads][n_q][n_k], [heads][n_q][n_k] or [n_q][n_k]."""
    depth = _depth(w)
    if depth < 2 or depth > 4:
        raise ValueError(f'attention json: {where}: "weights" must be nested [layers][heads][n_q][n_k] '
                         "(or 3-D, 2-D) arrays")
    layers = w if depth == 4 else [w]
    out = _Layers()
    for l, lv in enumerate(layers):
        heads = lv if depth >= 3 else [lv]
        if not isinstance(heads, list):
            raise ValueError(f"attention json: {where}: layer {l} must be an array of heads")
        out.add(f"layer {l}", [(f"head {h}", _json_matrix(m, f"{where}.weights[{l}][{h}]"))
                               for h, m in enumerate(heads)])
    return out


def _json_names(v: Any, key: str, count: int) -> Optional[List[str]]:
    if v is None:
        return None
    names = _json_tokens(v, key)
    if len(names) != count:
        raise ValueError(f'attention json: "{key}" has {len(names)} names, expected {count}')
    return names


def _meta(root: Dict[str, Any]) -> Dict[str, Any]:
    meta = root.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise ValueError('attention json: "meta" must be an object')
    return dict(meta or {})


def _read_json_v1(root: Any) -> AttentionFile:
    if not isinstance(root, dict):
        raise ValueError(f"attention json: the top level must be an object, got {_json_type(root)}")
    if "format" in root and root["format"] != "attnviz":
        raise ValueError('attention json: "format" must be "attnviz"')
    if "version" in root:
        v = root["version"]
        if type(v) not in (int, float):
            raise ValueError('attention json: "version" must be a number')
        if v != 1:
            raise ValueError(f"attention json: version {v} is not supported (this reader reads versions 1 and 2)")
    tokens, src, tgt = root.get("tokens"), root.get("source_tokens"), root.get("target_tokens")
    if tokens is not None and (src is not None or tgt is not None):
        raise ValueError('attention json: give either "tokens" or "source_tokens"/"target_tokens", not both')
    if "layers" in root:
        layers = _json_layers(root["layers"])
    elif "weights" in root:  # shorthand: one matrix
        layers = _Layers()
        layers.add("layer 0", [_json_head(root["weights"], "weights", 0)])
    else:
        raise ValueError('attention json: no "layers" (or "weights") found')
    meta = _meta(root)
    warn: List[str] = []
    n_q, n_k = layers.first_shape()
    if tokens is not None:
        q = k = _json_tokens(tokens, "tokens")
    else:
        k = _json_tokens(src, "source_tokens") if src is not None else _missing(n_k, "source", warn)
        q = _json_tokens(tgt, "target_tokens") if tgt is not None else _missing(n_q, "target", warn)
    return _v1_document(layers, q, k, tokens is not None, meta, warn)


def _missing(n: int, which: str, warn: List[str]) -> List[str]:
    warn.append(f"no {which} tokens given; using indices")
    return index_tokens(n)


def _v1_document(layers: _Layers, q: List[str], k: List[str], self_attention: bool, meta: Dict[str, Any],
                 warn: List[str]) -> AttentionFile:
    extra = meta.pop(V1_SET_KEY, None)
    extra = extra if isinstance(extra, dict) else {}
    name = extra.get("name") if isinstance(extra.get("name"), str) else "attention"
    kind = extra.get("kind") if extra.get("kind") in ("self", "causal", "cross") else None
    if kind is None and self_attention:
        kind = "self"
    s = layers.to_set(name, kind, q, k)
    doc = AttentionFile([s], tokenizer=normalize_tokenizer(extra.get("tokenizer")), meta=meta, version=1)
    doc.warnings[:0] = warn
    return doc


def _set_tokens(sv: Dict[str, Any], q_key: str, k_key: str) -> Tuple[List[str], List[str]]:
    tokens, q, k = sv.get("tokens"), sv.get(q_key), sv.get(k_key)
    if tokens is not None and (q is not None or k is not None):
        raise ValueError(f'give either "tokens" or "{q_key}"/"{k_key}"')
    if tokens is not None:
        t = _json_tokens(tokens, "tokens")
        return t, t
    if q is None or k is None:
        raise ValueError(f'needs "tokens", or "{q_key}" and "{k_key}"')
    return _json_tokens(q, q_key), _json_tokens(k, k_key)


def _read_json_v2(root: Dict[str, Any]) -> AttentionFile:
    sets = root.get("sets")
    if not isinstance(sets, list) or not sets:
        raise ValueError('attention json: version 2 needs "sets": a non-empty array of attention sets')
    if "format" in root and root["format"] != "attnviz":
        raise ValueError('attention json: "format" must be "attnviz"')
    out = []
    for i, sv in enumerate(sets):
        where = f"sets[{i}]"
        if not isinstance(sv, dict):
            raise ValueError(f"attention json: {where} must be an object")
        name = sv["name"] if isinstance(sv.get("name"), str) else f"set {i}"
        try:
            q, k = _set_tokens(sv, "query_tokens", "key_tokens")
            if "weights" in sv:
                layers = _json_nested(sv["weights"], where)
            elif "layers" in sv:
                layers = _json_layers(sv["layers"])
            else:
                raise ValueError(f'{where}: needs "weights" or "layers"')
        except ValueError as e:
            raise ValueError(f"attention json: {where} ('{name}'): {_strip(e)}") from None
        names = _json_names(sv.get("layer_names"), "layer_names", len(layers.names))
        if names:
            layers.names = names
        heads = _json_names(sv.get("head_names"), "head_names", len(layers.heads[0]))
        if heads:
            layers.head_names = [heads[:len(h)] + hn[len(heads):] for h, hn in zip(layers.heads, layers.head_names)]
        kind = sv.get("kind")
        if kind is not None and kind not in ("self", "causal", "cross"):
            raise ValueError(f'attention json: {where}: "kind" must be "self", "causal" or "cross"')
        out.append(layers.to_set(name, kind, q, k))
    tokenizer = root.get("tokenizer")
    if tokenizer is not None and not isinstance(tokenizer, dict):
        raise ValueError('attention json: "tokenizer" must be an object')
    return AttentionFile(out, tokenizer=normalize_tokenizer(tokenizer), meta=_meta(root), version=2)


def _strip(e: Exception) -> str:
    return str(e).replace("attention json: ", "")


# ---- BertViz -------------------------------------------------------------------------------
BERTVIZ_KINDS = {"Encoder": "self", "Decoder": "causal", "Cross": "cross"}


def _bertviz_list(root: Any) -> Optional[list]:
    """The params object's "attention" list, or the bare list, when it holds BertViz sets."""
    lst = root.get("attention") if isinstance(root, dict) else root
    if isinstance(lst, list) and lst and isinstance(lst[0], dict) and "attn" in lst[0]:
        return lst
    return None


def _read_bertviz(lst: list) -> AttentionFile:
    out = []
    for i, e in enumerate(lst):
        where = f"attention[{i}]"
        if not isinstance(e, dict):
            raise ValueError(f'bertviz: {where} must be an object with "attn"')
        name = e["name"] if isinstance(e.get("name"), str) else ("attention" if i == 0 else f"set {i}")
        try:
            q, k = _set_tokens(e, "left_text", "right_text")
            if "attn" not in e:
                raise ValueError('needs "attn": [layers][heads][queries][keys]')
            layers = _json_nested(e["attn"], "attn")
        except ValueError as err:
            raise ValueError(f"bertviz: {where} ('{name}'): {_strip(err)}") from None
        out.append(layers.to_set(name, BERTVIZ_KINDS.get(name), q, k))
    return AttentionFile(out, version=0)


# ---- NPZ -----------------------------------------------------------------------------------
def _read_npz(data: bytes) -> AttentionFile:
    try:
        if data[:6] == b"\x93NUMPY":
            arrays = {"attention": np.load(io.BytesIO(data), allow_pickle=False)}
        else:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                arrays = {name: z[name] for name in z.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"attention npz: cannot read the file ({e})") from None
    if "attnviz_version" in arrays:
        return _read_npz_v2(arrays)
    return _read_npz_v1(arrays)


def _npz_tokens(arrays: Dict[str, np.ndarray], name: str) -> Optional[List[str]]:
    a = arrays.get(name)
    if a is None:
        return None
    if a.ndim != 1:
        raise ValueError(f"attention npz: '{name}' must be 1-D, got shape {list(a.shape)}")
    if a.dtype.kind in "US" or (a.dtype.kind in "iu"):
        return token_list(a, name)
    raise ValueError(f"attention npz: '{name}' must be a string array (<U or |S) or integer ids, got {a.dtype.str}")


def _npz_names(arrays: Dict[str, np.ndarray], name: str, count: int) -> Optional[List[str]]:
    a = arrays.get(name)
    if a is None:
        return None
    if a.dtype.kind not in "US":
        raise ValueError(f"attention npz: '{name}' must be strings, got {a.dtype.str}")
    names = token_list(a.reshape(-1), name)
    if len(names) != count:
        raise ValueError(f"attention npz: '{name}' has {len(names)} names, expected {count}")
    return names


def _npz_json(arrays: Dict[str, np.ndarray], name: str) -> Any:
    a = arrays.get(name)
    if a is None:
        return None
    if a.dtype.kind not in "US" or a.size != 1:
        raise ValueError(f"attention npz: '{name}' must hold one JSON string")
    text = a.reshape(-1)[0]
    text = text.decode("utf-8") if isinstance(text, bytes) else str(text)
    try:
        return _parse_json(text)
    except ValueError as e:
        raise ValueError(f"attention npz: '{name}': {_strip(e)}") from None


def _npz_layers(a: np.ndarray, name: str) -> _Layers:
    if a.dtype.kind not in "fiub":
        raise ValueError(f"attention: '{name}' must be a numeric array, got {a.dtype.str}")
    if a.ndim not in (2, 3, 4):
        raise ValueError(f"attention: '{name}' must have shape [layers, heads, n_q, n_k], [heads, n_q, n_k] "
                         f"or [n_q, n_k], got {list(a.shape)}")
    if 0 in a.shape:
        raise ValueError(f"attention: '{name}' is empty {list(a.shape)}")
    a4 = a.reshape((1,) * (4 - a.ndim) + a.shape)
    out = _Layers()
    for l in range(a4.shape[0]):
        out.add(f"layer {l}", [(f"head {h}", a4[l, h]) for h in range(a4.shape[1])])
    return out


def _read_npz_v1(arrays: Dict[str, np.ndarray]) -> AttentionFile:
    used = next((n for n in ("attention", "head_weights", "weights") if n in arrays), None)
    if used is None:
        have = ", ".join(arrays) or "nothing"
        raise ValueError("attention npz: no 'attention' array (also looked for 'head_weights' and 'weights'); "
                         f"the file has: {have}")
    layers = _npz_layers(arrays[used], used)
    tokens, src, tgt = (_npz_tokens(arrays, n) for n in ("tokens", "source_tokens", "target_tokens"))
    if tokens is not None and (src is not None or tgt is not None):
        raise ValueError("attention npz: give either 'tokens' or 'source_tokens'/'target_tokens', not both")
    warn: List[str] = []
    n_q, n_k = layers.first_shape()
    if tokens is not None:
        q = k = tokens
    else:
        k = src if src is not None else _missing(n_k, "source", warn)
        q = tgt if tgt is not None else _missing(n_q, "target", warn)
    names = _npz_names(arrays, "layer_names", len(layers.names))
    if names:
        layers.names = names
    elif used != "attention":
        layers.names[0] = used
    heads = _npz_names(arrays, "head_names", len(layers.heads[0]))
    if heads:
        layers.head_names = [list(heads) for _ in layers.heads]
    meta = _npz_json(arrays, "meta_json")
    return _v1_document(layers, q, k, tokens is not None, meta if isinstance(meta, dict) else {}, warn)


def _read_npz_v2(arrays: Dict[str, np.ndarray]) -> AttentionFile:
    v = arrays["attnviz_version"]
    if v.dtype.kind not in "iuf" or v.size != 1 or float(v.reshape(-1)[0]) != 2:
        raise ValueError("attention npz: attnviz_version must be the number 2 (this reader reads versions 1 and 2)")
    if "set_names" not in arrays:
        raise ValueError("attention npz: version 2 needs 'set_names'")
    a = arrays["set_names"]
    if a.dtype.kind not in "US" or a.size == 0:
        raise ValueError("attention npz: 'set_names' must name at least one set")
    names = token_list(a.reshape(-1), "set_names")
    kinds = _npz_names(arrays, "set_kinds", len(names)) or []
    out = []
    for i, name in enumerate(names):
        p = f"set{i}_"
        if p + "attention" not in arrays:
            raise ValueError(f"attention npz: no '{p}attention' array for set {i}")
        layers = _npz_layers(arrays[p + "attention"], p + "attention")
        tokens = _npz_tokens(arrays, p + "tokens")
        if tokens is not None:
            q = k = tokens
        else:
            q, k = _npz_tokens(arrays, p + "query_tokens"), _npz_tokens(arrays, p + "key_tokens")
            if q is None or k is None:
                raise ValueError(f"attention npz: set {i} needs '{p}tokens' or '{p}query_tokens' and '{p}key_tokens'")
        ln = _npz_names(arrays, p + "layer_names", len(layers.names))
        if ln:
            layers.names = ln
        hn = _npz_names(arrays, p + "head_names", len(layers.heads[0]))
        if hn:
            layers.head_names = [list(hn) for _ in layers.heads]
        kind = kinds[i] if i < len(kinds) else None
        if kind is not None and kind not in ("self", "causal", "cross"):
            raise ValueError(f"attention npz: set_kinds[{i}] = '{kind}' (expected self, causal or cross)")
        out.append(layers.to_set(name, kind, q, k))
    meta = _npz_json(arrays, "meta_json")
    if meta is not None and not isinstance(meta, dict):
        raise ValueError("attention npz: 'meta_json' must hold a JSON object")
    tokenizer = _npz_json(arrays, "tokenizer_json")
    if tokenizer is not None and not isinstance(tokenizer, dict):
        raise ValueError("attention npz: 'tokenizer_json' must hold a JSON object")
    return AttentionFile(out, tokenizer=normalize_tokenizer(tokenizer), meta=meta or {}, version=2)
