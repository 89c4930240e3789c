"""A lesson page whose editors are held back: CodeMirror's script waits until the test lets it go, so the cells
keep their plain-text stand-ins for as long as a test needs (as on a slow connection before the script has
arrived). For the lazy editors' tests (test_editors_browser.py, test_wrapped_code_browser.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from browser import RUN_TIMEOUT_MS
from pages import LESSON, wait_cells_ready, wait_python_ready


class HeldEditors:
    """Hold back CodeMirror's script in a page until release(); after it, the script goes through. The page may
    not have asked for it yet when the test releases it (editor.js, which imports it, is fetched only when the
    first editor is wanted): a request that came after release() was held for ever, a flaky test."""

    def __init__(self, page):
        self.routes = []
        self.released = False
        page.route("**/vendor/codemirror.js", self._hold)

    def _hold(self, route):
        if self.released:
            route.continue_()
        else:
            self.routes.append(route)

    def release(self):
        self.released = True
        for route in self.routes:
            route.continue_()
        self.routes.clear()


def built(holder):
    """Wait until CodeMirror, let go, has built the editor in `holder` (a cell, or one editor's holder).
    A focus the stand-in held moves to the editor as it is built, in the same task; what takes the time
    is CodeMirror's script arriving, compiling and running on a busy renderer: 0.3 s here on an idle
    renderer, 2.4 s with its CPU throttled tenfold (Emulation.setCPUThrottlingRate, load 13), so past an
    expect's 5 s at load 12-15 on two cores. It may take as long as a run may, as in paste_code."""
    expect(holder.locator(".cm-editor")).to_have_count(1, timeout=RUN_TIMEOUT_MS)


def open_held(context, url, wait_python=True):
    page = context.new_page()
    held = HeldEditors(page)
    page.goto(url + LESSON)
    wait_cells_ready(page)
    if wait_python:
        wait_python_ready(page)
    return page, held


WALK_THROUGH = """async (holder) => {
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const step = innerHeight / 2;
  holder.scrollIntoView({ block: "start" });
  await frames();
  for (let seen = step; seen < holder.getBoundingClientRect().height; seen += step) {
    scrollBy(0, step);
    await frames();
  }
  holder.scrollIntoView({ block: "end" });
  await frames();
}"""

