"""show() and to_html(): the viewer and the data in one piece of HTML, with nothing to fetch.

The built web app (attnviz.js, attnviz.wasm, attnviz-embed.js, attnviz.css; attnviz-lazy.js and the
exports, attnviz-export.js with gifenc, when they are there) is inlined:
the WebAssembly gzip-compressed as base64 and handed to Emscripten's createAttnviz through its
`wasmBinary` option, the attention file as base64 opened with viewer.openFile(). So the output
works from file://, offline, with no CDN and no RequireJS, in a saved and reopened notebook and
in its HTML export. Each call gets its own element id and its own WebAssembly instance.

Where the app comes from: app_dir=, else $ATTNVIZ_APP_DIR, else the repository's
build/web/app next to this package, else attnviz/_app inside the installed package.
"""
from __future__ import annotations

import base64
import gzip
import html
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from . import _io
from ._model import AttentionFile, as_file

APP_FILES = ("attnviz.js", "attnviz.wasm", "attnviz-embed.js", "attnviz.css")
_cache: Dict[Tuple, Dict[str, str]] = {}


def find_app(app_dir: Optional[Union[str, "os.PathLike[str]"]] = None) -> Path:
    """The folder of the built web app (see the module docstring for the search order)."""
    if app_dir is not None:
        candidates, why = [Path(app_dir)], "app_dir"
    elif os.environ.get("ATTNVIZ_APP_DIR"):
        candidates, why = [Path(os.environ["ATTNVIZ_APP_DIR"])], "ATTNVIZ_APP_DIR"
    else:
        here = Path(__file__).resolve().parent
        candidates, why = [here.parent.parent / "build" / "web" / "app", here / "_app"], ""
    for c in candidates:
        if all((c / f).is_file() for f in APP_FILES):
            return c
    looked = ", ".join(str(c) for c in candidates)
    if why:
        raise FileNotFoundError(f"attnviz: {why} = {looked} does not hold the built web app ({', '.join(APP_FILES)})")
    raise FileNotFoundError(f"attnviz: the built web app was not found (looked in {looked}). Build it with "
                            "`make web-build` in the attnviz repository, or set ATTNVIZ_APP_DIR to its build/web/app")


def _app_parts(app: Path) -> Dict[str, str]:
    """The app's files as text to inline (cached per folder and file versions)."""
    stats = tuple((f, (app / f).stat().st_mtime_ns, (app / f).stat().st_size) for f in APP_FILES)
    key = (str(app.resolve()), stats)
    if key not in _cache:
        wasm = (app / "attnviz.wasm").read_bytes()
        favicon = app / "favicon.svg"
        _cache.clear()
        _cache[key] = {
            "js": _script_text((app / "attnviz.js").read_text(encoding="utf-8")),
            "embed": _script_text((app / "attnviz-embed.js").read_text(encoding="utf-8")),
            # Reads files in pieces and safetensors lazily; inlined so the page requests nothing.
            "lazy": _script_text((app / "attnviz-lazy.js").read_text(encoding="utf-8"))
            if (app / "attnviz-lazy.js").is_file() else "",
            # PNG / GIF / WebM exports: the ES modules rewritten as one classic script (below).
            "export": _export_script(app),
            "css": (app / "attnviz.css").read_text(encoding="utf-8").replace("</", "<\\/"),
            "wasm_gz_b64": base64.b64encode(gzip.compress(wasm, compresslevel=6, mtime=0)).decode("ascii"),
            "favicon": base64.b64encode(favicon.read_bytes()).decode("ascii") if favicon.is_file() else "",
        }
    return _cache[key]


_GIFENC_EXPORTS = re.compile(r"export\s*\{([^}]*)\}\s*;?\s*(//[^\n]*\s*)?$")
_GIFENC_IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*'\./gifenc\.esm\.js';\s*$", re.M)
_EXPORTED_FUNCTION = re.compile(r"^export\s+((?:async\s+)?function\s*\*?\s*(\w+))", re.M)


def _export_script(app: Path) -> str:
    """attnviz-export.js and npm's gifenc (ES modules the page imports on first use) as one classic
    script that sets window.AttnVizExport, which attnviz-embed.js uses when it is there: an inlined
    page has no folder to import them from. "" when the files are missing or not of the expected
    shape (the exports then say they cannot load, as before)."""
    exp, gif = app / "attnviz-export.js", app / "gifenc.esm.js"
    if not (exp.is_file() and gif.is_file()):
        return ""
    gif_src, exp_src = gif.read_text(encoding="utf-8"), exp.read_text(encoding="utf-8")
    tail = _GIFENC_EXPORTS.search(gif_src)
    wanted = _GIFENC_IMPORT.search(exp_src)
    if not tail or not wanted:
        return ""
    # export{ct as GIFEncoder,...} -> {GIFEncoder: ct, ...}
    pairs = [p.split(" as ") if " as " in p else [p, p] for p in (x.strip() for x in tail.group(1).split(",")) if p]
    gifenc = "{" + ", ".join(f"{alias.strip()}: {local.strip()}" for local, alias in pairs) + "}"
    names = [n.strip() for n in wanted.group(1).split(",") if n.strip()]
    body = _GIFENC_IMPORT.sub("const { " + ", ".join(names) + " } = gifenc;", exp_src)
    functions = [m.group(2) for m in _EXPORTED_FUNCTION.finditer(body)]
    body = _EXPORTED_FUNCTION.sub(r"\1", body)
    if re.search(r"^\s*(import|export)\b", body, re.M) or "import.meta" in body or not functions:
        return ""
    return _script_text(
        "window.AttnVizExport = window.AttnVizExport || (function () {\n"
        "  'use strict';\n"
        "  const gifenc = (function () {\n" + gif_src[:tail.start()] + "\n  return " + gifenc + ";\n  })();\n"
        + body + "\n  return { " + ", ".join(functions) + " };\n})();\n")


def _script_text(js: str) -> str:
    """JS safe to put between <script> tags (</script and <!-- cannot end or confuse the element)."""
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT").replace("<!--", "<\\!--")


def viewer_data(data: Any, *, version: Optional[int] = None, encoding: str = "npz",
                set: Optional[Union[int, str]] = None, title: str = "attention",
                **kwargs: Any) -> Tuple[AttentionFile, bytes, str]:
    """The attention file handed to the viewer: (document, bytes, file name).

    version: None = 1 for a single set (what every viewer build reads), 2 for several sets.
    set: one set (name or index) to show alone. title: the file name the viewer shows, sans extension.
    """
    doc = as_file(data, **kwargs)
    if set is not None:
        doc = AttentionFile([doc[set]], tokenizer=doc.tokenizer, meta=doc.meta)
    if version is None:
        version = 1 if len(doc.sets) == 1 else 2
    # Deflate only what is small: float32 weights shrink by 5-10 %, for ~12 s of zlib in to_html on
    # a 151 MB BERT-base (bench/inline_browser_bench.mjs: to_html 2.9x slower; the page opens as fast).
    weight_bytes = sum(layer.nbytes for s in doc.sets for layer in s.layers)
    body = _io.encode(doc, format=encoding, version=version, compressed=weight_bytes <= COMPRESS_MAX_BYTES)
    return doc, body, f"{title}.{encoding}"


COMPRESS_MAX_BYTES = 16 << 20  # inlined NPZ data is deflated up to this many bytes of weights

# Above this, inlined attention makes a page slow to open (a 151 MB BERT-base at 512 tokens: a
# 202 MB page, ~7 s to a ready viewer in headless Chromium) and a heavy notebook: a warning says so.
INLINE_WARN_BYTES = 64 << 20


def _warn_if_big(doc_bytes: bytes, name: str) -> None:
    if len(doc_bytes) <= INLINE_WARN_BYTES:
        return
    import warnings

    from ._model import AttentionWarning

    mb = len(doc_bytes) / 2**20
    warnings.warn(AttentionWarning(
        f"attnviz: {name} is {mb:.0f} MiB inlined into the page as base64 ({mb * 4 / 3:.0f} MiB of HTML): slow to "
        "open and heavy in a notebook. For a big model, write it with attnviz.save('attention.safetensors', data) "
        "and open it with `python3 -m attnviz serve attention.safetensors`: the viewer then "
        "reads only the heads you look at. Or show less: set=, or a slice of the layers."), stacklevel=4)


def _fragment(doc_bytes: bytes, name: str, app: Path, *, height: str, width: str, embed: bool,
              commands: Sequence[str], page: bool) -> str:
    _warn_if_big(doc_bytes, name)
    parts = _app_parts(app)
    vid = "attnviz-" + uuid.uuid4().hex[:12]
    size = "position:fixed;inset:0" if page else f"width:{width};height:{height};position:relative"
    config = {"id": vid, "name": name, "embed": embed, "commands": list(commands)}
    return (
        f'<div id="{vid}" class="attnviz-output" style="{html.escape(size)}"></div>\n'
        f"<style>{parts['css']}</style>\n"
        # The data as base64 in an element the browser does not run, not in a JS string literal: the
        # page of a BERT-base at 512 tokens loaded in 2.8 s instead of 27.5 s (headless Chromium).
        f'<script type="application/octet-stream" id="{vid}-data">{base64.b64encode(doc_bytes).decode("ascii")}'
        "</script>\n"
        "<script>\n"
        "(function () {\n"
        f"  var config = {_script_text(json.dumps(config))};\n"
        "  var dataElement = document.getElementById(config.id + '-data');\n"
        "  var data = dataElement ? dataElement.textContent : null;\n"
        f'  var wasmGz = "{parts["wasm_gz_b64"]}";\n'
        "  // The Emscripten loader, kept out of any AMD/CommonJS loader the page has (RequireJS in Jupyter).\n"
        "  var createAttnviz = (function (define, exports, module) {\n"
        f"{parts['js']}\n"
        "    ;return createAttnviz;\n"
        "  })();\n"
        f"{parts['lazy']}\n"
        f"{parts['export']}\n"
        f"{parts['embed']}\n"
        f"{_BOOT_JS}"
        "})();\n"
        "</script>\n")


# Runs inside the output's function: mounts the viewer on the output's element with the inlined
# WebAssembly, opens the inlined attention file, runs the commands. The element's
# data-attnviz-state says loading / ready / error; window.attnvizViewers[id] is the viewer.
_BOOT_JS = r"""
  var el = document.getElementById(config.id);
  if (!el || el.getAttribute('data-attnviz-state')) return;
  el.setAttribute('data-attnviz-state', 'loading');
  function bytes(b64) {
    var bin = atob(b64), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  function fail(e) {
    var msg = String((e && e.message) || e);
    el.setAttribute('data-attnviz-state', 'error');
    el.setAttribute('data-attnviz-error', msg);
    console.warn('attnviz: ' + msg);
    if (!el.querySelector('.attnviz-error')) {
      var d = document.createElement('div');
      d.className = 'attnviz-overlay attnviz-error';
      d.textContent = 'attnviz: ' + msg;
      el.appendChild(d);
    }
  }
  var wasm;
  function wasmBinary() {
    if (!wasm) {
      if (typeof DecompressionStream !== 'function') {
        return Promise.reject(new Error('this browser cannot unpack the inlined WebAssembly (no DecompressionStream)'));
      }
      var stream = new Blob([bytes(wasmGz)]).stream().pipeThrough(new DecompressionStream('gzip'));
      wasm = new Response(stream).arrayBuffer().then(function (b) { return new Uint8Array(b); });
    }
    return wasm;
  }
  // AttnViz.mount() calls window.createAttnviz with its options; this one adds the inlined bytes.
  // The loader and the bytes come from the same output, so whichever output set it last, they match.
  window.createAttnviz = function (options) {
    return wasmBinary().then(function (bin) {
      return createAttnviz(Object.assign({}, options, { wasmBinary: bin }));
    });
  };
  if (data === null) {
    fail(new Error('the inlined data (element ' + config.id + '-data) is missing from the page'));
    return;
  }
  window.AttnViz.mount(el, { example: 'seed002', embed: config.embed }).then(function (viewer) {
    var file = new File([bytes(data)], config.name);
    return Promise.resolve(viewer.openFile(file)).then(function () {
      var d = viewer.describe();
      if (d.message_is_error) throw new Error(d.message);
      config.commands.forEach(function (c) {
        var r = viewer.command(c);
        if (r) console.warn('attnviz: ' + c + ': ' + r);
      });
      el.attnviz = viewer;
      (window.attnvizViewers = window.attnvizViewers || {})[config.id] = viewer;
      el.setAttribute('data-attnviz-state', 'ready');
    });
  }).catch(fail);
"""


_SORTS = ("layer", "entropy", "max_weight", "first_token", "diagonality")


def _commands(view: Optional[str], colormap: Optional[str], commands: Sequence[str],
              hide: Union[str, Sequence[str]] = (), renormalize: bool = False, sort: Optional[str] = None) -> list:
    out = []
    if view:
        out.append(f"view {view}")
    if colormap:
        out.append(f"colormap {colormap}")
    for h in [hide] if isinstance(hide, str) else hide:  # "special", "punctuation" or a token
        if not str(h).strip():
            raise ValueError("hide: give 'special', 'punctuation' or a token, not an empty string")
        out.append(f"hide {h}")
    if renormalize:
        out.append("renormalize on")
    if sort is not None:
        if sort not in _SORTS:
            raise ValueError(f"sort={sort!r}: one of {', '.join(_SORTS)}")
        out.append(f"grid-sort {sort}")
    return out + [str(c) for c in commands]


def _css_size(v: Union[int, str]) -> str:
    return f"{v}px" if isinstance(v, (int, float)) else str(v)


def html_fragment(data: Any, *, height: Union[int, str] = 480, width: Union[int, str] = "100%",
                  embed: bool = False, view: Optional[str] = None, colormap: Optional[str] = None,
                  commands: Sequence[str] = (), hide: Union[str, Sequence[str]] = (), renormalize: bool = False,
                  sort: Optional[str] = None, version: Optional[int] = None, encoding: str = "npz",
                  set: Optional[Union[int, str]] = None, title: str = "attention", app_dir: Any = None,
                  **kwargs: Any) -> str:
    """The HTML that show() displays: a <div>, the app's CSS and one self-contained <script>."""
    cmds = _commands(view, colormap, commands, hide, renormalize, sort)
    _, body, name = viewer_data(data, version=version, encoding=encoding, set=set, title=title, **kwargs)
    return _fragment(body, name, find_app(app_dir), height=_css_size(height), width=_css_size(width), embed=embed,
                     commands=cmds, page=False)


def show(data: Any, *, height: Union[int, str] = 480, width: Union[int, str] = "100%", embed: bool = False,
         view: Optional[str] = None, colormap: Optional[str] = None, commands: Sequence[str] = (),
         hide: Union[str, Sequence[str]] = (), renormalize: bool = False, sort: Optional[str] = None,
         version: Optional[int] = None, encoding: str = "npz", set: Optional[Union[int, str]] = None,
         title: str = "attention", app_dir: Any = None, **kwargs: Any) -> None:
    """Shows a live viewer in the Jupyter cell output.

    data: an AttentionFile, AttentionSet, capture, path, or an array of weights (then tokens=,
        query_tokens=, key_tokens=, ... describe it, as for AttentionSet).
    height, width: CSS sizes (numbers are pixels). embed: the compact viewer (no menu bar, no
        sidebar). view: heatmap, lines, grid, steps or compare. colormap: greys, viridis, magma,
        diverging. commands: more viewer commands, run after the file opens.
    hide: "special" ([CLS], [SEP], <s>, ...), "punctuation", a token as its label shows it, or a
        list of them; renormalize=True divides each row by what is left. sort: the grid's head
        order: layer, entropy, max_weight, first_token or diagonality.
    version: the file version handed to the viewer (default 1 for one set, 2 for several).
    set: show one set (name or index) alone. title: the name the viewer shows for the data.
    encoding: "npz" (compact, the default) or "json" for the bytes handed to the viewer.
    app_dir: the built web app (default: $ATTNVIZ_APP_DIR, the repository's build/web/app, or the
        copy installed with the package).
    """
    try:
        from IPython.display import HTML, display
    except ImportError:
        raise RuntimeError("attnviz.show() needs IPython (Jupyter); use attnviz.to_html(path, ...) elsewhere") from None
    display(HTML(html_fragment(data, height=height, width=width, embed=embed, view=view, colormap=colormap,
                               commands=commands, hide=hide, renormalize=renormalize, sort=sort, version=version,
                               encoding=encoding, set=set, title=title, app_dir=app_dir, **kwargs)))


def to_html(path: Union[str, "os.PathLike[str]"], data: Any, *, title: str = "attention", embed: bool = False,
            view: Optional[str] = None, colormap: Optional[str] = None, commands: Sequence[str] = (),
            hide: Union[str, Sequence[str]] = (), renormalize: bool = False, sort: Optional[str] = None,
            version: Optional[int] = None, encoding: str = "npz", set: Optional[Union[int, str]] = None,
            app_dir: Any = None, **kwargs: Any) -> str:
    """Writes one self-contained HTML page (viewer and data) that opens from disk by double-click.

    The arguments are those of show(); the viewer fills the browser window and the page is
    titled "attnviz: TITLE". Returns the path.
    """
    cmds = _commands(view, colormap, commands, hide, renormalize, sort)
    _, body, name = viewer_data(data, version=version, encoding=encoding, set=set, title=title, **kwargs)
    app = find_app(app_dir)
    fragment = _fragment(body, name, app, height="100%", width="100%", embed=embed, commands=cmds, page=True)
    icon = _app_parts(app)["favicon"]
    page = ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>attnviz: {html.escape(title)}</title>\n"
            + (f'<link rel="icon" href="data:image/svg+xml;base64,{icon}">\n' if icon else "")
            + "<style>html, body { margin: 0; height: 100%; background: #1a1a1f; }</style>\n"
            "</head>\n<body>\n" + fragment + "</body>\n</html>\n")
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path
