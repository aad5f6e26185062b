"""attnviz.capture: records the per-head weights of every torch.nn.MultiheadAttention in a forward pass.

    with torch.no_grad(), attnviz.capture(model) as cap:
        out = model(src, tgt)
    attnviz.show(cap, source_tokens=src_words, target_tokens=tgt_words)

How: on entry, each MultiheadAttention instance gets its own `forward` that calls the module's
forward with need_weights=True, average_attn_weights=False, keeps a copy of the weights
[batch, heads, n_q, n_k], and hands the caller what it asked for (no weights, the mean over
heads, or per head), so the outputs stay as they were. torch's fast paths need care: in eval
mode under no_grad, nn.TransformerEncoderLayer runs one fused kernel
(torch._transformer_encoder_layer_fwd) that never calls its self_attn module, and
nn.TransformerEncoder may turn padded batches into nested tensors first. Both are switched off
for the duration by clearing the layers' `activation_relu_or_gelu` flag, which only those
fast-path checks read (torch 1.13 .. 2.x). Everything is restored on exit.

Outputs are those of torch's regular path, which equal the fused path's to float rounding.
One visible difference: with src_key_padding_mask, the nested-tensor path returns zeros at
padded positions, the regular path returns values there (positions nobody should read).
"""
from __future__ import annotations

import inspect
import re
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._model import AttentionFile, AttentionSet, AttentionWarning, detect_tokenizer, normalize_tokenizer, token_list


class CapturedCall:
    """One call of one attention module."""

    def __init__(self, module_name: str, call: int, weights: np.ndarray, self_attention: bool,
                 key_padding_mask: Optional[np.ndarray]):
        self.module_name = module_name            # e.g. "encoder.layers.0.self_attn" ("" for the model itself)
        self.call = call                          # 0 for the module's first call in this capture, 1, ...
        self.weights = weights                    # float32 [batch, heads, n_q, n_k]
        self.self_attention = self_attention      # query, key and value were the same tensor
        self.key_padding_mask = key_padding_mask  # bool [batch, n_k], True = padding (None if none was given)

    def __repr__(self) -> str:
        return f"CapturedCall({self.module_name!r}, call={self.call}, weights={list(self.weights.shape)})"


class capture:  # noqa: N801 - a context manager used like a function: `with attnviz.capture(model) as cap`
    """Records every torch.nn.MultiheadAttention of `model` (and `model` itself if it is one).

    modules: optional list of module names (as in model.named_modules()) to record; default all.
    After the with-block, .records holds one CapturedCall per call, and .attention(...) turns
    them into an AttentionFile (one set per kind of module, one layer per module).
    """

    def __init__(self, model: Any, modules: Optional[Sequence[str]] = None):
        import torch  # torch is optional for the rest of attnviz

        self.model = model
        self.records: List[CapturedCall] = []
        wanted = None if modules is None else set(modules)
        self._mha = [(n, m) for n, m in model.named_modules()
                     if isinstance(m, torch.nn.MultiheadAttention) and (wanted is None or n in wanted)]
        if wanted is not None:
            missing = wanted - {n for n, _ in self._mha}
            if missing:
                raise ValueError(f"capture: no MultiheadAttention named {sorted(missing)}")
        self._encoder_layers = [m for _, m in model.named_modules() if isinstance(m, torch.nn.TransformerEncoderLayer)]
        self._saved: List[Tuple[Any, str, bool, Any]] = []
        self._hooks: List[Any] = []
        self._layer_calls: Dict[int, int] = {}
        self._active = False

    def __repr__(self) -> str:
        """What a notebook shows for `cap`: the modules watched and the calls recorded, one per line."""
        head = (f"attnviz.capture: {len(self._mha)} MultiheadAttention module(s) watched, "
                f"{len(self.records)} call(s) recorded")
        if self._active:
            return head + " (recording)"
        if not self._mha:
            return head + "; the model has no torch.nn.MultiheadAttention (for Hugging Face models use from_hf)"
        if not self.records:
            return head + "; run the model inside `with attnviz.capture(model) as cap:`"
        lines = [head + ":"]
        width = max(len(r.module_name or "(model)") for r in self.records[:12])
        for r in self.records[:12]:
            kind = "self" if r.self_attention else "cross"
            lines.append(f"  {(r.module_name or '(model)'):<{width}}  call {r.call}  "
                         f"[batch, heads, n_q, n_k] = {list(r.weights.shape)}  {kind}")
        if len(self.records) > 12:
            lines.append(f"  ... and {len(self.records) - 12} more")
        return "\n".join(lines)

    # ---- context manager ------------------------------------------------------------------
    def __enter__(self) -> "capture":
        if self._active:
            raise RuntimeError("capture: already active")
        self._active = True
        self.records = []
        for name, m in self._mha:
            self._patch(m, "forward", self._recording_forward(name, m))
        for layer in self._encoder_layers:
            if hasattr(layer, "activation_relu_or_gelu"):
                self._patch(layer, "activation_relu_or_gelu", 0)  # off: the fused fast paths check it
            self._layer_calls[id(layer)] = 0
            self._hooks.append(layer.register_forward_hook(self._count_layer))
        return self

    def __exit__(self, *exc: Any) -> None:
        for obj, attr, had, old in reversed(self._saved):
            if had:
                setattr(obj, attr, old)
            else:
                delattr(obj, attr)
        for h in self._hooks:
            h.remove()
        self._saved, self._hooks = [], []
        self._active = False
        self._check_encoder_layers()

    def _patch(self, obj: Any, attr: str, value: Any) -> None:
        had = attr in obj.__dict__
        self._saved.append((obj, attr, had, obj.__dict__.get(attr)))
        setattr(obj, attr, value)

    def _count_layer(self, layer: Any, inputs: Any, output: Any) -> None:
        self._layer_calls[id(layer)] = self._layer_calls.get(id(layer), 0) + 1

    def _check_encoder_layers(self) -> None:
        recorded = {r.module_name for r in self.records}
        names = {id(m): n for n, m in self.model.named_modules()}
        for layer in self._encoder_layers:
            attn_name = next((n for n, m in self._mha if m is layer.self_attn), None)
            if attn_name is not None and self._layer_calls.get(id(layer)) and attn_name not in recorded:
                warnings.warn(f"capture: {names.get(id(layer))} ran without calling its self_attn (a torch fast path "
                              "this version of attnviz does not know); its weights were not recorded",
                              AttentionWarning, stacklevel=3)

    # ---- recording ------------------------------------------------------------------------
    def _recording_forward(self, name: str, module: Any) -> Any:
        inner = module.forward  # the bound class method (or an earlier instance patch)
        signature = inspect.signature(type(module).forward)
        calls = [0]

        def forward(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(module, *args, **kwargs)
            bound.apply_defaults()
            a = dict(bound.arguments)
            a.pop("self", None)
            want_weights, average = a.get("need_weights", True), a.get("average_attn_weights", True)
            a["need_weights"], a["average_attn_weights"] = True, False
            out, w = inner(**a)
            q, k = a["query"], a["key"]
            kpm = a.get("key_padding_mask")
            self.records.append(CapturedCall(name, calls[0], _per_head(w, module.num_heads), q is k and k is a["value"],
                                             None if kpm is None else _padding(kpm)))
            calls[0] += 1
            if not want_weights:
                return out, None
            if average:
                return out, w.sum(dim=-3) / module.num_heads  # as torch averages: sum over heads / heads
            return out, w

        return forward

    # ---- results --------------------------------------------------------------------------
    def attention(self, tokens: Optional[Sequence] = None, *, source_tokens: Optional[Sequence] = None,
                  target_tokens: Optional[Sequence] = None, set_tokens: Optional[Dict[str, Any]] = None,
                  batch: int = 0, call: int = -1, drop_padding: bool = True, tokenizer: Any = None,
                  meta: Optional[Dict[str, Any]] = None) -> AttentionFile:
        """The recorded weights as an attention file.

        Modules whose names differ only in numbers (encoder.layers.0.self_attn,
        encoder.layers.1.self_attn, ...) form one set ("encoder.layers.self_attn"), one layer
        each. A set's kind: cross when query and key were different tensors, causal when every
        weight above the diagonal is zero, else self.
        tokens: of a model with one sequence. source_tokens (encoder input) and target_tokens
            (decoder input): self-attention sets of a decoder (or causal ones) use the target
            tokens, the others the source tokens; cross sets take target rows, source columns.
        set_tokens: {set name: tokens or (query_tokens, key_tokens)} for anything else.
        batch: the batch item. call: which call of each module (-1: the last, e.g. the last
            decoding step when a decoder is run once per step).
        drop_padding: drop the positions the key_padding_mask marked (from columns, and from
            rows of self-attention sets).
        tokenizer: a version-2 tokenizer dict, or False; by default markers found in the tokens.
        """
        if not self.records:
            raise ValueError("capture: nothing was recorded: run the model inside the with-block")
        groups = self._groups(call)
        sets = []
        for set_name, calls in groups:
            sets.append(self._set(set_name, calls, batch, drop_padding, tokens, source_tokens, target_tokens,
                                  (set_tokens or {}).get(set_name)))
        if tokenizer is False:
            info = None
        elif isinstance(tokenizer, dict):
            info = normalize_tokenizer(tokenizer)
        else:
            info = detect_tokenizer([t for s in sets for t in (s.query_tokens, s.key_tokens)],
                                    getattr(tokenizer, "all_special_tokens", None))
        return AttentionFile(sets, tokenizer=info, meta=meta)

    def _groups(self, call: int) -> List[Tuple[str, List[CapturedCall]]]:
        by_module: Dict[str, List[CapturedCall]] = {}
        for r in self.records:
            by_module.setdefault(r.module_name, []).append(r)
        groups: Dict[str, List[Tuple[Tuple[int, ...], CapturedCall]]] = {}
        for name, calls in by_module.items():
            try:
                chosen = calls[call]
            except IndexError:
                continue  # this module ran fewer times
            numbers = tuple(int(x) for x in re.findall(r"(?:^|\.)(\d+)(?=\.|$)", name))
            key = re.sub(r"\.?\b\d+\b", "", name).strip(".") or "attention"
            groups.setdefault(key, []).append((numbers, chosen))
        out = []
        for key, members in groups.items():
            members.sort(key=lambda m: m[0])
            out.append((key, [m[1] for m in members]))
        if not out:
            raise ValueError(f"capture: no module was called {call + 1 if call >= 0 else -call} time(s)")
        return out

    def _set(self, name: str, calls: List[CapturedCall], batch: int, drop_padding: bool, tokens: Any,
             source: Any, target: Any, explicit: Any) -> AttentionSet:
        shapes = {c.weights.shape[2:] for c in calls}
        if len(shapes) > 1:
            raise ValueError(f"capture: the modules of set '{name}' saw different shapes {sorted(shapes)}; "
                             "record them separately with capture(model, modules=[...])")
        n_b = calls[0].weights.shape[0]
        if not -n_b <= batch < n_b:
            raise ValueError(f"capture: batch={batch} but the batch has {n_b} item(s)")
        layers = [c.weights[batch] for c in calls]  # [heads, n_q, n_k] each
        n_q, n_k = layers[0].shape[1:]
        cross = not all(c.self_attention for c in calls)
        keep_k = keep_q = None
        kpm = calls[0].key_padding_mask
        if drop_padding and kpm is not None and kpm[batch].any():
            keep_k = ~kpm[batch]
            if not cross and n_q == n_k:
                keep_q = keep_k
        if keep_q is not None:
            layers = [l[:, keep_q] for l in layers]
        if keep_k is not None:
            layers = [l[:, :, keep_k] for l in layers]
        kind = "cross" if cross else ("causal" if _upper_zero(layers) else "self")
        q_tok, k_tok = self._tokens_of(name, kind, explicit, tokens, source, target, (n_q, n_k), (keep_q, keep_k))
        heads = [l.shape[0] for l in layers]
        return AttentionSet(layers if len(set(heads)) > 1 else np.stack(layers), query_tokens=q_tok, key_tokens=k_tok,
                            name=name, kind=kind, layer_names=[c.module_name or "attention" for c in calls])

    @staticmethod
    def _tokens_of(name: str, kind: str, explicit: Any, tokens: Any, source: Any, target: Any,
                   n: Tuple[int, int], keep: Tuple[Optional[np.ndarray], Optional[np.ndarray]]
                   ) -> Tuple[Optional[List[str]], Optional[List[str]]]:
        def fit(candidates: List[Any], axis: int, what: str) -> Optional[List[str]]:
            given = [token_list(c, what) for c in candidates if c is not None]
            if not given:
                return None
            kept = n[axis] if keep[axis] is None else int(keep[axis].sum())
            for t in given:
                if len(t) == kept:
                    return t
                if len(t) == n[axis] and keep[axis] is not None:
                    return [x for x, k in zip(t, keep[axis]) if k]
            raise ValueError(f"capture: set '{name}' has {kept} {'rows' if axis == 0 else 'columns'}, but the "
                             f"tokens given have {sorted({len(t) for t in given})}; pass set_tokens={{'{name}': ...}}")

        if explicit is not None:
            if isinstance(explicit, tuple) and len(explicit) == 2:
                return fit([explicit[0]], 0, "query_tokens"), fit([explicit[1]], 1, "key_tokens")
            return fit([explicit], 0, "tokens"), fit([explicit], 1, "tokens")
        if kind == "cross":
            return fit([target, tokens], 0, "target_tokens"), fit([source, tokens], 1, "source_tokens")
        decoder_side = kind == "causal" or "decoder" in name
        order = [tokens, target, source] if decoder_side else [tokens, source, target]
        t = fit(order, 1, "tokens")
        return (None if t is None else t[len(t) - (n[0] if keep[0] is None else int(keep[0].sum())):]), t


def _per_head(w: Any, num_heads: int) -> np.ndarray:
    """MultiheadAttention's per-head weights ([batch, heads, q, k], or [heads, q, k] unbatched) as numpy."""
    x = w.detach().to("cpu").float().numpy().copy()
    if x.ndim == 3:
        x = x[None]
    if x.ndim != 4 or x.shape[1] != num_heads:
        raise RuntimeError(f"capture: unexpected attention weights of shape {list(x.shape)}")
    return x


def _padding(kpm: Any) -> Optional[np.ndarray]:
    """key_padding_mask (bool True = pad, or float: -inf = pad) -> bool [batch, n_k]."""
    x = kpm.detach().to("cpu").numpy()
    if x.dtype == np.bool_:
        m = x
    else:
        m = np.isneginf(x)
    return m[None] if m.ndim == 1 else m


def _upper_zero(layers: List[np.ndarray]) -> bool:
    n_q, n_k = layers[0].shape[1:]
    if n_q < 2 or n_q != n_k:
        return False
    upper = np.triu(np.ones((n_q, n_k), dtype=bool), k=1)
    return all(not l[:, upper].any() for l in layers)
