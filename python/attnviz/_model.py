"""The attention data model: sets of [layers, heads, n_q, n_k] weights with their tokens.

An AttentionFile holds one or more AttentionSets (docs/FORMATS.md, "version 2: attention
sets"), a tokenizer description and free-form meta. Rows are queries (drawn down the left),
columns are keys (drawn along the top). Everything is validated when it is built, with the
rules the C++ reader applies (src/io/attention_file.cpp), so a file that Python writes is a
file the viewer opens.
"""
from __future__ import annotations

import math
import re
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np

KINDS = ("self", "causal", "cross")

# The C++ reader's limits (AttentionFileLimits).
MAX_LAYERS = 1024
MAX_HEADS = 1024
MAX_TOKENS = 65536
MAX_VALUES = 1 << 28
MAX_TOKEN_BYTES = 4096
ROW_SUM_TOLERANCE = 1e-3
NEGATIVE_TOLERANCE = 1e-6
FLOAT32_MAX = float(np.finfo(np.float32).max)


class AttentionWarning(UserWarning):
    """A non-fatal finding, e.g. rows that do not sum to 1 (the viewer shows the file anyway)."""


def to_numpy(x: Any, what: str = "weights") -> np.ndarray:
    """A torch tensor (any device, any float dtype), numpy array or nested list -> numpy array."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor without importing torch
        x = x.detach().cpu()
        if getattr(x, "is_floating_point", lambda: False)():
            x = x.float()  # bfloat16/half have no numpy equivalent worth keeping
        return x.numpy()
    try:
        return np.asarray(x)
    except ValueError as e:  # ragged nested lists
        raise ValueError(f"{what}: not a rectangular array ({e})") from None


def _float_weights(a: np.ndarray, where: str) -> np.ndarray:
    """Checks the dtype and values of weights and returns them as float32 (negative noise clamped)."""
    if a.dtype == np.bool_ or a.dtype.kind not in "fiu":
        raise ValueError(f"{where}: weights must be a float or integer array, got dtype {a.dtype}")
    if a.dtype.kind == "f":  # checked in the given precision, before float32 could round or overflow
        bad = ~np.isfinite(a)
        if bad.any():
            pos = _first(bad)
            raise ValueError(f"{where} has a non-finite weight ({a[pos]}) at {_pos(pos)}")
        if a.dtype.itemsize > 4:
            big = np.abs(a) > FLOAT32_MAX
            if big.any():
                pos = _first(big)
                raise ValueError(f"{where}: weight {float(a[pos]):g} at {_pos(pos)} is too large for float32 "
                                 "(weights are probabilities)")
    out = np.array(a, dtype=np.float32)  # a copy: the caller's array is never modified
    neg = out < -NEGATIVE_TOLERANCE
    if neg.any():
        pos = _first(neg)
        raise ValueError(f"{where} has a negative weight {float(a[pos]):g} at {_pos(pos)} "
                         "(attention weights are probabilities)")
    np.maximum(out, 0.0, out=out)  # [-1e-6, 0) is rounding noise
    return out


def _first(mask: np.ndarray) -> tuple:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _pos(pos: tuple) -> str:
    """An index of a 4-D, 3-D or 2-D weights array -> 'layer 0, head 1, row 2, column 0'."""
    names = ("layer", "head", "row", "column")[4 - len(pos):]
    return ", ".join(f"{n} {i}" for n, i in zip(names, pos))


def token_text(t: Any, what: str, i: int) -> str:
    """One token as text: strings as they are, integer ids as their decimal digits."""
    if isinstance(t, (str, np.str_)):
        s = str(t)
    elif isinstance(t, (bytes, np.bytes_)):
        s = bytes(t).decode("utf-8", errors="replace")
    elif isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_)):
        s = str(int(t))
    else:
        raise ValueError(f"{what}[{i}] is a {type(t).__name__}, expected a string (or an integer id)")
    if len(s.encode("utf-8")) > MAX_TOKEN_BYTES:
        raise ValueError(f"{what}[{i}] is longer than {MAX_TOKEN_BYTES} bytes")
    return s


def token_list(tokens: Any, what: str) -> List[str]:
    if isinstance(tokens, (str, bytes)):
        raise ValueError(f"{what} must be a list of tokens, got one string (split it into tokens first)")
    if hasattr(tokens, "tolist"):
        tokens = tokens.tolist()
    try:
        seq = list(tokens)
    except TypeError:
        raise ValueError(f"{what} must be a list of strings, got {type(tokens).__name__}") from None
    if len(seq) > MAX_TOKENS:
        raise ValueError(f"{what} has more than {MAX_TOKENS} tokens")
    return [token_text(t, what, i) for i, t in enumerate(seq)]


def index_tokens(n: int) -> List[str]:
    return [str(i) for i in range(n)]


class AttentionSet:
    """One kind of attention of one model with its own tokens: weights [layers][heads][n_q][n_k].

    weights: a [layers, heads, n_q, n_k], [heads, n_q, n_k] or [n_q, n_k] array (numpy, torch,
    nested lists), or a list of per-layer [heads, n_q, n_k] arrays when layers differ in heads.
    tokens: the query and key tokens of a self-attention set; else query_tokens (rows) and
    key_tokens (columns). Missing tokens become "0", "1", ...
    kind: "self", "causal" or "cross"; default "self" when the query and key tokens are the
    same list, else "cross".
    head_names: one list shared by every layer, or one list per layer.
    """

    def __init__(self, weights: Any, tokens: Optional[Sequence] = None, *,
                 query_tokens: Optional[Sequence] = None, key_tokens: Optional[Sequence] = None,
                 name: Optional[str] = None, kind: Optional[str] = None,
                 layer_names: Optional[Sequence[str]] = None,
                 head_names: Optional[Sequence] = None):
        self.name = "attention" if name is None else str(name)
        where = f"set '{self.name}'"
        self.layers: List[np.ndarray] = _layers_of(weights, where)  # each [heads, n_q, n_k] float32
        n_q, n_k = self.layers[0].shape[1:]
        if tokens is not None and (query_tokens is not None or key_tokens is not None):
            raise ValueError(f"{where}: give either tokens or query_tokens/key_tokens, not both")
        if tokens is not None:
            query_tokens = key_tokens = tokens
        self.query_tokens = index_tokens(n_q) if query_tokens is None else token_list(query_tokens, "query_tokens")
        self.key_tokens = index_tokens(n_k) if key_tokens is None else token_list(key_tokens, "key_tokens")
        if kind is None:
            kind = "self" if self.query_tokens == self.key_tokens else "cross"
        if kind not in KINDS:
            raise ValueError(f"{where}: kind must be 'self', 'causal' or 'cross', got {kind!r}")
        self.kind = kind
        self.layer_names = _names(layer_names, len(self.layers), "layer", "layer_names", where)
        self.head_names = _head_names(head_names, [l.shape[0] for l in self.layers], where)
        self.warnings: List[str] = []
        self._validate(where)

    # ---- shape ----------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def n_q(self) -> int:
        return len(self.query_tokens)

    @property
    def n_k(self) -> int:
        return len(self.key_tokens)

    @property
    def heads_per_layer(self) -> List[int]:
        return [l.shape[0] for l in self.layers]

    @property
    def uniform(self) -> bool:
        """Every layer has the same number of heads (the set fits one 4-D array)."""
        return len(set(self.heads_per_layer)) == 1

    @property
    def weights(self) -> np.ndarray:
        """float32 [layers, heads, n_q, n_k] (ValueError when layers differ in heads: see .layers)."""
        if not self.uniform:
            raise ValueError(f"set '{self.name}': layers have {self.heads_per_layer} heads; "
                             "use .layers (one [heads, n_q, n_k] array per layer)")
        return np.stack(self.layers)

    @property
    def tokens(self) -> Optional[List[str]]:
        """The shared tokens of a self-attention set (None when queries and keys differ)."""
        return self.query_tokens if self.query_tokens == self.key_tokens else None

    def shared_head_names(self) -> Optional[List[str]]:
        """The head names when every layer uses the same list, else None."""
        first = self.head_names[0]
        return first if all(h == first for h in self.head_names) else None

    def __repr__(self) -> str:
        heads = self.heads_per_layer
        h = str(heads[0]) if self.uniform else str(heads)
        return (f"AttentionSet({self.name!r}, kind={self.kind!r}, layers={self.n_layers}, heads={h}, "
                f"n_q={self.n_q}, n_k={self.n_k})")

    # ---- validation (the C++ reader's rules) -----------------------------------
    def _validate(self, where: str) -> None:
        if len(self.layers) > MAX_LAYERS:
            raise ValueError(f"{where}: {len(self.layers)} layers, the limit is {MAX_LAYERS}")
        if self.n_q == 0 or self.n_k == 0:
            raise ValueError(f"{where}: there are no tokens (n_q = {self.n_q}, n_k = {self.n_k})")
        if self.n_q > MAX_TOKENS or self.n_k > MAX_TOKENS:
            raise ValueError(f"{where}: more than {MAX_TOKENS} tokens")
        total = 0
        for l, layer in enumerate(self.layers):
            lw = f"{where} layer {l} ('{self.layer_names[l]}')"
            if layer.shape[0] > MAX_HEADS:
                raise ValueError(f"{lw}: {layer.shape[0]} heads, the limit is {MAX_HEADS}")
            if layer.shape[1:] != (self.n_q, self.n_k):
                raise ValueError(
                    f"{lw} has weights [{layer.shape[1]}, {layer.shape[2]}] per head but there are "
                    f"{self.n_q} query tokens (rows) and {self.n_k} key tokens (columns)")
            total += layer.size
            if total > MAX_VALUES:
                raise ValueError(f"{where}: more than {MAX_VALUES} weights in total")
            sums = layer.sum(axis=2, dtype=np.float64)  # [heads, n_q]
            off = (sums != 0) & (np.abs(sums - 1.0) > ROW_SUM_TOLERANCE)
            for h in np.nonzero(off.any(axis=1))[0]:
                worst = float(np.abs(sums[h][off[h]] - 1.0).max())
                msg = (f"{lw} head {h} ('{self.head_names[l][h]}'): {int(off[h].sum())} of {self.n_q} rows "
                       f"do not sum to 1 (largest |sum - 1| = {worst:g})")
                self.warnings.append(msg)


def _layers_of(weights: Any, where: str) -> List[np.ndarray]:
    """weights (4-D, 3-D, 2-D, or a list of per-layer arrays) -> list of float32 [heads, n_q, n_k]."""
    if isinstance(weights, (list, tuple)) and weights and hasattr(weights[0], "shape"):
        parts = [to_numpy(w, where) for w in weights]  # one array or tensor per layer
        shapes = {p.shape for p in parts}
        if len(shapes) > 1:
            if not all(p.ndim == 3 for p in parts) or len({p.shape[1:] for p in parts}) > 1:
                raise ValueError(f"{where}: the layers' weights differ in shape: {[list(p.shape) for p in parts]}")
            return [_float_weights(p, f"{where} layer {l}") for l, p in enumerate(parts)]  # heads differ
        weights = np.stack(parts)
    a = to_numpy(weights, where)
    if a.ndim == 2:
        a = a[None, None]
    elif a.ndim == 3:
        a = a[None]
    elif a.ndim != 4:
        raise ValueError(f"{where}: weights must have shape [layers, heads, n_q, n_k], [heads, n_q, n_k] "
                         f"or [n_q, n_k], got {list(a.shape)}")
    if 0 in a.shape:
        raise ValueError(f"{where}: weights are empty, shape {list(a.shape)}")
    a = _float_weights(a, where)
    return [a[l] for l in range(a.shape[0])]


def _names(names: Optional[Sequence[str]], n: int, prefix: str, what: str, where: str) -> List[str]:
    if names is None:
        return [f"{prefix} {i}" for i in range(n)]
    out = token_list(names, what)
    if len(out) != n:
        raise ValueError(f"{where}: {what} has {len(out)} names, expected {n}")
    return out


def _head_names(names: Optional[Sequence], heads: List[int], where: str) -> List[List[str]]:
    if names is None:
        return [[f"head {h}" for h in range(n)] for n in heads]
    names = list(names)
    if names and not isinstance(names[0], (str, bytes, np.str_, np.bytes_, int, np.integer)):
        if len(names) != len(heads):
            raise ValueError(f"{where}: head_names has {len(names)} lists, expected one per layer ({len(heads)})")
        return [_names(n, h, "head", f"head_names[{l}]", where) for l, (n, h) in enumerate(zip(names, heads))]
    return [_names(names, h, "head", "head_names", where) for h in heads]


# ---- tokenizer markers --------------------------------------------------------------------
SPACE_MARKERS = ("\u2581", "\u0120")  # ▁ SentencePiece, Ġ GPT-2 byte-level BPE
CONTINUATION_MARKERS = ("##",)  # WordPiece
_SPECIAL = re.compile(r"^(\[[A-Z_]+\]|<\|?/?[A-Za-z0-9_]+\|?>)$")  # [CLS] <s> </s> <pad> <|endoftext|>


def normalize_tokenizer(t: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """Checks a version-2 "tokenizer" object; None stays None."""
    if t is None:
        return None
    if not isinstance(t, dict):
        raise ValueError(f"tokenizer must be a dict with space_marker, continuation_marker, special_tokens, "
                         f"got {type(t).__name__}")
    out = dict(t)
    for key in ("space_marker", "continuation_marker"):
        v = out.get(key)
        if v is not None and not isinstance(v, str):
            raise ValueError(f"tokenizer.{key} must be a string or None, got {type(v).__name__}")
        out[key] = v or None
    out["special_tokens"] = token_list(out.get("special_tokens") or [], "tokenizer.special_tokens")
    return out


def detect_tokenizer(token_lists: Iterable[Sequence[str]],
                     special_tokens: Optional[Iterable[str]] = None) -> Optional[Dict[str, Any]]:
    """Finds the subword markers (▁, Ġ, ##) and special tokens kept in the tokens.

    Returns a version-2 tokenizer object, or None when the tokens carry no markers.
    special_tokens: the tokenizer's own list (e.g. all_special_tokens); those present are kept.
    """
    seen: List[str] = []
    counts = {m: 0 for m in SPACE_MARKERS + CONTINUATION_MARKERS}
    given = set(special_tokens or ())
    specials: List[str] = []
    for tokens in token_lists:
        for t in tokens:
            for m in counts:
                if t.startswith(m) and len(t) >= len(m):
                    counts[m] += 1
            if (t in given or (not given and _SPECIAL.match(t))) and t not in specials:
                specials.append(t)
            seen.append(t)
    space = max(SPACE_MARKERS, key=lambda m: counts[m])
    cont = "##" if counts["##"] else None
    if not counts[space] and not cont and not specials:
        return None
    return {"space_marker": space if counts[space] else None, "continuation_marker": cont,
            "special_tokens": specials}


class AttentionFile:
    """The sets of one attention file, its tokenizer description and meta.

    sets: AttentionSets (or one set). tokenizer: {"space_marker", "continuation_marker",
    "special_tokens"} or None. meta: any JSON-serialisable dict. version: what load() read
    (1, 2, or 0 for BertViz data); save() chooses the version it writes itself.
    """

    def __init__(self, sets: Union[AttentionSet, Sequence[AttentionSet]], *,
                 tokenizer: Optional[Dict[str, Any]] = None, meta: Optional[Dict[str, Any]] = None,
                 version: Optional[int] = None):
        if isinstance(sets, AttentionSet):
            sets = [sets]
        self.sets: List[AttentionSet] = list(sets)
        if not self.sets:
            raise ValueError("an attention file needs at least one attention set")
        if len(self.sets) > MAX_LAYERS:
            raise ValueError(f"too many sets ({len(self.sets)}; the limit is {MAX_LAYERS})")
        for s in self.sets:
            if not isinstance(s, AttentionSet):
                raise ValueError(f"sets must be AttentionSet objects, got {type(s).__name__}")
        total = sum(l.size for s in self.sets for l in s.layers)
        if total > MAX_VALUES:
            raise ValueError(f"more than {MAX_VALUES} weights in total")
        if meta is not None and not isinstance(meta, dict):
            raise ValueError(f"meta must be a dict, got {type(meta).__name__}")
        self.tokenizer = normalize_tokenizer(tokenizer)
        self.meta: Dict[str, Any] = dict(meta or {})
        self.version = version
        self.warnings: List[str] = []
        for s in self.sets:
            prefix = "" if len(self.sets) == 1 else f"{s.name}: "
            self.warnings.extend(prefix + w for w in s.warnings)

    def __getitem__(self, key: Union[int, str]) -> AttentionSet:
        if isinstance(key, str):
            for s in self.sets:
                if s.name == key:
                    return s
            raise KeyError(f"no set named {key!r} (sets: {', '.join(s.name for s in self.sets)})")
        return self.sets[key]

    def __len__(self) -> int:
        return len(self.sets)

    def __iter__(self):
        return iter(self.sets)

    def __repr__(self) -> str:
        inner = ", ".join(repr(s) for s in self.sets)
        return f"AttentionFile([{inner}])"

    def warn(self) -> None:
        """Emits the collected warnings (rows not summing to 1, missing tokens) as AttentionWarnings."""
        for w in self.warnings:
            warnings.warn(w, AttentionWarning, stacklevel=3)


def as_file(data: Any, **kwargs: Any) -> AttentionFile:
    """Anything show()/save()/to_html() accept -> AttentionFile.

    AttentionFile, AttentionSet, a list of sets, a capture (kwargs go to capture.attention()),
    a path (str or os.PathLike: load()), or an array of weights (kwargs go to AttentionSet).
    """
    from . import _io  # local: _io imports this module

    if isinstance(data, AttentionFile):
        _no_kwargs(kwargs, "an AttentionFile")
        return data
    if isinstance(data, AttentionSet):
        return AttentionFile([data], tokenizer=kwargs.pop("tokenizer", None), meta=kwargs.pop("meta", None))
    if isinstance(data, (list, tuple)) and data and all(isinstance(s, AttentionSet) for s in data):
        return AttentionFile(list(data), tokenizer=kwargs.pop("tokenizer", None), meta=kwargs.pop("meta", None))
    if hasattr(data, "attention") and callable(getattr(data, "attention")) and hasattr(data, "records"):
        return data.attention(**kwargs)  # attnviz.capture
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        _no_kwargs(kwargs, "a file")
        return _io.load(data)
    tokenizer = kwargs.pop("tokenizer", None)
    meta = kwargs.pop("meta", None)
    return AttentionFile([AttentionSet(data, **kwargs)], tokenizer=tokenizer, meta=meta)


def _no_kwargs(kwargs: Dict[str, Any], what: str) -> None:
    if kwargs:
        raise ValueError(f"{', '.join(sorted(kwargs))}: not used with {what}")


def json_safe(obj: Any, where: str = "meta") -> Any:
    """meta -> plain JSON values (numpy scalars and arrays unwrapped; NaN and infinity -> None)."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v, f"{where}.{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist(), where)
    if isinstance(obj, np.generic):
        obj = obj.item()
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None  # the JSON policy: NaN and infinity are written as null
    raise ValueError(f"{where}: a {type(obj).__name__} cannot be written as JSON")
