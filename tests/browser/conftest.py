"""The browser layer: real Chromium (Playwright, Debian's Chromium: support/browser.py) with a real Pyodide, on
the real site as readers get it (built_site: --snapshot always) and on small fixture sites. Its page objects are
in pages.py; the fixtures several of its files use are here, and components/ and widgets/ have their own pages."""

import shutil

import pytest

from booting import boot_normally, patch_config
from practice_site import build_practice_site
from sites import build_once


@pytest.fixture(scope="session")
def playwright_instance():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance):
    from browser import launch

    b = launch(playwright_instance)
    yield b
    b.close()


def _serve(site, **options):
    from sitebuild.server import serve_in_thread

    return serve_in_thread(site, port=0, quiet=True, **options)


@pytest.fixture()
def serve():
    """Start servers for the test (serve(site, **options) -> base URL); all are stopped afterwards."""
    servers = []

    def start(site, **options):
        server, url = _serve(site, **options)
        servers.append(server)
        return url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site_url(built_site):
    """Base URL of the built site, served with COOP/COEP (cross-origin isolated)."""
    server, url = _serve(built_site, isolate=True)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def plain_site_url(built_site):
    """The same site without COOP/COEP, like most static hosts."""
    server, url = _serve(built_site, isolate=False)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def revisit_site(tmp_path_factory):
    """The real lessons built with --snapshot revisit: a first visit boots Python normally and keeps the snapshot,
    a revisit restores it. Only for the tests of that path (the page config's snapshot fetch is "kept"; the
    files are the same as built_site's, and the build's cache makes this build a short one)."""
    import build

    return build_once(tmp_path_factory, "revisit-site", lambda out: build.build(
        build.Options(out_dir=out, snapshot="revisit", log=lambda *_: None)))


@pytest.fixture()
def serve_copy(revisit_site, tmp_path, serve):
    """serve_copy(isolate, compress=True) -> the URL of a copy of the revisit build served on its own (its service
    worker and caches are the test's); isolate=False is like most static hosts, where Stop restarts Python;
    compress=False like a host that compresses nothing, where the worker picks the deflated archives."""
    copies = iter(range(1_000))

    def serve_one(isolate: bool, compress: bool = True) -> str:
        site = tmp_path / f"site-{next(copies)}"
        shutil.copytree(revisit_site, site)
        return serve(site, isolate=isolate, compress=compress)

    return serve_one


@pytest.fixture()
def fresh_context(browser):
    """A browser context of the test's own: empty storage, cold Python."""
    ctx = browser.new_context()
    yield ctx
    ctx.close()


@pytest.fixture(params=["start", "snapshot"])
def boot_context(request, browser, site_url):
    """A fresh context whose Python boots normally (the page told to restore only what a revisit kept), or restores
    the build's snapshot on this first visit (as readers' pages do; no service worker, so nothing is kept)."""
    if request.param == "start":
        ctx = browser.new_context()
        boot_normally(ctx, site_url)
    else:
        ctx = browser.new_context(service_workers="block")
        patch_config(ctx, site_url, lambda spec: spec.update(fetch="always"))
    yield request.param, ctx
    ctx.close()


@pytest.fixture(scope="session")
def practice_url(tmp_path_factory):
    """The practice fixture lesson (practice_site.py), built once per session and served isolated."""
    from sitebuild.server import serve_in_thread

    site = build_once(tmp_path_factory, "practice-site", build_practice_site)
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url
    server.shutdown()
