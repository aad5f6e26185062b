"""BertViz's data -> AttentionFile.

Two inputs, as BertViz has them:
  * the data its head and model views pass to their JavaScript: the `attention` list of
    {"name", "attn": [layers][heads][q][k], "left_text", "right_text"}, or the params dict
    holding it (left_text = queries = rows, right_text = keys = columns);
  * the arguments of head_view()/model_view(): `attention` (a tuple of per-layer tensors
    [1, heads, n, n]) with `tokens` (and `sentence_b_start`), or encoder_attention,
    decoder_attention, cross_attention with encoder_tokens and decoder_tokens.
Sets are named as BertViz names them; "Encoder", "Decoder" and "Cross" are the kinds self,
causal and cross (docs/FORMATS.md, "BertViz data").
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ._io import BERTVIZ_KINDS, _bertviz_list, _read_bertviz
from ._model import AttentionFile, AttentionSet, detect_tokenizer, normalize_tokenizer, to_numpy, token_list


def from_bertviz(attention: Any = None, tokens: Optional[Sequence[str]] = None, *,
                 sentence_b_start: Optional[int] = None, encoder_attention: Any = None,
                 decoder_attention: Any = None, cross_attention: Any = None,
                 encoder_tokens: Optional[Sequence[str]] = None, decoder_tokens: Optional[Sequence[str]] = None,
                 include_layers: Optional[Sequence[int]] = None, tokenizer: Any = None,
                 meta: Optional[Dict[str, Any]] = None) -> AttentionFile:
    """BertViz's data or head_view()/model_view() arguments as an attention file.

    attention: BertViz's `attention` list, its params dict, that data as JSON text, or the
        per-layer tensors of a self-attention model (then tokens= is required).
    tokenizer: a version-2 tokenizer dict, or False; by default the markers found in the tokens.
    """
    if isinstance(attention, str):
        try:
            attention = json.loads(attention)
        except json.JSONDecodeError as e:
            raise ValueError(f"from_bertviz: the text is not JSON ({e})") from None
    data = _bertviz_list(attention) if isinstance(attention, (dict, list)) else None
    if data is not None:
        if tokens is not None or encoder_attention is not None or decoder_attention is not None:
            raise ValueError("from_bertviz: BertViz's data already holds its tokens; give it alone")
        doc = _read_bertviz(data)
        sets = doc.sets
    elif isinstance(attention, dict):
        raise ValueError("from_bertviz: the dict has no 'attention' list of {name, attn, left_text, right_text}")
    elif attention is not None:
        if encoder_attention is not None or decoder_attention is not None or cross_attention is not None \
                or encoder_tokens is not None or decoder_tokens is not None:
            raise ValueError("from_bertviz: with 'attention' (a self-attention model) give no encoder-decoder "
                             "arguments")
        if tokens is None:
            raise ValueError("from_bertviz: 'tokens' is required")
        sets = _self_sets(_format(attention, include_layers, "attention"), token_list(tokens, "tokens"),
                          sentence_b_start)
    elif encoder_attention is not None or decoder_attention is not None or cross_attention is not None:
        sets = _encoder_decoder_sets(encoder_attention, decoder_attention, cross_attention, encoder_tokens,
                                     decoder_tokens, include_layers)
    else:
        raise ValueError("from_bertviz: give BertViz's attention data, or at least one attention argument")
    if tokenizer is False:
        info = None
    elif isinstance(tokenizer, dict):
        info = normalize_tokenizer(tokenizer)
    else:
        info = detect_tokenizer([t for s in sets for t in (s.query_tokens, s.key_tokens)])
    return AttentionFile(sets, tokenizer=info, meta=meta, version=0)


def _format(attention: Any, include_layers: Optional[Sequence[int]], what: str) -> np.ndarray:
    """Per-layer [1, heads, q, k] -> [layers, heads, q, k], as BertViz's format_attention does."""
    layers = list(attention)
    if include_layers is not None:
        layers = [layers[i] for i in include_layers]
    out = []
    for l, a in enumerate(layers):
        x = to_numpy(a, f"{what}[{l}]")
        if x.ndim != 4:
            raise ValueError(f"from_bertviz: {what}[{l}] must be [1, heads, n_q, n_k] (run the model with "
                             f"output_attentions=True), got shape {list(x.shape)}")
        if x.shape[0] != 1:
            raise ValueError(f"from_bertviz: {what}[{l}] has batch size {x.shape[0]}; BertViz takes one item: "
                             "slice it (a[i:i+1]) or use attnviz.from_hf(outputs, batch=i)")
        out.append(x[0])
    if not out:
        raise ValueError(f"from_bertviz: {what} has no layers")
    try:
        return np.stack(out)
    except ValueError:
        raise ValueError(f"from_bertviz: the layers of {what} differ in shape: {[list(x.shape) for x in out]}") \
            from None


def _self_sets(att: np.ndarray, tokens: List[str], b: Optional[int]) -> List[AttentionSet]:
    """One set, or with sentence_b_start the five sets of BertViz's sentence filter."""
    if b is None:
        return [AttentionSet(att, tokens, name="attention")]
    n = len(tokens)
    if not 0 < b < n:
        raise ValueError(f"from_bertviz: sentence_b_start={b} must split the {n} tokens")
    parts = [("All", 0, n, 0, n), ("Sentence A -> Sentence A", 0, b, 0, b), ("Sentence B -> Sentence B", b, n, b, n),
             ("Sentence A -> Sentence B", 0, b, b, n), ("Sentence B -> Sentence A", b, n, 0, b)]
    return [AttentionSet(att[:, :, q0:q1, k0:k1], query_tokens=tokens[q0:q1], key_tokens=tokens[k0:k1], name=name)
            for name, q0, q1, k0, k1 in parts]


def _encoder_decoder_sets(enc: Any, dec: Any, cross: Any, enc_tokens: Any, dec_tokens: Any,
                          include_layers: Optional[Sequence[int]]) -> List[AttentionSet]:
    out = []
    if enc is not None:
        if enc_tokens is None:
            raise ValueError("from_bertviz: 'encoder_tokens' required if 'encoder_attention' is given")
        out.append(AttentionSet(_format(enc, include_layers, "encoder_attention"),
                                token_list(enc_tokens, "encoder_tokens"), name="Encoder", kind=BERTVIZ_KINDS["Encoder"]))
    if dec is not None:
        if dec_tokens is None:
            raise ValueError("from_bertviz: 'decoder_tokens' required if 'decoder_attention' is given")
        out.append(AttentionSet(_format(dec, include_layers, "decoder_attention"),
                                token_list(dec_tokens, "decoder_tokens"), name="Decoder", kind=BERTVIZ_KINDS["Decoder"]))
    if cross is not None:
        if enc_tokens is None or dec_tokens is None:
            raise ValueError("from_bertviz: 'encoder_tokens' and 'decoder_tokens' required if 'cross_attention' "
                             "is given")
        out.append(AttentionSet(_format(cross, include_layers, "cross_attention"),
                                query_tokens=token_list(dec_tokens, "decoder_tokens"),
                                key_tokens=token_list(enc_tokens, "encoder_tokens"), name="Cross",
                                kind=BERTVIZ_KINDS["Cross"]))
    return out
