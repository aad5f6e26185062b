"""BertViz's head_view() and model_view(), drawn by attnviz: the same arguments, one import changed.

    from attnviz import head_view, model_view      # was: from bertviz import head_view, model_view
    head_view(outputs.attentions, tokens)           # every head of a layer in its own colour (Lines view)
    model_view(outputs.attentions, tokens)          # every layer x head (Grid view)
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

from ._bertviz import from_bertviz
from ._model import to_numpy


def _pick_heads(attention: Any, include_heads: Optional[Sequence[int]], what: str) -> Any:
    """Per-layer [1, heads, q, k] tensors with only include_heads kept (model_view's include_heads)."""
    if attention is None or include_heads is None:
        return attention
    heads = list(include_heads)
    out = []
    for l, a in enumerate(attention):
        x = to_numpy(a, f"{what}[{l}]")
        if x.ndim != 4 or any(not 0 <= h < x.shape[1] for h in heads):
            raise ValueError(f"model_view: include_heads={heads} does not fit {what}[{l}] of shape {list(x.shape)}")
        out.append(x[:, heads])
    return out


def _emit(data: Any, html_action: str, view: str, commands: List[str], kwargs: dict) -> Any:
    from ._html import html_fragment

    if html_action not in ("view", "return"):
        raise ValueError(f"html_action={html_action!r}: 'view' or 'return'")
    try:
        from IPython.display import HTML, display
    except ImportError:
        raise RuntimeError("head_view()/model_view() need IPython (Jupyter); use attnviz.to_html(path, "
                           "attnviz.from_bertviz(...)) elsewhere") from None
    out = HTML(html_fragment(data, view=view, commands=list(commands) + list(kwargs.pop("commands", ())), **kwargs))
    if html_action == "return":
        return out
    display(out)
    return None


def head_view(attention: Any = None, tokens: Optional[Sequence[str]] = None, sentence_b_start: Optional[int] = None,
              prettify_tokens: bool = True, layer: Optional[int] = None, heads: Optional[Sequence[int]] = None,
              encoder_attention: Any = None, decoder_attention: Any = None, cross_attention: Any = None,
              encoder_tokens: Optional[Sequence[str]] = None, decoder_tokens: Optional[Sequence[str]] = None,
              include_layers: Optional[Sequence[int]] = None, html_action: str = "view", **show_kwargs: Any) -> Any:
    """BertViz's head_view, in attnviz's Lines view: every head of `layer` (default 0) at once, one
    colour each, or only `heads`, the attending tokens down the left as BertViz draws them. The arguments are BertViz's (prettify_tokens is accepted: the
    viewer shows word markers its own way); show_kwargs go to attnviz.show (height=, hide=, ...).
    html_action="return" returns the IPython HTML object instead of displaying it."""
    data = from_bertviz(attention, tokens, sentence_b_start=sentence_b_start, encoder_attention=encoder_attention,
                        decoder_attention=decoder_attention, cross_attention=cross_attention,
                        encoder_tokens=encoder_tokens, decoder_tokens=decoder_tokens, include_layers=include_layers)
    heads = None if heads is None else [int(h) for h in heads]
    commands = [f"layer-head {int(layer or 0)} {heads[0] if heads else 0}", "lines-queries left"]  # as BertViz
    if max(s.weights.shape[1] for s in data.sets) > 1:  # one head: the Lines view shows it alone
        commands.append("lines-heads all" if not heads else "lines-heads " + " ".join(str(h) for h in heads))
    return _emit(data, html_action, "lines", commands, show_kwargs)


def model_view(attention: Any = None, tokens: Optional[Sequence[str]] = None, sentence_b_start: Optional[int] = None,
               prettify_tokens: bool = True, display_mode: str = "dark", encoder_attention: Any = None,
               decoder_attention: Any = None, cross_attention: Any = None,
               encoder_tokens: Optional[Sequence[str]] = None, decoder_tokens: Optional[Sequence[str]] = None,
               include_layers: Optional[Sequence[int]] = None, include_heads: Optional[Sequence[int]] = None,
               html_action: str = "view", **show_kwargs: Any) -> Any:
    """BertViz's model_view, in attnviz's Grid view: every layer x head as a thumbnail (click one to
    open it), sortable by entropy and other statistics. display_mode "dark" or "light" picks the
    theme; include_heads keeps those heads of every layer."""
    if display_mode not in ("dark", "light"):
        raise ValueError(f"display_mode={display_mode!r}: 'dark' or 'light'")
    data = from_bertviz(_pick_heads(attention, include_heads, "attention"), tokens, sentence_b_start=sentence_b_start,
                        encoder_attention=_pick_heads(encoder_attention, include_heads, "encoder_attention"),
                        decoder_attention=_pick_heads(decoder_attention, include_heads, "decoder_attention"),
                        cross_attention=_pick_heads(cross_attention, include_heads, "cross_attention"),
                        encoder_tokens=encoder_tokens, decoder_tokens=decoder_tokens, include_layers=include_layers)
    return _emit(data, html_action, "grid", [f"theme {display_mode}"], show_kwargs)
