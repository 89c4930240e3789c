"""A development server for site/: the standard library's HTTP server with the headers Pyodide needs.

What it adds to ``SimpleHTTPRequestHandler`` (which already refuses paths outside the
served folder and parses HTTP for us):

* ``.wasm`` as ``application/wasm`` (Pyodide 0.27 hangs on a wrong type) and ``.mjs`` as JS;
* the build's brotli sidecar (``name.br``) when the browser accepts ``br`` (the stored
  archives have one, see ``sitebuild.startup.archives``), else gzip for text and binary assets when it
  accepts that, cached in memory; or, with ``compress=False`` (``--no-compress``), nothing
  compressed at all, as on a host that compresses nothing;
* ``Cache-Control: immutable`` for versioned folders (``pyodide/<version>-<content key>/``,
  ``assets/<hash>/``, ``snapshot/<key>/``) and ``no-cache`` for everything else, so a rebuild is seen at once;
* optionally COOP/COEP, which make the page cross-origin isolated so the Stop button can
  interrupt Python through a SharedArrayBuffer instead of restarting the worker;
* the pages' Content-Security-Policy as a header too (there it can refuse framing);
* no file reached through a symlink that leads out of the served folder;
* a cap on connections, a time limit on idle ones and one on the whole of a request's headers,
  so a few open sockets cannot pile up threads, nor clients that trickle a byte at a time hold every
  slot (each byte restarts the idle limit); and no Python version in the ``Server`` header.
"""

from __future__ import annotations

import gzip
import os
import re
import socket
import threading
import time
from functools import lru_cache, partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path

from .policy import CSP_HEADER

COMPRESSIBLE = {".wasm", ".js", ".mjs", ".json", ".ipynb", ".zip", ".whl", ".css", ".html", ".svg", ".map", ".txt", ".tar", ".snapshot"}
#: Seconds a connection may sit without sending a request before it is closed.
IDLE_TIMEOUT_S = 30
#: Seconds a request's line and headers may take to arrive, all of them: a browser sends them at once.
HEADERS_DEADLINE_S = 10
#: Connections served at once; more wait (up to IDLE_TIMEOUT_S) for a free slot.
MAX_CONNECTIONS = 32
VERSIONED_PATH = re.compile(r"^/(?:[^?#]*/)?(?:pyodide/\d+\.\d+\.\d+-[0-9a-f]{8,}|assets/[0-9a-f]{8,}|snapshot/[0-9a-f]{8,})/")


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
        ".ipynb": "application/x-ipynb+json",  # the lesson as a notebook (sitebuild/pages/notebook.py)
        ".whl": "application/zip",
        ".zip": "application/zip",
        ".svg": "image/svg+xml",
        ".woff2": "font/woff2",
        ".br": "application/octet-stream",  # a sidecar asked for by name, not as an encoding
    }
    isolate = True  # overridden per server by make_server
    compress = True
    quiet = False
    timeout = IDLE_TIMEOUT_S  # socket timeout: an idle connection is dropped
    headers_deadline = HEADERS_DEADLINE_S  # a trickling one too, once its headers take longer than this

    def handle_one_request(self) -> None:
        # The socket timeout starts again with every byte, so it cannot end a request trickled a byte at a
        # time: the server's watch can. It ends when the headers are in (parse_request), not while a body is sent.
        self.server.watch.start(self, self.headers_deadline)
        try:
            super().handle_one_request()
        finally:
            self.server.watch.end(self)

    def parse_request(self) -> bool:
        parsed = super().parse_request()  # reads the headers
        self.server.watch.end(self)
        return parsed

    def version_string(self) -> str:
        return "lesson-dev-server"  # not BaseHTTPServer's "SimpleHTTP/x Python/3.y.z"

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
        if not os.path.isfile(path) or not self._inside_site(path):
            self.send_error(404, "File not found")
            return None
        stat = os.stat(path)
        suffix = Path(path).suffix.lower()
        accepts = self.headers.get("Accept-Encoding", "") if self.compress else ""
        if "br" in accepts and os.path.isfile(path + ".br") and self._inside_site(path + ".br"):
            with open(path + ".br", "rb") as fh:
                body, encoding = fh.read(), "br"
        elif suffix in COMPRESSIBLE and "gzip" in accepts and stat.st_size > 1024:
            body, encoding = _gzipped(path, stat.st_mtime_ns, stat.st_size), "gzip"
        else:
            with open(path, "rb") as fh:
                body, encoding = fh.read(), None
        self.send_response(200)
        content_type = self.guess_type(path)
        self.send_header("Content-Type", content_type)
        if content_type == "text/html":  # pages only: on worker.js it would become the worker's own policy
            self.send_header("Content-Security-Policy", CSP_HEADER)
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Vary", "Accept-Encoding")
        immutable = VERSIONED_PATH.match(self.path)
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if immutable else "no-cache")
        self.end_headers()
        return BytesIO(body)

    def _inside_site(self, path: str) -> bool:
        """Whether *path*, symlinks resolved, is still inside the served folder."""
        root = os.path.realpath(self.directory)
        return os.path.commonpath([root, os.path.realpath(path)]) == root

    def copyfile(self, source, outputfile) -> None:
        try:
            super().copyfile(source, outputfile)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser cancelled the request (navigation, a superseded fetch): nothing to report

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        if not self.quiet:
            super().log_message(format, *args)


class HeadersWatch:
    """One thread for the whole server that hangs up on each connection whose request headers are not in by
    its deadline (a thread per connection would double the threads the cap allows)."""

    POLL_S = 0.2

    def __init__(self):
        self._due: dict = {}  # handler -> monotonic deadline
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        threading.Thread(target=self._run, daemon=True, name="headers-watch").start()

    def stop(self) -> None:
        self._stopped.set()

    def start(self, handler, seconds: float) -> None:
        with self._lock:
            self._due[handler] = time.monotonic() + seconds

    def end(self, handler) -> None:
        with self._lock:
            self._due.pop(handler, None)

    def _run(self) -> None:
        while not self._stopped.wait(self.POLL_S):
            now = time.monotonic()
            with self._lock:
                late = [handler for handler, due in self._due.items() if due <= now]
                for handler in late:
                    del self._due[handler]
            for handler in late:
                try:
                    handler.connection.shutdown(socket.SHUT_RDWR)  # its blocked read returns, the handler ends
                except OSError:
                    pass  # already closed


class CappedThreadingServer(ThreadingHTTPServer):
    """One thread per connection, but at most *max_connections* of them at a time."""

    daemon_threads = True

    def __init__(self, address, handler, max_connections: int = MAX_CONNECTIONS, wait: float = IDLE_TIMEOUT_S):
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(max_connections)
        self._wait = wait
        self.watch = HeadersWatch()

    def server_close(self) -> None:
        super().server_close()
        self.watch.stop()

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(timeout=self._wait):  # still full: drop this one rather than pile up
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def make_server(site: Path, host: str = "127.0.0.1", port: int = 8000, isolate: bool = True,
                quiet: bool = False, idle_timeout: float = IDLE_TIMEOUT_S,
                max_connections: int = MAX_CONNECTIONS, compress: bool = True,
                headers_deadline: float = HEADERS_DEADLINE_S) -> ThreadingHTTPServer:
    """Create (not start) a server for *site*; port 0 picks a free port."""
    handler = type("Handler", (LessonRequestHandler,),
                   {"isolate": isolate, "quiet": quiet, "timeout": idle_timeout, "compress": compress,
                    "headers_deadline": headers_deadline})
    return CappedThreadingServer((host, port), partial(handler, directory=str(site)),
                                 max_connections=max_connections, wait=idle_timeout)


def serve_in_thread(site: Path, **kwargs) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread (for tests); return it and its base URL."""
    server = make_server(site, **kwargs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"
