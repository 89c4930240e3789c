"""The real-heads widget's "your own sentence" in a real page, with a random MiniLM-shaped weight file.

Why a random file (tests/minilm_random.py) and not the real one: the real 45 MB file is made from a model
wheel that SKIP_MODELS=1 machines do not have, and what these tests check (the site built without the file
says so; the download shows progress, lands in Python, is cached by the browser; Stop during the download
loses nothing; the forward pass in the page gives what CPython gives; 72 heads are drawn) does not depend on
the values. That the real float16 weights give the real attention is tests/test_realheads_models.py's job.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS, protocol_errors
from lessonpy import live
from minilm_random import write_random_live
from test_page_browser import run, set_code
from test_widgets_browser import LESSON, build_fixture_site, real_table, widget, widgets_url  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser
SENTENCE = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def live_site(tmp_path_factory):
    """The widgets fixture lesson, built, with the random live weights where the build puts the real ones."""
    from sitebuild.server import serve_in_thread

    site = build_fixture_site(tmp_path_factory.mktemp("live"))
    folder = write_random_live(site / "data" / "minilm-live", "the cat sat on mat because it was tired .".split())
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url, folder
    server.shutdown()


def ready_page(context, url):
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(url + LESSON)
    expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    return page


def check_clean(page):
    assert not page.errors, f"uncaught errors in the page: {page.errors}"
    assert protocol_errors(page) == [], "messages protocol.js does not define"


def run_live(real, text=SENTENCE):
    real.get_by_role("textbox", name="Your sentence").fill(text)
    real.get_by_role("button", name="Run MiniLM on it").click()


def test_your_sentence_downloads_once_runs_numpy_and_draws_every_head(browser, live_site):
    url, folder = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page = ready_page(context, url)
        real = widget(page, "real")
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "idle")
        expect(real.locator(".realheads-live-status")).to_contain_text("21.4 MB")  # the file's own size
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        assert real.get_attribute("data-live-source") == "network"
        assert real.get_attribute("data-progress") == "1"  # the progress bar went all the way
        expect(real.locator(".realheads-grid canvas")).to_have_attribute("data-heads", "72")
        expected = live.heads(SENTENCE, folder=folder)  # CPython, the same NumPy code and weights
        expect(real.locator(".realheads-tokens")).to_contain_text(" ".join(expected["tokens"]))
        layer, head = map(int, real.get_attribute("data-open").split(","))
        np.testing.assert_allclose(real_table(real), expected["arrays"]["weights"][layer, head], atol=1e-5)
        expect(real.locator(".realheads-table caption")).to_contain_text(
            f"layer {layer}, head {head} (counted from 0): attention weights on your sentence, computed live")
        # again: the file is already in Python's file system
        run_live(real, "it was tired")
        expect(real.locator(".realheads-tokens")).to_contain_text("[CLS] it was tired [SEP]", timeout=RUN_TIMEOUT_MS)
        assert real.get_attribute("data-live-source") == "python"
        check_clean(page)
        # a new visit: the browser's Cache Storage has the file, nothing is downloaded
        page.close()
        page = ready_page(context, url)
        real = widget(page, "real")
        real.scroll_into_view_if_needed()
        requests = []
        page.on("request", lambda r: requests.append(r) if r.method == "GET" and "minilm-live.safetensors" in r.url else None)
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS)
        assert real.get_attribute("data-live-source") == "cache" and requests == []
        check_clean(page)
    finally:
        context.close()


def test_stop_during_the_download_loses_nothing(browser, live_site):
    url, folder = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    held = []
    context.route("**/minilm-live.safetensors", lambda route: held.append(route)
                  if route.request.method == "GET" else route.continue_())  # the download hangs
    try:
        page = ready_page(context, url)
        run(page, "seeded")  # something to lose: Q, K, V of the seeded example
        real = widget(page, "real")
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "idle")
        run_live(real)
        expect(real).to_have_attribute("data-live", "downloading", timeout=RUN_TIMEOUT_MS)
        page.wait_for_timeout(300)  # the request is out and held
        assert held, "the download was not asked for"
        real.get_by_role("button", name="Stop").click()
        expect(real).to_have_attribute("data-live", "stopped", timeout=RUN_TIMEOUT_MS)
        expect(real.locator(".realheads-live-status")).to_contain_text("Nothing is lost")
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        # the earlier cell's arrays were replayed into the new Python
        output = run(page, "seeded", "print(Q.shape)")
        expect(output).to_contain_text("(6, 8)")
        # and the download works once the network answers
        context.unroute("**/minilm-live.safetensors")  # the held request died with the old worker
        run_live(real)
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS * 2)
        assert real.get_attribute("data-live-source") == "network"  # a cut-short download was not cached
        expect(real.locator(".realheads-grid canvas")).to_have_attribute("data-heads", "72")
        check_clean(page)
    finally:
        context.close()


def test_a_site_built_without_the_live_model_says_so(browser, widgets_url):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(widgets_url + LESSON)
        real = widget(page, "real")
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "absent")
        expect(real.locator(".realheads-live-progress")).to_be_hidden()  # nothing is downloading
        expect(real.locator(".realheads-live-status")).to_contain_text("built without MiniLM's live weights")
        expect(real.get_by_role("button", name="Run MiniLM on it")).to_be_disabled()
    finally:
        context.close()


def test_stop_during_the_forward_pass_loses_nothing(browser, live_site):
    url, _ = live_site
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    try:
        page = ready_page(context, url)
        run(page, "seeded")
        real = widget(page, "real")
        real.scroll_into_view_if_needed()
        expect(real).to_have_attribute("data-live", "idle")
        long = " ".join(["the cat sat on the mat because it was tired ."] * 11)  # 123 tokens: seconds of NumPy
        run_live(real, long)
        expect(real).to_have_attribute("data-live", "running", timeout=RUN_TIMEOUT_MS * 2)
        real.get_by_role("button", name="Stop").click()
        expect(real).to_have_attribute("data-live", "stopped", timeout=RUN_TIMEOUT_MS)
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        expect(run(page, "seeded", "print(Q.shape)")).to_contain_text("(6, 8)")
        run_live(real, "the cat sat")
        expect(real).to_have_attribute("data-live", "done", timeout=RUN_TIMEOUT_MS)
        expect(real.locator(".realheads-tokens")).to_contain_text("[CLS] the cat sat [SEP]")
        check_clean(page)
    finally:
        context.close()
