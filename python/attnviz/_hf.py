"""Hugging Face transformers outputs -> AttentionFile (transformers itself is not imported).

Encoder models (BERT: `attentions`), decoder-only models (GPT-2: `attentions`, causal) and
encoder-decoders (`encoder_attentions`, `decoder_attentions`, `cross_attentions`). Each is a
tuple with one tensor (or numpy array) per layer of shape [batch, heads, n_q, n_k].
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ._model import AttentionFile, AttentionSet, detect_tokenizer, normalize_tokenizer, to_numpy, token_list


def from_hf(outputs: Any, tokens: Optional[Sequence] = None, *, encoder_tokens: Optional[Sequence] = None,
            decoder_tokens: Optional[Sequence] = None, batch: int = 0, attention_mask: Any = None,
            decoder_attention_mask: Any = None, tokenizer: Any = None, causal: Optional[bool] = None,
            meta: Optional[Dict[str, Any]] = None) -> AttentionFile:
    """The attention of a transformers model output (run it with output_attentions=True).

    outputs: the model's output (a ModelOutput or dict), or the tuple of per-layer tensors.
    tokens: the tokens of an encoder or decoder-only model, e.g.
        tokenizer.convert_ids_to_tokens(input_ids[0]); a list per batch item also works, and so
        do ids when tokenizer= is the tokenizer object.
    encoder_tokens, decoder_tokens: the tokens of an encoder-decoder model.
    batch: which batch item to keep.
    attention_mask, decoder_attention_mask: [batch, n] masks (1 = token, 0 = padding); padded
        positions are dropped from rows and columns (and from the tokens, when they include them).
    tokenizer: the tokenizer object (its special tokens are listed), a version-2 tokenizer dict,
        or False for none. By default the markers (▁, Ġ, ##) found in the tokens are recorded.
    causal: whether `attentions` is a decoder's causal self-attention; by default it is when
        every weight above the diagonal is zero.
    """
    enc, dec, cross = (_field(outputs, n) for n in ("encoder_attentions", "decoder_attentions", "cross_attentions"))
    plain = outputs if isinstance(outputs, (list, tuple)) else _field(outputs, "attentions")
    sets: List[AttentionSet] = []
    if enc is not None or dec is not None or cross is not None:
        if tokens is not None:
            raise ValueError("from_hf: these are encoder-decoder outputs: give encoder_tokens= and decoder_tokens= "
                             "(tokens= is for encoder-only and decoder-only models)")
        enc_tokens = _pick_tokens(encoder_tokens, batch, "encoder_tokens", tokenizer)
        dec_tokens = _pick_tokens(decoder_tokens, batch, "decoder_tokens", tokenizer)
        if enc is not None:
            w = _layers(enc, "encoder_attentions", batch)
            sets.append(_square_set(w, enc_tokens, attention_mask, batch, "encoder", causal=False))
        if dec is not None:
            w = _layers(dec, "decoder_attentions", batch)
            sets.append(_square_set(w, dec_tokens, decoder_attention_mask, batch, "decoder", causal=None))
        if cross is not None:
            w = _layers(cross, "cross_attentions", batch)
            sets.append(_cross_set(w, dec_tokens, enc_tokens, decoder_attention_mask, attention_mask, batch))
    elif plain is not None:
        if encoder_tokens is not None or decoder_tokens is not None:
            raise ValueError("from_hf: encoder_tokens/decoder_tokens are for encoder-decoder outputs; use tokens=")
        w = _layers(plain, "attentions", batch)
        sets.append(_square_set(w, _pick_tokens(tokens, batch, "tokens", tokenizer), attention_mask, batch,
                                None, causal=causal))
    else:
        raise ValueError("from_hf: no attentions in these outputs: run the model with output_attentions=True "
                         "(and attn_implementation='eager' where the default kernel returns none)")
    return AttentionFile(sets, tokenizer=_tokenizer_info(tokenizer, sets), meta=meta)


def _field(outputs: Any, name: str) -> Any:
    if isinstance(outputs, dict):
        return outputs.get(name)
    return getattr(outputs, name, None)


def _layers(att: Any, what: str, batch: int) -> List[np.ndarray]:
    """A tuple of per-layer [batch, heads, n_q, n_k] -> the batch item's [heads, n_q, n_k] per layer."""
    if not isinstance(att, (list, tuple)):
        att = [att[i] for i in range(len(att))] if hasattr(att, "__len__") else [att]
    if not att:
        raise ValueError(f"from_hf: {what} is empty")
    out = []
    for l, a in enumerate(att):
        if a is None:
            raise ValueError(f"from_hf: {what}[{l}] is None: load the model with attn_implementation='eager' "
                             "and run it with output_attentions=True")
        if isinstance(a, (list, tuple)):
            raise ValueError(f"from_hf: {what}[{l}] is a tuple: this looks like generate() output (one tuple of "
                             "layers per step); run the model once on the whole sequence instead")
        x = to_numpy(a, f"{what}[{l}]")
        if x.ndim == 3:
            x = x[None]
        if x.ndim != 4:
            raise ValueError(f"from_hf: {what}[{l}] must be [batch, heads, n_q, n_k], got shape {list(x.shape)}")
        if not 0 <= batch < x.shape[0] and not -x.shape[0] <= batch < 0:
            raise ValueError(f"from_hf: batch={batch} but {what} holds {x.shape[0]} item(s)")
        if out and x.shape[2:] != out[0].shape[1:]:
            raise ValueError(f"from_hf: {what}[{l}] is [.., {x.shape[2]}, {x.shape[3]}], layer 0 is "
                             f"[.., {out[0].shape[1]}, {out[0].shape[2]}]")
        out.append(x[batch])
    return out


def _pick_tokens(tokens: Any, batch: int, what: str, tokenizer: Any) -> Optional[List[str]]:
    """tokens of one item: a list, a list per batch item, ids ([batch, n] or [n]) with tokenizer=."""
    if tokens is None:
        return None
    if hasattr(tokens, "tolist") and not isinstance(tokens, (str, bytes)):
        tokens = tokens.tolist()
    tokens = list(tokens)
    per_item = bool(tokens) and (isinstance(tokens[0], (list, tuple)) or np.ndim(tokens[0]) == 1)
    if per_item:
        if not -len(tokens) <= batch < len(tokens):
            raise ValueError(f"from_hf: batch={batch} but {what} has {len(tokens)} lists")
        tokens = list(tokens[batch])
    if tokens and all(isinstance(t, (int, np.integer)) for t in tokens) and hasattr(tokenizer,
                                                                                      "convert_ids_to_tokens"):
        tokens = tokenizer.convert_ids_to_tokens([int(t) for t in tokens])
    return token_list(tokens, what)


def _keep(mask: Any, batch: int, n: int, what: str) -> Optional[np.ndarray]:
    """The positions an attention mask keeps (None: all)."""
    if mask is None:
        return None
    m = to_numpy(mask, what)
    if m.ndim == 2:
        m = m[batch]
    if m.ndim != 1 or m.shape[0] != n:
        raise ValueError(f"from_hf: {what} must be [batch, {n}] (1 = token, 0 = padding), got shape "
                         f"{list(to_numpy(mask, what).shape)}")
    keep = m != 0
    if not keep.any():
        raise ValueError(f"from_hf: {what} masks every position of batch item {batch}")
    return None if keep.all() else keep


def _tokens_for(tokens: Optional[List[str]], keep: Optional[np.ndarray], n: int, what: str) -> Optional[List[str]]:
    """Tokens of the kept positions; tokens may include the padding or not."""
    if tokens is None:
        return None
    kept = n if keep is None else int(keep.sum())
    if len(tokens) == n and keep is not None:
        return [t for t, k in zip(tokens, keep) if k]
    if len(tokens) == kept:
        return tokens
    pad = "" if keep is None else f" ({kept} without padding)"
    raise ValueError(f"from_hf: {what} has {len(tokens)} tokens, but the attention has {n} positions{pad}")


def _is_causal(w: List[np.ndarray]) -> bool:
    n_q, n_k = w[0].shape[1:]
    if n_q < 2:
        return False
    upper = np.triu(np.ones((n_q, n_k), dtype=bool), k=1 + n_k - n_q)
    return all(not layer[:, upper].any() for layer in w)


def _square_set(w: List[np.ndarray], tokens: Optional[List[str]], mask: Any, batch: int, name: Optional[str],
                causal: Optional[bool]) -> AttentionSet:
    """Self-attention over one sequence. With a key-value cache n_q < n_k: the queries are the last n_q tokens."""
    n_q, n_k = w[0].shape[1:]
    if n_q > n_k:
        raise ValueError(f"from_hf: self-attention with {n_q} queries over {n_k} keys")
    what = "tokens" if name is None else f"{name}_tokens"
    keep_k = _keep(mask, batch, n_k, "attention_mask" if name != "decoder" else "decoder_attention_mask")
    keep_q = None if keep_k is None else keep_k[n_k - n_q:]
    if keep_k is not None:
        w = [layer[:, keep_q][:, :, keep_k] for layer in w]
    k_tokens = _tokens_for(tokens, keep_k, n_k, what)
    q_tokens = None if k_tokens is None else k_tokens[len(k_tokens) - w[0].shape[1]:]
    if causal is None:
        causal = _is_causal(w) or (n_q < n_k and name != "encoder")
    if name is None:
        name = "decoder" if causal else "encoder"
    kind = "causal" if causal else "self"
    if n_q == n_k:
        return AttentionSet(w, k_tokens, name=name, kind=kind)
    return AttentionSet(w, query_tokens=q_tokens, key_tokens=k_tokens, name=name, kind=kind)


def _cross_set(w: List[np.ndarray], dec_tokens: Optional[List[str]], enc_tokens: Optional[List[str]],
               dec_mask: Any, enc_mask: Any, batch: int) -> AttentionSet:
    n_q, n_k = w[0].shape[1:]
    keep_q = _keep(dec_mask, batch, n_q, "decoder_attention_mask")
    keep_k = _keep(enc_mask, batch, n_k, "attention_mask")
    if keep_q is not None:
        w = [layer[:, keep_q] for layer in w]
    if keep_k is not None:
        w = [layer[:, :, keep_k] for layer in w]
    return AttentionSet(w, query_tokens=_tokens_for(dec_tokens, keep_q, n_q, "decoder_tokens"),
                        key_tokens=_tokens_for(enc_tokens, keep_k, n_k, "encoder_tokens"), name="cross", kind="cross")


def _tokenizer_info(tokenizer: Any, sets: List[AttentionSet]) -> Optional[Dict[str, Any]]:
    if tokenizer is False:
        return None
    if isinstance(tokenizer, dict):
        return normalize_tokenizer(tokenizer)
    lists: List[Sequence[str]] = []
    for s in sets:
        lists += [s.query_tokens, s.key_tokens]
    specials = getattr(tokenizer, "all_special_tokens", None)
    return detect_tokenizer(lists, specials)

