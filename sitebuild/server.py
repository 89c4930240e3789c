"""A development server for site/: the standard library's HTTP server with the headers Pyodide needs.

What it adds to ``SimpleHTTPRequestHandler`` (which already refuses paths outside the
served folder and parses HTTP for us):

* ``.wasm`` as ``application/wasm`` (Pyodide 0.27 hangs on a wrong type) and ``.mjs`` as JS;
* gzip for text and binary assets when the browser accepts it, cached in memory;
* ``Cache-Control: immutable`` for versioned folders (``pyodide/<version>/``,
  ``assets/<hash>/``) and ``no-cache`` for everything else, so a rebuild is seen at once;
* optionally COOP/COEP, which make the page cross-origin isolated so the Stop button can
  interrupt Python through a SharedArrayBuffer instead of restarting the worker.
"""

from __future__ import annotations

import gzip
import os
import re
import threading
from functools import lru_cache, partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path

COMPRESSIBLE = {".wasm", ".js", ".mjs", ".json", ".zip", ".whl", ".css", ".html", ".svg", ".map", ".txt", ".tar"}
VERSIONED_PATH = re.compile(r"^/(?:[^?#]*/)?(?:pyodide/\d+\.\d+\.\d+|assets/[0-9a-f]{8,})/")


@lru_cache(maxsize=256)
def _gzipped(path: str, mtime_ns: int, size: int) -> bytes:
    """Compress a file once per (path, version); level 6 is the usual speed/size trade."""
    with open(path, "rb") as fh:
        return gzip.compress(fh.read(), compresslevel=6, mtime=0)


class LessonRequestHandler(SimpleHTTPRequestHandler):
    """Serve one folder with the right types, compression, caching and isolation headers."""

    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
        ".zip": "application/zip",
        ".svg": "image/svg+xml",
        ".woff2": "font/woff2",
    }
    isolate = True  # overridden per server by make_server
    quiet = False

    def end_headers(self) -> None:
        if self.isolate:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            # Let the standard handler redirect "/lessons/x" to "/lessons/x/" and find index.html.
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()
            path = os.path.join(path, "index.html")
        if not os.path.isfile(path):
            self.send_error(404, "File not found")
            return None
        stat = os.stat(path)
        suffix = Path(path).suffix.lower()
        accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if suffix in COMPRESSIBLE and accepts_gzip and stat.st_size > 1024:
            body, encoding = _gzipped(path, stat.st_mtime_ns, stat.st_size), "gzip"
        else:
            with open(path, "rb") as fh:
                body, encoding = fh.read(), None
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Vary", "Accept-Encoding")
        immutable = VERSIONED_PATH.match(self.path)
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if immutable else "no-cache")
        self.end_headers()
        return BytesIO(body)

    def copyfile(self, source, outputfile) -> None:
        try:
            super().copyfile(source, outputfile)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser cancelled the request (navigation, a superseded fetch): nothing to report

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        if not self.quiet:
            super().log_message(format, *args)


def make_server(site: Path, host: str = "127.0.0.1", port: int = 8000, isolate: bool = True,
                quiet: bool = False) -> ThreadingHTTPServer:
    """Create (not start) a server for *site*; port 0 picks a free port."""
    handler = type("Handler", (LessonRequestHandler,), {"isolate": isolate, "quiet": quiet})
    server = ThreadingHTTPServer((host, port), partial(handler, directory=str(site)))
    server.daemon_threads = True
    return server


def serve_in_thread(site: Path, **kwargs) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread (for tests); return it and its base URL."""
    server = make_server(site, **kwargs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"
