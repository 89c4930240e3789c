"""Offline and revisits: the service worker keeps the lesson after one visit, never a stale page."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, CODE, RUN_TIMEOUT_MS, paste_code
from sitebuild.server import serve_in_thread

pytestmark = pytest.mark.browser
LESSON = "lessons/attention/"


@pytest.fixture(params=[True, False], ids=["compressing-host", "plain-host"])
def own_site(built_site, tmp_path, request):
    """A copy of the built site that the test may change (a "rebuild"), served on its own, compressed
    or not: the worker boots from the stored or the deflated archives, and offline it must find the
    variant it picked in the service worker's caches."""
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    server, url = serve_in_thread(site, port=0, quiet=True, isolate=True, compress=request.param)
    yield site, url, "stored" if request.param else "deflated"
    server.shutdown()
    server.server_close()


def ready(page):
    expect(page.get_by_role("banner").get_by_role("status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)


def run_cell(page, cell_id, code):
    cell = page.locator(f'[data-cell="{cell_id}"]')
    paste_code(cell, code)
    cell.get_by_role("button", name="Run").click()
    expect(cell).to_have_attribute("data-status", "ok", timeout=RUN_TIMEOUT_MS)
    return cell.locator(".cell-output")


def test_after_one_visit_the_lesson_loads_and_runs_offline_and_a_rebuilt_page_is_never_stale(browser, own_site):
    site, url, variant = own_site
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + LESSON)
        ready(page)
        picked = page.evaluate("lessonPage.runtime.info.archives")
        assert picked == {"stdlib": variant, "wheels": variant}
        expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=60_000)
        expect(page.locator(".offline-note")).to_be_visible()

        # A rebuild changes the page: online, the reader gets the new one (pages are network-first).
        html = site / "lessons" / "attention" / "index.html"
        html.write_text(html.read_text(encoding="utf-8").replace("<h1>", "<h1 data-rebuilt>", 1), encoding="utf-8")
        for sidecar in html.parent.glob("index.html.br"):
            sidecar.unlink()  # the sidecar belongs to the old page
        page.reload()
        expect(page.locator("h1[data-rebuilt]")).to_have_count(1)
        ready(page)

        # Offline: the page, its scripts and Python all come from the service worker's caches.
        context.set_offline(True)
        page.reload()
        expect(page.locator("h1[data-rebuilt]")).to_have_count(1)
        ready(page)
        assert page.evaluate("lessonPage.runtime.info.archives") == picked  # the probes, kept, pick the same
        out = run_cell(page, "setup", "import numpy as np\nprint('offline', np.ones((2, 3)).sum())")
        expect(out).to_contain_text("offline 6.0")
        # the notebook is kept beside the page: both downloads work offline, the edited cell in the second
        take_home = page.get_by_role("region", name="Take it home")
        assert page.evaluate("(a) => fetch(a.href).then((r) => r.ok)",
                             take_home.get_by_role("link", name="Download notebook").element_handle())
        with page.expect_download() as info:
            take_home.get_by_role("button", name="Download with my edits").click()
        notebook = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
        assert any("print('offline'" in "".join(c["source"]) for c in notebook["cells"])
        expect(take_home.get_by_role("status")).to_have_text("Saved the notebook with your 1 edited cell.")
        # the widgets' data is kept beside the page too: a widget far down draws offline
        heads = page.locator("#widget-heads")
        heads.scroll_into_view_if_needed()
        expect(heads.locator(".heads-random .heads-panel")).to_have_count(4)
        expect(heads.locator(".widget-error")).to_have_count(0)
    finally:
        context.close()


REST = "python_stdlib_rest.zip"
# Longer than Chromium's HTTP cache makes a second request for a URL wait for the first (about 20 s,
# measured: then it sends its own), so that two overlapping requests of the rest both reach the server.
SLOW_ANSWER_S = 25


@pytest.fixture()
def slow_rest_site(built_site, monkeypatch):
    """The built site, served on its own, its standard library's rest answered SLOW_ANSWER_S late, and
    the list of the server's answers of it."""
    from sitebuild import server as server_module

    served = []
    send_head = server_module.LessonRequestHandler.send_head

    def slow_send_head(handler):
        if handler.path.split("?")[0].endswith(REST):
            served.append(handler.path)
            time.sleep(SLOW_ANSWER_S)
        return send_head(handler)

    monkeypatch.setattr(server_module.LessonRequestHandler, "send_head", slow_send_head)
    server, url = serve_in_thread(built_site, port=0, quiet=True, isolate=True)
    yield url, served
    server.shutdown()
    server.server_close()


def test_a_first_visit_downloads_the_standard_librarys_rest_once(browser, slow_rest_site):
    # The worker downloads the rest after the first output; the service worker keeps it for offline use
    # 1.5 s after Python is ready. A reader who runs a cell at once has both wanting it at the same time.
    url, served = slow_rest_site
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + LESSON)
        ready(page)
        run_cell(page, "average", "print('first')")
        assert page.evaluate("lessonPage.preload") is not None  # the worker's download (and installs) over
        expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=SLOW_ANSWER_S * 2000)
        kept = page.evaluate("""(async () => {
          for (const name of await caches.keys()) {
            for (const request of await (await caches.open(name)).keys()) if (request.url.endsWith("/%s")) return true;
          }
          return false;
        })()""" % REST)
        assert kept  # the service worker keeps it: offline, an import of one of its modules works
        assert len(served) == 1, served
    finally:
        context.close()


def test_a_first_visit_cut_off_before_it_was_kept_says_so_and_keeps_it_once_back_online(browser, site_url):
    # The connection drops after Python is ready and before the service worker has kept the lesson: the page
    # says it is not saved yet, and keeps it when the browser is back online (it used to stay without, silently).
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        ready(page)
        context.set_offline(True)  # the precache starts 1.5 s after Python is ready
        expect(page.locator("body")).to_have_attribute("data-offline", "retrying", timeout=60_000)
        expect(page.locator(".offline-note")).to_have_text(
            "Not saved for offline use yet: the connection dropped. The page tries again when you are back online.")
        context.set_offline(False)
        expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=60_000)
        expect(page.locator(".offline-note")).to_have_text("Saved in this browser: the lesson now works offline too.")
        context.set_offline(True)
        page.reload()
        ready(page)
    finally:
        context.close()


def _refuse_service_workers(browser, site_url):
    # register() resolves but no worker ever becomes active (Playwright's "block" does this): the page says so
    # rather than wait for good on navigator.serviceWorker.ready, holding the background downloads' turn
    # (in-turn.js) 30 s, which a restart's rests used to wait behind
    return browser.new_context(service_workers="block")


def _fail_the_precache(browser, site_url):
    # the service worker's precache fails for a reason other than the connection (here the site's index
    # answers 503 to it; a full storage quota does the same)
    context = browser.new_context()
    context.route(site_url + "index.html", lambda route: route.fulfill(status=503, body="unavailable"))
    return context


@pytest.mark.parametrize("refusal", [_refuse_service_workers, _fail_the_precache], ids=["no-worker", "precache-503"])
def test_a_lesson_the_browser_will_not_keep_online_says_so_without_blaming_the_connection(browser, site_url, refusal):
    # Online, the browser does not keep the lesson: the page says the browser did not keep the files, and does
    # not wait for an "online" that will never come.
    context = refusal(browser, site_url)
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        ready(page)
        expect(page.locator("body")).to_have_attribute("data-offline", "failed", timeout=60_000)
        expect(page.locator(".offline-note")).to_have_text(
            "Not saved for offline use: this browser did not keep the lesson's files (its storage may be full).")
    finally:
        context.close()
