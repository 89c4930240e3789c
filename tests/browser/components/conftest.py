"""The components' tests: the fixture page (component_page.py), served from the repository as it is."""

import functools
import http.server
import threading

import pytest

from component_page import ROOT, open_fixture


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def base_url():
    """Serve the repository over http on a free loopback port (ES modules need http)."""
    handler = functools.partial(_QuietHandler, directory=str(ROOT))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# `browser` is the session's (tests/browser/conftest.py), like every browser test's: one Playwright per
# run, and a missing Chromium fails the tests with a message instead of skipping them.


@pytest.fixture
def page(browser, base_url):
    """A fresh fixture page; fails the test if any uncaught exception reached the page."""
    context, page, errors = open_fixture(browser, base_url)
    yield page
    context.close()
    assert errors == [], f"uncaught page errors: {errors}"
