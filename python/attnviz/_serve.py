"""`python3 -m attnviz serve FILE`: the built web app on 127.0.0.1 with FILE preloaded.

GET /            a page that mounts the viewer and opens data/NAME
GET /data/NAME   the attention file (as the viewer reads it, see `version`)
GET /...         the app's files (attnviz.js, attnviz.wasm, attnviz-embed.js, attnviz.css, ...)

HTTP Range requests (bytes=a-b, a-, -n) are answered with 206: a safetensors FILE, or a .npy too
big for the viewer to read whole, is served from disk, never read whole, and the viewer reads the
heads it shows (docs/PERFORMANCE.md, "Big files"; docs/FORMATS.md, "A .npy too big to read whole").
"""
from __future__ import annotations

import html
import http.server
import json
import os
import re
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Any, List, Optional, Tuple

from . import _io
from ._html import find_app
from ._safetensors import is_safetensors, read_safetensors_header

TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".wasm": "application/wasm",
         ".json": "application/json; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".npz": "application/octet-stream", ".npy": "application/octet-stream",
         ".safetensors": "application/octet-stream"}

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attnviz: {title}</title>
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="attnviz.css">
<style>html, body {{ margin: 0; height: 100%; background: #1a1a1f; }} #app {{ position: fixed; inset: 0; }}</style>
</head>
<body>
<div id="app"></div>
<script src="attnviz.js"></script>
<script src="attnviz-embed.js"></script>
<script>
  // The file given to `python3 -m attnviz serve`; ?src=URL opens another one.
  const src = new URLSearchParams(location.search).get('src') || {data_url};
  window.attnvizReady = AttnViz.mount('#app', {{ example: 'seed002' }}).then(async (viewer) => {{
    window.attnviz = viewer;
    const name = decodeURIComponent(src.split(/[?#]/)[0].split('/').pop());
    if (/\\.(safetensors|np[yz])$/i.test(name)) {{  // a .npy or .npz is served as it is only when too big to read whole
      await viewer.openUrl(src);  // read lazily: the heads in view, with Range requests
    }} else {{
      const response = await fetch(src);
      if (!response.ok) throw new Error('could not fetch ' + src + ': HTTP ' + response.status);
      await viewer.openFile(new File([await response.arrayBuffer()], name));
    }}
    const d = viewer.describe();
    if (d.message_is_error) throw new Error(d.message);
    document.title = 'attnviz: ' + name;
    window.attnvizFileOpened = true;
    return viewer;
  }}).catch((e) => {{ console.warn('attnviz: ' + e.message); window.attnvizError = e.message; }});
</script>
</body>
</html>
"""


# What the viewer reads whole (io/lazy_attention.h, NpyOpensLazily): at most 2^28 weights and a file
# within its default memory budget. A bigger .npy is read lazily, with Range requests.
EAGER_MAX_WEIGHTS = 1 << 28
EAGER_MAX_FILE = 1 << 30


def npy_too_big(path: str) -> bool:
    """True when FILE is a .npy the viewer reads lazily (its header alone is read here)."""
    import numpy as np
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            return False
        f.seek(0)
        try:
            major, _ = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _, _ = read(f)
        except ValueError:
            return False  # the viewer says what is wrong with it
        size = os.fstat(f.fileno()).st_size
    weights = 1
    for d in shape:
        weights *= int(d)
    return weights > EAGER_MAX_WEIGHTS or size > EAGER_MAX_FILE


# The arrays the viewer takes the attention from, in its order (io/attention_file.cpp).
NPZ_ATTENTION = ("attention.npy", "head_weights.npy", "weights.npy")


def npz_members(path: str) -> List[Tuple[str, Any, Tuple[int, ...], bool]]:
    """(name, dtype, shape, stored) of each member of an .npz, from its directory and the members'
    .npy headers only (the file may be tens of GB)."""
    import zipfile

    import numpy as np
    out = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            with z.open(info) as m:
                try:
                    major, _ = np.lib.format.read_magic(m)
                    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(m)
                except ValueError:
                    continue  # not a .npy: the viewer says what is wrong with the file
            out.append((info.filename, dtype, tuple(int(d) for d in shape), info.compress_type == zipfile.ZIP_STORED))
    return out


def npz_too_big(path: str) -> bool:
    """True when FILE is an .npz the page cannot read whole (over its memory budget, or an attention
    array past 2^28 weights); only its directory and headers are read."""
    with open(path, "rb") as f:
        if f.read(4) != b"PK\x03\x04":
            return False
        size = os.fstat(f.fileno()).st_size
    if size > EAGER_MAX_FILE:
        return True
    try:
        members = {name: shape for name, _, shape, _ in npz_members(path)}
    except Exception:  # noqa: BLE001 - a broken archive: the viewer says what is wrong with it
        return False
    for name in NPZ_ATTENTION:
        if name in members:
            weights = 1
            for d in members[name]:
                weights *= d
            return weights > EAGER_MAX_WEIGHTS
    return False


def npz_stored(path: str) -> bool:
    """True when an .npz's attention array is stored as it is (np.savez), so the viewer can read it lazily."""
    members = {name: stored for name, _, _, stored in npz_members(path)}
    return next((members[n] for n in NPZ_ATTENTION if n in members), False)


def prepare(path: str, version: str = "auto") -> Tuple[str, Optional[bytes]]:
    """(name, bytes) of the file to serve. version: auto (version 1 for one set, else as it is), 1, 2 or raw.
    A safetensors file gives (name, None): it is served from disk as it is (its header checked here);
    so does a .npy too big for the viewer to read whole (npy_too_big), and an .npz whose attention is
    stored (npz_too_big, npz_stored), which it then reads lazily."""
    name = os.path.basename(path)
    with open(path, "rb") as f:
        first = f.read(16)
        size = os.fstat(f.fileno()).st_size
    if is_safetensors(first, size):
        read_safetensors_header(path)
        return name, None
    if npy_too_big(path):
        return (name if name.lower().endswith(".npy") else name + ".npy"), None
    if npz_too_big(path):  # served from disk as it is, and read lazily, if its attention is stored
        if not npz_stored(path):
            raise ValueError(f"{name} ({size / 2 ** 30:.1f} GiB) is too big for the page to read whole, and its "
                             "attention is compressed (np.savez_compressed), which is read only whole: save it with "
                             "np.savez, or as safetensors (attnviz.save(..., format='safetensors'))")
        return (name if name.lower().endswith(".npz") else name + ".npz"), None
    raw = Path(path).read_bytes()
    if version == "raw":
        return name, raw
    doc = _io.load(raw)  # a bad file fails here, with the reason, instead of in the browser
    fmt = "npz" if raw[:2] == b"PK" or raw[:6] == b"\x93NUMPY" else "json"
    if version == "auto":
        if doc.version == 1 or len(doc.sets) > 1:
            return name, raw
        version = "1"
    stem = os.path.splitext(name)[0]
    return f"{stem}.{fmt}", _io.encode(doc, format=fmt, version=int(version))


def parse_range(header: Optional[str], size: int) -> Any:
    """(start, end) inclusive of a single "bytes=a-b" range; None: the whole file; "bad": unsatisfiable."""
    if not header:
        return None
    m = re.match(r"^bytes=(\d*)-(\d*)$", header.strip())
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None if "," in header else "bad"
    if m.group(1) == "":
        start, end = max(0, size - int(m.group(2))), size - 1
    else:
        start = int(m.group(1))
        end = size - 1 if m.group(2) == "" else min(int(m.group(2)), size - 1)
    return "bad" if start >= size or end < start else (start, end)


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "attnviz"
    app: Path
    page: bytes
    data_name: str
    data: Optional[bytes]
    data_path: str
    quiet: bool

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._get(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._get(body=False)

    def _get(self, body: bool) -> None:
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if rel in ("/", "/index.html"):
            return self._send(200, self.page, TYPES[".html"], body)
        ctype = TYPES.get(os.path.splitext(rel)[1], "application/octet-stream")
        if rel == "/data/" + self.data_name:
            if self.data is None:  # safetensors: from disk, a range at a time
                return self._send_file(Path(self.data_path), ctype, body)
            return self._send(200, self.data, ctype, body)
        target = (self.app / rel.lstrip("/")).resolve()
        if self.app not in target.parents or not target.is_file():
            return self._send(404, f"not found: {rel}".encode(), "text/plain; charset=utf-8", body)
        self._send_file(target, TYPES.get(target.suffix, "application/octet-stream"), body)

    def _send_file(self, path: Path, ctype: str, body: bool) -> None:
        st = path.stat()
        rng = parse_range(self.headers.get("Range"), st.st_size)
        if rng == "bad":
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{st.st_size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start, end = rng if rng else (0, st.st_size - 1)
        self.send_response(206 if rng else 200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(max(0, end - start + 1)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{st.st_size:x}-{int(st.st_mtime * 1000):x}"')
        self.send_header("Cache-Control", "no-cache")
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{end}/{st.st_size}")
        self.end_headers()
        if not body:
            return
        with open(path, "rb") as f:
            f.seek(start)
            left = end - start + 1
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)

    def _send(self, status: int, content: bytes, ctype: str, body: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if body:
            self.wfile.write(content)

    def log_message(self, fmt: str, *args: Any) -> None:
        if not self.quiet:
            sys.stderr.write("attnviz: " + (fmt % args) + "\n")


def make_server(path: str, *, app_dir: Any = None, port: int = 8000, version: str = "auto",
                quiet: bool = False) -> http.server.ThreadingHTTPServer:
    """A server (not yet serving) for FILE on 127.0.0.1:port (0 picks a free port)."""
    app = find_app(app_dir).resolve()
    name, data = prepare(path, version)
    quoted = urllib.parse.quote(name)
    handler = type("Handler", (_Handler,), {
        "app": app, "data_name": name, "data": data, "data_path": os.path.abspath(path), "quiet": quiet,
        "page": PAGE.format(title=html.escape(name), data_url=json.dumps("data/" + quoted)).encode("utf-8")})
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve(path: str, *, app_dir: Any = None, port: int = 8000, version: str = "auto", open_browser: bool = False,
          quiet: bool = False, ready: Optional[threading.Event] = None) -> None:
    """Serves the app with FILE preloaded until interrupted; prints the URL."""
    server = make_server(path, app_dir=app_dir, port=port, version=version, quiet=quiet)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"attnviz: serving {path} at {url}  (Ctrl+C to stop)", flush=True)
    if open_browser:
        import webbrowser
        webbrowser.open(url)
    if ready is not None:
        ready.set()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
