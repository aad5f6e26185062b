"""`python3 -m attnviz serve FILE`: the built web app on 127.0.0.1 with FILE preloaded.

GET /            a page that mounts the viewer and opens data/NAME
GET /data/NAME   the attention file (as the viewer reads it, see `version`)
GET /...         the app's files (attnviz.js, attnviz.wasm, attnviz-embed.js, attnviz.css, ...)
"""
from __future__ import annotations

import html
import http.server
import json
import os
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Optional, Tuple

from . import _io
from ._html import find_app

TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".wasm": "application/wasm",
         ".json": "application/json; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".npz": "application/octet-stream", ".npy": "application/octet-stream"}

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
    const response = await fetch(src);
    if (!response.ok) throw new Error('could not fetch ' + src + ': HTTP ' + response.status);
    const name = decodeURIComponent(src.split(/[?#]/)[0].split('/').pop());
    await viewer.openFile(new File([await response.arrayBuffer()], name));
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


def prepare(path: str, version: str = "auto") -> Tuple[str, bytes]:
    """(name, bytes) of the file to serve. version: auto (version 1 for one set, else as it is), 1, 2 or raw."""
    raw = Path(path).read_bytes()
    name = os.path.basename(path)
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


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "attnviz"
    app: Path
    page: bytes
    data_name: str
    data: bytes
    quiet: bool

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if rel in ("/", "/index.html"):
            return self._send(200, self.page, TYPES[".html"])
        if rel == "/data/" + self.data_name:
            return self._send(200, self.data, TYPES.get(os.path.splitext(rel)[1], "application/octet-stream"))
        target = (self.app / rel.lstrip("/")).resolve()
        if self.app not in target.parents or not target.is_file():
            return self._send(404, f"not found: {rel}".encode(), "text/plain; charset=utf-8")
        self._send(200, target.read_bytes(), TYPES.get(target.suffix, "application/octet-stream"))

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(body)

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
        "app": app, "data_name": name, "data": data, "quiet": quiet,
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
