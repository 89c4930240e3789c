"""Shared pieces of the browser tests: launching Debian's Chromium and waiting on the page.

Playwright's own browser download does not work here, so tests drive the system's
Chromium (``CHROMIUM_PATH``, default /usr/bin/chromium). The flags keep Chromium from
phoning home, which this machine's closed network would refuse anyway.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from playwright.sync_api import expect

CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic",
    # Chromium 156 starts its omnibox's pop-up pages (chrome://omnibox-popup.top-chrome/, two WebUI renderers)
    # in every new browser, headless too: 0.8-0.9 s of CPU in its first seconds, just when a test or a
    # benchmark loads its page (5 s after a launch: 1.71-1.91 s of CPU with them, 0.95-1.02 s without). On a
    # 2-core machine a trace of a lesson's cold load saw them take a core for 1.5 s of its 1.9 s.
    "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup",
]
BOOT_TIMEOUT_MS = 90_000  # Python boots in ~5 s here; a loaded CI machine may take far longer
RUN_TIMEOUT_MS = 30_000


#: The page's bound on a line it composes around a message from Python, read from its one definition.
LINE_CHARS = int(re.search(r"export const LINE_CHARS = (\d+);", (Path(__file__).resolve().parents[2] / "static" / "js"
                                                                  / "page" / "line.js").read_text(encoding="utf-8")).group(1))

#: The code an editor shows, built or not: CodeMirror's lines, or its stand-in's text until it is built.
CODE = ".cm-content, pre.code-standin > code"

#: An endless loop that says when it has begun: a Stop pressed once that line shows lands in the loop (a fixed
#: wait before the Stop could end before the cell's code had even started, on a loaded machine).
LOOP = "print('looping', flush=True)\nwhile True:\n    pass"


def wait_looping(cell) -> None:
    """Wait until `cell`, running LOOP, has printed that its loop began (as long as a run may take to get
    there): a Stop pressed from now on lands in the loop."""
    expect(cell.locator(".cell-output")).to_contain_text("looping", timeout=RUN_TIMEOUT_MS)
    expect(cell).to_have_attribute("data-status", "running")


def paste_code(holder, code: str) -> None:
    """Replace the code of the editor in `holder` (a cell, an exercise) the way a reader pastes it
    in: click it (a stand-in becomes CodeMirror, focused), select all, paste."""
    holder.locator(CODE).first.click()
    # CodeMirror may still be loading (a page just opened, a loaded machine): as long as a run may take.
    expect(holder.locator(".cm-content")).to_be_focused(timeout=RUN_TIMEOUT_MS)
    holder.page.keyboard.press("Control+A")
    holder.page.keyboard.insert_text(code)


def wait_until(page, predicate, what, timeout_ms=RUN_TIMEOUT_MS):
    """Let Playwright work (routes, events) until predicate() holds."""
    for _ in range(timeout_ms // 100):
        if predicate():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"waited {timeout_ms} ms for {what}")


def until_output(look, text, what, timeout_ms=BOOT_TIMEOUT_MS):
    """Call `look()` (a cell's run -> its output locator) until that output holds `text`, for what comes in the
    page's idle time. Idle-time work starts only once no run is pressed (settled.js), so the looks leave it gaps of
    1.5 s: 0.5 s apart, a loaded machine's runs left it none within 30 s (two tests failed so)."""
    import time

    deadline = time.monotonic() + timeout_ms / 1000
    while text not in look().inner_text():
        assert time.monotonic() < deadline, f"{what} (looked for {timeout_ms / 1000:g} s)"
        time.sleep(1.5)


def printed(cell) -> str:
    """What a cell's output region shows: "" when it has shown nothing (cells.js makes it at its first output)."""
    out = cell.locator(".cell-output")
    return out.inner_text() if out.count() else ""


def first_fails(seen: list, status: int = 503, body: str = "unavailable"):
    """A route handler that answers the first request it sees with *status* and lets the others through;
    each request's URL is added to *seen*."""
    def handle(route):
        seen.append(route.request.url)
        if len(seen) == 1:
            route.fulfill(status=status, body=body)
        else:
            route.continue_()
    return handle


def open_tables(scope) -> None:
    """Open every closed <details> in *scope* (a page or a locator) that holds a widget's tables, with a
    click on its summary, as a reader does: a table in a closed <details> is built only when it opens."""
    closed = scope.locator("details:not([open]):has(.attn-table-wrap) > summary")
    unbuilt = scope.locator("details[open] .attn-table-wrap[data-deferred]")  # built on the toggle event, a task later
    while closed.count():
        before = closed.count()
        closed.first.click()
        expect(closed).not_to_have_count(before)
        expect(unbuilt).to_have_count(0)


def build_lesson_site(tmp: Path, lesson: Path, **options) -> Path:
    """Build the one lesson file *lesson* into tmp/site (with build.Options *options*); return the site's folder.
    The page is then at lessons/<the file's stem>/."""
    import build

    (tmp / "lessons").mkdir()
    (tmp / "lessons" / lesson.name).write_text(lesson.read_text(encoding="utf-8"), encoding="utf-8")
    return build.build(build.Options(lessons_dir=tmp / "lessons", out_dir=tmp / "site", log=lambda *_: None,
                                     **options))


def chromium_path() -> str:
    """The Chromium binary to drive, with a clear message when it is missing."""
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError(f"Chromium not found at {path}: `apt-get install chromium` or set CHROMIUM_PATH")
    return path


def launch(playwright):
    """Start headless Chromium for a test session."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


def protocol_errors(page) -> list[str]:
    """Messages the page and its worker exchanged that static/js/shared/protocol.js does not define."""
    return page.evaluate("globalThis.lessonPage?.runtime.protocolErrors ?? []")
