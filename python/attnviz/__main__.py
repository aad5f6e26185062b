"""python3 -m attnviz serve FILE | html FILE -o OUT.html | inspect FILE (see docs/PYTHON.md)."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import _html, _io, _serve


def _inspect_big(path: str) -> bool:
    """A safetensors file over 1 GiB, or a .npy or .npz too big for the viewer to read whole: described from
    its header (an .npz's directory and its members' headers; the file may be tens of GB). False for other
    files, which are read whole."""
    import os

    import numpy as np

    from ._safetensors import is_safetensors, read_safetensors_header
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        first = f.read(16)
    gib = f"{size / 2 ** 30:.1f} GiB"
    if is_safetensors(first, size) and size > _serve.EAGER_MAX_FILE:
        header = read_safetensors_header(path)
        tensors = {k: v for k, v in header.items() if k != "__metadata__"}
        print(f"{path}: safetensors, {gib}, {len(tensors)} tensor(s); read lazily by the viewer")
        for name, t in list(tensors.items())[:64]:
            print(f"  {name}: {t.get('dtype')} {tuple(t.get('shape', []))}")
        return True
    if _serve.npy_too_big(path):
        with open(path, "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(f)
        print(f"{path}: npy, {gib}, {dtype.str} {tuple(shape)}{' (Fortran order)' if fortran else ''}, "
              "too big to read whole: the viewer reads it lazily, head by head (python3 -m attnviz serve FILE); "
              "attnviz-cli convert FILE out.safetensors --tokens TOKENS adds overviews and tokens")
        return True
    if _serve.npz_too_big(path):
        print(f"{path}: npz, {gib}, too big for the page to read whole")
        for name, dtype, shape, stored in _serve.npz_members(path)[:64]:
            print(f"  {name}: {dtype.str} {shape}{'' if stored else ' (compressed)'}")
        print("  the viewer reads it lazily, head by head (python3 -m attnviz serve FILE)" if _serve.npz_stored(path)
              else "  its attention is compressed (np.savez_compressed), which the viewer reads only whole: save it "
                   "with np.savez, or as safetensors")
        return True
    return False


def _inspect(path: str) -> None:
    if _inspect_big(path):
        return
    doc = _io.decode(open(path, "rb").read())
    kinds = {0: "BertViz data", 1: "version 1", 2: "version 2"}
    print(f"{path}: {kinds.get(doc.version, doc.version)}, {len(doc.sets)} set(s)")
    for s in doc.sets:
        heads = s.heads_per_layer
        h = heads[0] if s.uniform else heads
        print(f"  set '{s.name}' ({s.kind}): {s.n_layers} layer(s) x {h} head(s), n_q={s.n_q} x n_k={s.n_k}")
        if s.tokens is not None:
            print(f"    tokens: {' '.join(s.tokens)}")
        else:
            print(f"    query tokens: {' '.join(s.query_tokens)}")
            print(f"    key tokens:   {' '.join(s.key_tokens)}")
    if doc.tokenizer:
        print(f"  tokenizer: {doc.tokenizer}")
    if doc.meta:
        print(f"  meta: {doc.meta}")
    for w in doc.warnings:
        print(f"  warning: {w}")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m attnviz", description="attnviz attention files and viewer")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve the web app on 127.0.0.1 with FILE preloaded")
    s.add_argument("file")
    s.add_argument("--app", help="the built web app folder (default: $ATTNVIZ_APP_DIR, else build/web/app)")
    s.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0 picks a free one; default 8000)")
    s.add_argument("--version", choices=["auto", "1", "2", "raw"], default="auto",
                   help="what to hand the viewer: auto (version 1 for a single set, else the file as it is), "
                        "1, 2, or raw (the bytes as they are, unchecked)")
    s.add_argument("--open", action="store_true", help="open the URL in a browser")
    s.add_argument("--quiet", action="store_true", help="do not log requests")
    h = sub.add_parser("html", help="write a self-contained HTML page (viewer and data) for FILE")
    h.add_argument("file")
    h.add_argument("-o", "--output", required=True)
    h.add_argument("--app", help="the built web app folder")
    h.add_argument("--version", type=int, choices=[1, 2], help="default: 1 for a single set, else 2")
    i = sub.add_parser("inspect", help="list the sets, layers, heads and tokens of an attention file")
    i.add_argument("file")
    a = p.parse_args(argv)
    try:
        if a.command == "serve":
            _serve.serve(a.file, app_dir=a.app, port=a.port, version=a.version, open_browser=a.open, quiet=a.quiet)
        elif a.command == "html":
            print(_html.to_html(a.output, a.file, app_dir=a.app, version=a.version))
        else:
            _inspect(a.file)
    except (ValueError, FileNotFoundError, OSError) as e:
        print(f"attnviz: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
