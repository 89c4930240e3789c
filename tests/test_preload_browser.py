"""The idle preload (static/js/preload.js): matplotlib is loaded after the reader's first output, in
the worker's idle time; runs pressed meanwhile get their output, and Stop and Restart Python work
as they do without it. Real Chromium, real Pyodide, real clicks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS
from test_page_browser import (  # noqa: F401 - fresh_context is a fixture
    LESSON, cell, fresh_context, open_lesson, python_status, run, set_code, wait_done,
)

pytestmark = pytest.mark.browser

MATPLOTLIB_WHEEL = re.compile(r"/matplotlib-[^/]+\.whl$")
RESTART = "Restart Python (clear all variables)"

# Every request the page posts to its worker, in order, with whether the output cell showed its
# output at that moment (an init script: it runs before the page's own scripts).
POSTED_PROBE = """
window.__posted = [];
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (message, transfer) {
  const out = document.querySelector('[data-cell="output"] .cell-output');
  window.__posted.push([message?.type ?? null, Boolean(out && out.textContent.includes("output shape"))]);
  return post.call(this, message, transfer);
};
"""


def hold_matplotlib(context) -> list:
    """Hold every request for matplotlib's wheel until the test continues it; returns the held routes."""
    held = []
    context.route(MATPLOTLIB_WHEEL, lambda route: held.append(route))
    return held


def wait_until(page, predicate, what, timeout_ms=RUN_TIMEOUT_MS):
    """Let Playwright work (routes, events) until predicate() holds."""
    for _ in range(timeout_ms // 100):
        if predicate():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"waited {timeout_ms} ms for {what}")


def test_nothing_is_preloaded_before_the_first_output(fresh_context, site_url):
    requests = []
    fresh_context.on("request", lambda request: requests.append(request.url))
    page = fresh_context.new_page()
    page.add_init_script(POSTED_PROBE)
    page.goto(site_url + LESSON)
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    # Python is ready and idle, but the reader has run nothing: no matplotlib.
    page.wait_for_timeout(2000)
    assert not [url for url in requests if MATPLOTLIB_WHEEL.search(url)]
    assert page.evaluate("lessonPage.runtime.background.size") == 0

    out = run(page, "output")  # runs the five cells it builds on first
    expect(out).to_contain_text("output shape")
    reply = page.evaluate("lessonPage.preload")  # the promise: waits for the whole preload
    assert "matplotlib" in reply["loaded"]
    assert [url for url in requests if MATPLOTLIB_WHEEL.search(url)]
    posted = page.evaluate("window.__posted")
    preloads = [shown for kind, shown in posted if kind == "preload"]
    assert preloads == [True], posted  # once, and only when the output was on the page
    # Nothing of the preload is the reader's: their next figure is Figure 1, alone under its cell.
    out = run(page, "scores", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint(plt.get_fignums())")
    expect(out).to_contain_text("[1]")
    expect(out.get_by_role("img")).to_have_count(1)
    expect(out.get_by_role("img")).to_have_attribute("alt", re.compile("Figure 1 "))


def test_runs_during_the_preload_get_their_output_and_stop_interrupts_in_place(fresh_context, site_url):
    held = hold_matplotlib(fresh_context)
    page = open_lesson(fresh_context, site_url)
    run(page, "setup", "kept = 'still here'")
    wait_until(page, lambda: held, "the preload's download of matplotlib")
    # The preload is under way (its download held back): a run does not wait for it.
    out = run(page, "scores", "print(kept)")
    expect(out).to_contain_text("still here")
    assert page.evaluate("lessonPage.runtime.background.size") == 1  # the preload still waits for its download
    set_code(page, "softmax", "while True:\n    pass")
    cell(page, "softmax").get_by_role("button", name="Run").click()
    expect(cell(page, "softmax")).to_have_attribute("data-status", "running")
    cell(page, "softmax").get_by_role("button", name="Stop").click()
    expect(cell(page, "softmax")).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(run(page, "scores", "print(kept)")).to_contain_text("still here")  # interrupted in place

    for route in held:
        route.continue_()
    reply = page.evaluate("lessonPage.preload")
    assert "matplotlib" in reply["loaded"]
    out = run(page, "scores", "import matplotlib.pyplot as plt\nplt.imshow([[0, 1], [1, 0]])\nprint(kept)")
    expect(out).to_contain_text("still here")
    expect(out.get_by_role("img")).to_have_count(1)


def test_restart_python_during_the_preload_gives_a_working_interpreter(fresh_context, site_url):
    held = hold_matplotlib(fresh_context)
    page = open_lesson(fresh_context, site_url)
    run(page, "setup")
    wait_until(page, lambda: held, "the preload's download of matplotlib")
    page.get_by_role("button", name=RESTART).click()
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("lessonPage.preload") is None  # given up with its interpreter
    assert page.evaluate("lessonPage.runtime.background.size") == 0
    expect(run(page, "output")).to_contain_text("output shape")
    for route in held:  # the old worker's request: nobody waits for it any more
        try:
            route.continue_()
        except Exception:  # noqa: BLE001 - the request may be gone with its worker
            pass
