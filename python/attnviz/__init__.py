"""attnviz for Python: write attention files, capture a PyTorch model's attention, and show it.

    import attnviz
    attnviz.save("attention.npz", weights, tokens=tokens)       # [layers, heads, n, n]
    attnviz.save("model.safetensors", outputs.attentions, tokens=tokens)  # big: read lazily, head by head
    attnviz.show(attnviz.from_hf(outputs, tokens=tokens))       # transformers, in Jupyter
    with torch.no_grad(), attnviz.capture(model) as cap:        # any nn.MultiheadAttention
        model(src, tgt)
    attnviz.to_html("attention.html", cap, source_tokens=src_words, target_tokens=tgt_words)
    attnviz.head_view(outputs.attentions, tokens)               # BertViz's head_view/model_view, same arguments

Only numpy is required; torch is imported by capture() alone. docs/PYTHON.md has the details,
docs/FORMATS.md the file format.
"""
from ._bertviz import from_bertviz
from ._hf import from_hf
from ._html import find_app, html_fragment, show, to_html
from ._io import decode, encode, load, save
from ._model import AttentionFile, AttentionSet, AttentionWarning, detect_tokenizer
from ._safetensors import SafetensorsWriter
from ._stats import head_stats
from ._views import head_view, model_view


def capture(model, modules=None):
    """Records the per-head weights of every torch.nn.MultiheadAttention in `model` (a context manager).

    See attnviz._torch.capture; torch is imported only when this is called.
    """
    from ._torch import capture as _capture

    return _capture(model, modules=modules)


__version__ = "0.1.0"
__all__ = ["AttentionFile", "AttentionSet", "AttentionWarning", "SafetensorsWriter", "capture", "decode",
           "detect_tokenizer", "encode", "find_app", "from_bertviz", "from_hf", "head_stats", "head_view",
           "html_fragment", "load", "model_view", "save", "show", "to_html"]
