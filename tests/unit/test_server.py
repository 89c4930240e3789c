"""The development server: types, compression, caching, isolation, and no escaping site/."""

import gzip
import http.client
from urllib.parse import urlparse

import pytest

from sitebuild.server import serve_in_thread


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A small site, shared by the module's tests (none of them writes to it)."""
    tmp_path = tmp_path_factory.mktemp("served")
    root = tmp_path / "site"
    (root / "pyodide" / "0.27.7-0123456789abcdef").mkdir(parents=True)
    (root / "pyodide" / "0.27.7-0123456789abcdef" / "pyodide.asm.wasm").write_bytes(b"\0asm" + b"\1" * 5000)
    (root / "pyodide" / "0.27.7").mkdir(parents=True)  # a folder not named by its content
    (root / "pyodide" / "0.27.7" / "pyodide.mjs").write_text("export {};\n")
    (root / "assets" / "0123456789ab" / "js").mkdir(parents=True)
    (root / "assets" / "0123456789ab" / "js" / "page.js").write_text("export const x = 1;\n" * 200)
    (root / "snapshot" / "0123456789abcdef").mkdir(parents=True)
    (root / "snapshot" / "0123456789abcdef" / "python.snapshot").write_bytes(b"\0" * 5000)
    (root / "lessons" / "a").mkdir(parents=True)
    (root / "lessons" / "a" / "index.html").write_text("<!doctype html><p>lesson</p>")
    (root / "index.html").write_text("<!doctype html><p>home</p>")
    (tmp_path / "secret.txt").write_text("outside the site")
    return root


def request(base, path, headers=None, method="GET"):
    parts = urlparse(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.request(method, path, headers=headers or {})  # path sent as-is, even with ../
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response, body


@pytest.fixture(scope="module")
def server(site):
    """One server for the module: each shutdown waits out serve_forever's 0.5 s poll."""
    srv, url = serve_in_thread(site, port=0, quiet=True)
    yield url
    srv.shutdown()
    srv.server_close()


def test_wasm_is_served_as_application_wasm_gzipped_and_immutable(server):
    response, body = request(server, "/pyodide/0.27.7-0123456789abcdef/pyodide.asm.wasm", {"Accept-Encoding": "gzip, br"})
    assert response.status == 200
    assert response.getheader("Content-Type") == "application/wasm"
    assert response.getheader("Content-Encoding") == "gzip"
    assert gzip.decompress(body).startswith(b"\0asm") and len(body) < 1000
    assert "immutable" in response.getheader("Cache-Control")


def test_only_a_pyodide_folder_named_by_its_content_is_immutable(server):
    # The build names the folder <version>-<content key>: a folder named by the version alone may
    # change content with the build's settings, so it must be revalidated.
    response, _ = request(server, "/pyodide/0.27.7/pyodide.mjs")
    assert response.status == 200 and response.getheader("Cache-Control") == "no-cache"


def test_hashed_assets_are_immutable_and_pages_are_revalidated(server):
    response, _ = request(server, "/assets/0123456789ab/js/page.js")
    assert response.getheader("Content-Type") == "text/javascript"
    assert "immutable" in response.getheader("Cache-Control")
    response, _ = request(server, "/lessons/a/")
    assert response.getheader("Cache-Control") == "no-cache"


def test_the_memory_snapshot_named_by_its_key_is_immutable_and_compressed(server):
    response, body = request(server, "/snapshot/0123456789abcdef/python.snapshot", {"Accept-Encoding": "gzip"})
    assert response.status == 200 and "immutable" in response.getheader("Cache-Control")
    assert response.getheader("Content-Encoding") == "gzip" and gzip.decompress(body) == b"\0" * 5000


def test_no_compression_unless_asked(server):
    response, body = request(server, "/assets/0123456789ab/js/page.js")
    assert response.getheader("Content-Encoding") is None and body.startswith(b"export")


def test_isolation_headers_on_by_default(server):
    response, _ = request(server, "/")
    assert response.getheader("Cross-Origin-Opener-Policy") == "same-origin"
    assert response.getheader("Cross-Origin-Embedder-Policy") == "require-corp"


def test_isolation_headers_can_be_turned_off(site):
    srv, url = serve_in_thread(site, port=0, quiet=True, isolate=False)
    try:
        response, _ = request(url, "/")
        assert response.getheader("Cross-Origin-Embedder-Policy") is None
    finally:
        srv.shutdown()
        srv.server_close()


def test_directory_without_slash_redirects_and_index_is_found(server):
    response, _ = request(server, "/lessons/a")
    assert response.status == 301 and response.getheader("Location") == "/lessons/a/"
    response, body = request(server, "/lessons/a/")
    assert response.status == 200 and b"lesson" in body


@pytest.mark.parametrize("path", ["/../secret.txt", "/%2e%2e/secret.txt", "/lessons/../../secret.txt", "/..%2fsecret.txt"])
def test_paths_outside_site_are_refused(server, path):
    response, body = request(server, path)
    assert b"outside the site" not in body
    assert response.status == 404


def test_missing_file_is_404(server):
    response, _ = request(server, "/nope.js")
    assert response.status == 404


def test_head_sends_headers_only(server):
    response, body = request(server, "/index.html", method="HEAD")
    assert response.status == 200 and body == b"" and int(response.getheader("Content-Length")) > 0


def test_symlinks_out_of_the_site_are_not_followed(site):
    (site / "leak.txt").symlink_to(site.parent / "secret.txt")
    (site / "outside").symlink_to(site.parent, target_is_directory=True)
    (site / "alias.html").symlink_to(site / "index.html")  # a link that stays inside is fine
    srv, url = serve_in_thread(site, port=0, quiet=True)
    try:
        for path in ("/leak.txt", "/outside/secret.txt"):
            response, body = request(url, path)
            assert response.status == 404 and b"outside the site" not in body, path
        response, body = request(url, "/alias.html")
        assert response.status == 200 and b"home" in body
    finally:
        srv.shutdown()
        srv.server_close()


def test_pages_carry_the_csp_as_a_header_with_frame_ancestors(server):
    from sitebuild.policy import CSP
    response, _ = request(server, "/lessons/a/")
    assert response.getheader("Content-Security-Policy") == CSP + "; frame-ancestors 'none'"
    # scripts (the worker above all) keep their own policy: a page's CSP header on them would bind the worker
    response, _ = request(server, "/assets/0123456789ab/js/page.js")
    assert response.getheader("Content-Security-Policy") is None


def test_server_header_names_no_python_version(server):
    response, _ = request(server, "/")
    assert "Python" not in response.getheader("Server") and "/" not in response.getheader("Server")


def test_idle_connections_are_closed_and_connections_are_capped(site):
    import socket
    import threading
    import time
    srv, url = serve_in_thread(site, port=0, quiet=True, idle_timeout=1, max_connections=2)
    host, port = srv.server_address[:2]
    try:
        before = threading.active_count()
        idle = [socket.create_connection((host, port), timeout=10) for _ in range(5)]  # send nothing
        time.sleep(0.5)
        assert threading.active_count() - before <= 2, "one thread per idle connection"
        started = time.perf_counter()
        for sock in idle:  # the server hangs up on each: timed out, or dropped while every slot was taken
            assert sock.recv(1) == b""
        assert time.perf_counter() - started < 9
        response, body = request(url, "/")  # and still serves
        assert response.status == 200 and b"home" in body
        for sock in idle:
            sock.close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_clients_that_trickle_their_headers_cannot_starve_a_reader(site):
    # Each byte restarts the idle limit, so only a deadline on the whole of the headers frees their slots:
    # with every slot held by such clients, a reader is still served soon after that deadline.
    import socket
    import threading
    import time
    srv, url = serve_in_thread(site, port=0, quiet=True, idle_timeout=5, max_connections=2, headers_deadline=1)
    host, port = srv.server_address[:2]
    stop = threading.Event()

    def trickle():
        try:
            with socket.create_connection((host, port), timeout=10) as sock:
                for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"a" * 200:
                    if stop.wait(0.2):
                        return
                    sock.sendall(bytes([byte]))
        except OSError:
            pass  # hung up on: the deadline did its job

    clients = [threading.Thread(target=trickle, daemon=True) for _ in range(4)]
    try:
        for client in clients:
            client.start()
        time.sleep(0.5)  # both slots are taken by tricklers
        started = time.perf_counter()
        response, body = request(url, "/")
        assert response.status == 200 and b"home" in body
        assert time.perf_counter() - started < 4, "a reader waited for the tricklers"
    finally:
        stop.set()
        srv.shutdown()
        srv.server_close()


def test_a_brotli_sidecar_is_sent_to_browsers_that_accept_br(site):
    import brotli

    js = site / "assets" / "0123456789ab" / "js" / "page.js"
    (js.parent / "page.js.br").write_bytes(brotli.compress(js.read_bytes()))
    srv, url = serve_in_thread(site, port=0, quiet=True)
    try:
        response, body = request(url, "/assets/0123456789ab/js/page.js", {"Accept-Encoding": "gzip, deflate, br"})
        assert response.getheader("Content-Encoding") == "br"
        assert response.getheader("Content-Type") == "text/javascript"
        assert brotli.decompress(body) == js.read_bytes()
        # A browser that does not accept br gets gzip, from the same file.
        response, body = request(url, "/assets/0123456789ab/js/page.js", {"Accept-Encoding": "gzip"})
        assert response.getheader("Content-Encoding") == "gzip"
        assert gzip.decompress(body) == js.read_bytes()
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_stored_archive_goes_out_as_brotli_and_nothing_is_compressed_with_compress_off(site):
    import brotli

    folder = site / "pyodide" / "0.27.7-0123456789abcdef" / "stored"
    folder.mkdir(exist_ok=True)
    archive = folder / "python_stdlib.zip"
    archive.write_bytes(b"PK" + b"stored entries of the standard library " * 400)
    (folder / "python_stdlib.zip.br").write_bytes(brotli.compress(archive.read_bytes()))
    path = "/pyodide/0.27.7-0123456789abcdef/stored/python_stdlib.zip"
    srv, url = serve_in_thread(site, port=0, quiet=True)
    plain, plain_url = serve_in_thread(site, port=0, quiet=True, compress=False)
    try:
        response, body = request(url, path, {"Accept-Encoding": "gzip, deflate, br"})
        assert response.getheader("Content-Encoding") == "br"
        assert response.getheader("Content-Type") == "application/zip"
        assert brotli.decompress(body) == archive.read_bytes() and len(body) < 1000
        for method in ("GET", "HEAD"):
            for name in (path, "/assets/0123456789ab/js/page.js"):
                response, body = request(plain_url, name, {"Accept-Encoding": "gzip, deflate, br"}, method)
                assert response.status == 200 and response.getheader("Content-Encoding") is None
                assert int(response.getheader("Content-Length")) == (site / name.lstrip("/")).stat().st_size
    finally:
        for server in (srv, plain):
            server.shutdown()
            server.server_close()
