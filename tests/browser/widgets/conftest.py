"""The widgets' tests: the widgets fixture lesson (widget_site.py), built once per session, and one page of it
with Python ready that a file's tests share."""

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, protocol_errors
from sites import build_once
from widget_site import LESSON, build_fixture_site, open_page


@pytest.fixture(scope="session")
def widgets_url(tmp_path_factory):
    from sitebuild.server import serve_in_thread

    site = build_once(tmp_path_factory, "widgets-site", lambda out: build_fixture_site(out.parent))
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url
    server.shutdown()


@pytest.fixture()
def phone_before_python(browser, widgets_url):
    """The fixture lesson on a dark 360 px phone whose Python never arrives (its runtime is never answered, so it
    stays loading): the build's pictures, as a reader sees them first. page.errors must stay empty."""
    context = browser.new_context(viewport={"width": 360, "height": 800}, color_scheme="dark")
    context.route("**/pyodide.asm.wasm", lambda route: None)  # never answered: Python stays loading
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(widgets_url + LESSON)
    yield page
    context.close()
    assert page.errors == [], f"uncaught errors in the page: {page.errors}"


@pytest.fixture(scope="module")
def page(browser, widgets_url):
    """One page with Python ready, shared by the tests of a file."""
    context, pg = open_page(browser, widgets_url, viewport={"width": 1000, "height": 900})
    expect(pg.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    yield pg
    unknown = protocol_errors(pg)
    context.close()
    assert not pg.errors, f"uncaught errors in the page: {pg.errors}"
    assert unknown == [], f"messages protocol.js does not define: {unknown}"


@pytest.fixture(scope="session")
def smol_site(tmp_path_factory):
    """The widgets fixture lesson built with SmolLM2's real live files (MiniLM's left out: no test here runs it):
    (its URL, the live files' folder), for the widgets that run SmolLM2 on the reader's text."""
    from sitebuild.realheads import live, smollm2_live
    from sitebuild.realheads.weights import WeightsError
    from sitebuild.server import serve_in_thread

    def left_out(*args, **kwargs):
        raise WeightsError("MiniLM: no test of this folder runs it")

    tmp = tmp_path_factory.mktemp("smol")
    folder = smollm2_live.write_live(download=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(live, "write_live", left_out)
        site = build_fixture_site(tmp, live_model=True)
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url, folder
    server.shutdown()
