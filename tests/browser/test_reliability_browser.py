"""Stop, floods and storage never cost the reader their work: the page attacked as an unlucky
reader would, in a real Chromium with a real Pyodide, with and without cross-origin isolation
where the behaviour differs (with it, Stop interrupts Python in place; without, it restarts).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, CODE, LINE_CHARS, LOOP, RUN_TIMEOUT_MS, paste_code, printed, wait_looping, wait_until
from lessonpy.runtime.limits import FIGURES_PER_RUN, MESSAGE_CHARS, OUTPUT_CHARS
from pages import Cell, open_lesson, python_status
from practice_site import exercise

pytestmark = pytest.mark.browser

# Code that says when its loop has begun, as LOOP does (browser.wait_looping): a Stop pressed from then on lands
# in the loop. (Pressed before the worker had taken the run, a Stop ends it before it starts, in place.)
LOOP_START = LOOP.split("\n", 1)[0] + "\n"
# Code that shrugs off KeyboardInterrupt: even with isolation, Stop ends in a restart.
STUBBORN = LOOP_START + "while True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        pass"

# What a terminated worker can still deliver: Pyodide's late NoGilError, a "fatal" event, a
# fatal reply. Dispatched on the old Worker object, as the browser delivers them.
LATE_EVENTS = """() => {
  const old = window.oldWorker;
  old.dispatchEvent(new ErrorEvent("error", { message: "NoGilError: Attempted to use PyProxy when Python GIL not held" }));
  old.dispatchEvent(new MessageEvent("message", { data: { type: "fatal", error: "late" } }));
  old.dispatchEvent(new MessageEvent("message", { data: { id: 0, ok: false, error: "late reply", fatal: true } }));
}"""


@pytest.fixture(params=["isolated", "plain"])
def any_site(request):
    """The site with and without COOP/COEP."""
    return request.getfixturevalue("site_url" if request.param == "isolated" else "plain_site_url")


def count_boots(page):
    """From now on, count the interpreters the page starts (each restart starts one)."""
    page.evaluate("""() => {
      window.boots = 0;
      lessonPage.runtime.addEventListener("status", (e) => { if (e.detail.stage === "Starting") window.boots += 1; });
    }""")


def boots(page) -> int:
    return page.evaluate("window.boots")


def start(page, cell_id, code):
    """Set the code, press Run, and wait until Python is running it: for code that says when its loop has begun
    (LOOP, STUBBORN), until it has."""
    Cell(page, cell_id).set_code(code)
    Cell(page, cell_id).locator.get_by_role("button", name="Run").click()
    expect(Cell(page, cell_id).locator).to_have_attribute("data-status", "running")
    if code.startswith(LOOP_START):
        wait_looping(Cell(page, cell_id).locator)


def stop(page, cell_id, status="stopped"):
    Cell(page, cell_id).locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, cell_id).locator).to_have_attribute("data-status", status, timeout=15_000)


def isolated(shared_page):
    """The shared isolated page, for a test whose subject does not depend on isolation ("plain" skips)."""
    if not shared_page.isolated:
        pytest.skip("the same without isolation: run once, on the isolated page")
    return shared_page


def name(page, cell_id) -> str:
    """The name the cell shows ("Cell 3"), the one the page's messages call it by."""
    return Cell(page, cell_id).locator.locator(".cell-name").text_content()  # far cells are skipped: not innerText


def named_cells_are_on_the_page(page, message: str) -> list[str]:
    """Every cell a message names ("Cell 3"), each found on the page, at one cell, by that name."""
    names = re.findall(r"\bCell \d+\b", message)
    for shown in names:
        label = page.locator(".cell .cell-name", has_text=re.compile(rf"^{shown}$"))
        expect(label).to_have_count(1)
        label.scroll_into_view_if_needed()
        expect(label).to_be_visible()
    return names


def ready(page):
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)


# ---------------------------------------------------------------------------- 1. restarts

def test_a_stopped_workers_late_error_never_touches_the_new_python(shared):
    pg = shared
    before = boots(pg)
    Cell(pg, "setup").run("kept = 41")
    start(pg, "scores", STUBBORN)
    pg.evaluate("() => { window.oldWorker = lessonPage.runtime.worker; }")
    stop(pg, "scores")
    pg.evaluate(LATE_EVENTS)  # while the new interpreter boots
    ready(pg)
    pg.evaluate(LATE_EVENTS)  # and once it is ready
    out = Cell(pg, "softmax").run("print('kept is', kept)")
    expect(out).to_contain_text("kept is 41")
    expect(python_status(pg)).to_have_attribute("data-state", "ready")
    assert boots(pg) - before == 1


def test_a_stopped_worker_that_runs_on_cannot_take_the_next_stop(shared):
    # A terminated worker runs on for a moment (~2 s in Chromium), still polling the interrupt buffer it was
    # given: one that ignores KeyboardInterrupt took a Stop pressed soon after the restart, if the new worker
    # shared its buffer, and the new one was restarted too. Each worker has a buffer of its own.
    pg = shared
    if not pg.isolated:
        pytest.skip("without cross-origin isolation there is no interrupt buffer: every Stop restarts Python")
    Cell(pg, "setup").run("kept = 'once'")
    start(pg, "scores", STUBBORN)
    pg.evaluate("() => { window.oldBuffer = lessonPage.runtime.interruptBuffer; }")
    stop(pg, "scores")
    ready(pg)
    assert pg.evaluate("() => lessonPage.runtime.interruptBuffer.buffer !== window.oldBuffer.buffer")
    before = boots(pg)
    start(pg, "softmax", LOOP)  # at once, while the old worker may still be spinning
    stop(pg, "softmax")
    ready(pg)
    assert boots(pg) == before  # stopped in place, by its own buffer
    expect(Cell(pg, "output").run("print('kept is', kept)")).to_contain_text("kept is once")


@pytest.fixture(scope="module", params=["isolated", "plain"])
def shared(request, browser):
    """One lesson page per isolation mode, shared by the restart-path tests and by those that need no fresh
    interpreter (one page each saves a boot per test; those that do not depend on the mode skip "plain")."""
    url = request.getfixturevalue("site_url" if request.param == "isolated" else "plain_site_url")
    ctx = browser.new_context()
    pg = open_lesson(ctx, url)
    count_boots(pg)
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.isolated = request.param == "isolated"
    yield pg
    ctx.close()
    assert not errors, errors


@pytest.mark.parametrize("code", [
    pytest.param("import time\ntime.sleep(10**6)", id="sleep"),
    pytest.param("import numpy as np\na = np.random.rand(1200, 1200)\nwhile True:\n    a = a @ a / 1200", id="numpy-busy"),
    pytest.param(STUBBORN, id="sigint-ignored"),
])
def test_stop_ends_the_code_and_keeps_the_readers_variables(shared, code):
    pg = shared
    Cell(pg, "setup").run("kept = 'survived'")
    before = boots(pg)
    start(pg, "scores", code)
    stop(pg, "scores")
    assert Cell(pg, "scores").code() == code  # nothing of the reader's code is lost
    ready(pg)
    assert boots(pg) - before <= 1  # an interrupt in place, or exactly one restart
    if not pg.isolated or code == STUBBORN:
        assert boots(pg) - before == 1
        expect(Cell(pg, "scores").locator.locator(".out-hint")).to_contain_text("Python restarted and re-ran Cell")
    out = Cell(pg, "softmax").run("print('kept is', kept)")
    expect(out).to_contain_text("kept is survived")


def test_an_interrupt_that_took_while_the_page_was_busy_is_no_restart(shared):
    # A loaded machine: the interrupt takes at once, but the page's thread is busy past the Stop's grace
    # (here 3 s of script), so the grace's timer and the worker's reply are both due when it is free again.
    # The worker answers the page's ping after its reply: the run ends stopped, in place, no restart. (Chromium
    # handled the queued reply before the timer here even without the ping; this holds the behaviour, whichever
    # order a browser takes them in.)
    pg = shared
    if not pg.isolated:
        pytest.skip("without cross-origin isolation every Stop restarts Python")
    Cell(pg, "setup").run("kept = 'in place'")
    before = boots(pg)
    start(pg, "scores", LOOP)
    Cell(pg, "scores").locator.get_by_role("button", name="Stop").click()
    pg.evaluate("() => { const t = performance.now(); while (performance.now() - t < 3000); }")
    expect(Cell(pg, "scores").locator).to_have_attribute("data-status", "stopped")
    pg.wait_for_timeout(3000)  # the ping's own wait, were it to end in a restart
    ready(pg)
    assert boots(pg) == before
    expect(Cell(pg, "scores").locator).not_to_contain_text("restart")
    expect(Cell(pg, "softmax").run("print('kept is', kept)")).to_contain_text("kept is in place")


def test_a_fatal_error_restarts_once_and_says_what_was_rerun(shared):
    pg = shared
    Cell(pg, "setup").run("kept = 'after the crash'")
    before = boots(pg)
    out = Cell(pg, "scores").run("import os\nos._exit(1)")
    expect(out.locator(".out-error")).to_contain_text("Python crashed")
    expect(out.locator(".out-error")).to_contain_text("re-ran Cell", timeout=BOOT_TIMEOUT_MS)
    ready(pg)
    out = Cell(pg, "softmax").run("print(kept)")
    expect(out).to_contain_text("after the crash")
    assert boots(pg) - before == 1


def test_stop_twice_is_one_stop(shared):
    pg = shared
    Cell(pg, "setup").run("kept = 'twice'")
    before = boots(pg)
    start(pg, "scores", STUBBORN)
    # Two presses before the page can react: the second must add nothing.
    Cell(pg, "scores").locator.locator(".cell-stop").evaluate("b => { b.click(); b.click(); }")
    expect(Cell(pg, "scores").locator).to_have_attribute("data-status", "stopped", timeout=15_000)
    ready(pg)
    out = Cell(pg, "softmax").run("print(kept)")
    expect(out).to_contain_text("twice")
    assert boots(pg) - before == 1


def test_stop_during_a_restart_cancels_only_what_it_started(fresh_context, plain_site_url):
    pg = open_lesson(fresh_context, plain_site_url)
    count_boots(pg)
    # The cell's run goes through; its replay after the restart waits on the gate, so Python is restarting for
    # as long as the test needs (a restart restored from the snapshot can be over before the next click).
    replay = Gate(pg.context, let_through=1)
    try:
        Cell(pg, "setup").run("kept = 'during'\n" + GATED_CELL)
        start(pg, "scores", "while True:\n    pass")
        stop(pg, "scores")
        # Python is restarting: a cell run now waits, and its Stop cancels it, nothing more.
        Cell(pg, "softmax").set_code("print('should not run')")
        Cell(pg, "softmax").locator.get_by_role("button", name="Run").click()
        expect(Cell(pg, "softmax").locator.locator(".cell-state")).to_have_text("Waiting…")
        stop(pg, "softmax", status="cancelled")
        wait_until(pg, lambda: replay.held, "the replay of the first cell", timeout_ms=BOOT_TIMEOUT_MS)
    finally:
        replay.release()
    ready(pg)
    out = Cell(pg, "output").run("print(kept)")
    expect(out).to_contain_text("during")
    assert "should not run" not in printed(Cell(pg, "softmax").locator)
    assert boots(pg) == 1


# ---------------------------------------------------------------------------- 2. output caps

def test_one_huge_write_is_cut_before_it_reaches_the_page(shared):
    out = Cell(shared, "output").run("print('x' * 3 * 10**7)")
    cut = 3 * 10**7 + 1 - OUTPUT_CHARS  # the x's and print's newline, less what is shown
    expect(out.locator(".out-cut")).to_have_text(f"[output cut: {cut:,} more characters were not shown]")
    assert len(out.locator(".out-stdout").inner_text()) <= OUTPUT_CHARS
    out = Cell(shared, "output").run("import sys\nprint('a' * 150_000)\nprint('b' * 150_000, file=sys.stderr)\nprint('end')")
    # stdout and stderr share one budget per run; the note adds up what was cut
    cut = 2 * 150_001 + len("end\n") - OUTPUT_CHARS
    expect(out.locator(".out-cut")).to_have_text(f"[output cut: {cut:,} more characters were not shown]")
    out = Cell(shared, "output").run("raise ValueError('e' * 10**7)")
    expect(out.locator(".out-error")).to_contain_text(" characters not shown] … eee")
    assert len(out.locator(".out-error").inner_text()) < OUTPUT_CHARS + 1_000


def test_a_100_million_character_print_leaves_the_tab_alive(shared):
    pg = isolated(shared)
    out = Cell(pg, "output").run("print('x' * 10**8)")
    expect(out.locator(".out-cut")).to_have_text("[output cut: 99,800,001 more characters were not shown]")
    out = Cell(pg, "output").run("print('still alive')")
    expect(out).to_contain_text("still alive")


def text_length(locator) -> int:
    """How long the text shown is (read in the page: a 10-million character text is not sent to the test)."""
    return locator.evaluate("e => e.textContent.length")


def test_a_huge_exception_message_or_class_name_is_clipped_and_the_page_answers(shared):
    pg = isolated(shared)
    out = Cell(pg, "output").run("def f():\n    raise ValueError('e' * 10**7)\nf()")
    error = out.locator(".out-error")
    assert text_length(error) < 2 * MESSAGE_CHARS  # the message clipped in Python, the traceback kept
    expect(error).to_contain_text('line 3')
    expect(error).to_contain_text(" characters not shown] … eee")
    out = Cell(pg, "output").run("raise type('E' * 10**7, (Exception,), {})('boom')")
    expect(out.locator(".out-error")).to_contain_text("characters not shown")  # the name as Python clipped it
    state = Cell(pg, "output").locator.locator(".cell-state")
    expect(state).to_contain_text("…: see the output below.")  # the line around it cut to a glance (line.js)
    assert text_length(state) <= LINE_CHARS
    out = Cell(pg, "output").run("print('still answering')")
    expect(out).to_contain_text("still answering")


def test_a_run_shows_at_most_its_figures(shared):
    pg = isolated(shared)
    Cell(pg, "output").set_code(f"import matplotlib.pyplot as plt\nfor _ in range({FIGURES_PER_RUN + 5}):\n"
                           "    plt.figure(figsize=(1, 1))")
    Cell(pg, "output").locator.get_by_role("button", name="Run").click()
    out = Cell(pg, "output").wait_done(timeout=120_000)  # the first import loads matplotlib: slow
    expect(out.get_by_role("img")).to_have_count(FIGURES_PER_RUN)
    expect(out).to_contain_text(f"[5 more figures were not shown: a run shows at most {FIGURES_PER_RUN}")
    # the worker holds the cap too, for figures sent some other way
    out = Cell(pg, "output").run("from lessonpy.runtime import bridge\nfor _ in range(100):\n"
                            "    bridge.emit('figure', {'format': 'png', 'data': b'not a png'})")
    expect(out.locator(".out-error")).to_contain_text(f"a run shows at most {FIGURES_PER_RUN} figures")
    expect(out.get_by_role("img")).to_have_count(FIGURES_PER_RUN)


def test_a_page_older_than_its_site_says_to_reload(shared):
    # After a rebuild, Pyodide's versioned folder of an open tab is gone: the server answers 404 for what the
    # page asks next. The cell says the site changed and to reload, not only "No module named 'micropip'".
    pg = isolated(shared)
    gone = re.compile(r".*/pyodide/.+/micropip-[^/]+\.whl$")  # in an archive variant's folder too
    pg.context.route(gone, lambda route: route.fulfill(status=404, body="File not found"))
    try:
        out = Cell(pg, "output").run("import micropip")
        expect(out).to_contain_text("The site was rebuilt after this page was opened: micropip-")
        expect(out).to_contain_text("Reload the page to get the new version")
    finally:
        pg.context.unroute(gone)
    expect(Cell(pg, "output").run("print('still here', 2 + 2)")).to_contain_text("still here 4")


FAILED_DOWNLOADS = {
    # the lesson's wheel answers 503: the status names the answer
    "wheel-503": (re.compile(r".*/lessonpy-[^/]+\.whl$"), lambda route: route.fulfill(status=503, body="unavailable"), "503"),
    # the wasm's connection drops: Pyodide's own instantiation only warned and the page sat at 25 % for 180 s
    "wasm-dropped": (re.compile(r".*/pyodide\.asm\.wasm$"), lambda route: route.abort("connectionreset"),
                     "the download of Python's engine (pyodide.asm.wasm) failed: the connection was lost"),
}


@pytest.mark.parametrize("case", FAILED_DOWNLOADS)
def test_a_first_visit_whose_download_failed_says_so_and_try_again_boots_it(browser, site_url, case):
    # A file Python needs does not download: Python could not start, and says so at once; "Try again" boots it,
    # and the page then keeps the lesson for offline use as any visit does (after a failed first start it never did).
    pattern, fail, message = FAILED_DOWNLOADS[case]
    context = browser.new_context()
    try:
        failing = [True]
        context.route(pattern, lambda route: fail(route) if failing[0] else route.continue_())
        pg = context.new_page()
        pg.goto(site_url + "lessons/attention/")
        status = python_status(pg)
        expect(status).to_contain_text("Python could not start: ", timeout=60_000)  # not the 180 s stall timer
        expect(status).to_contain_text(message)
        failing[0] = False
        status.get_by_role("button", name="Try again").click()
        ready(pg)
        expect(Cell(pg, "setup").run("print('after the retry', 1 + 1)")).to_contain_text("after the retry 2")
        expect(pg.locator("body")).to_have_attribute("data-offline", "ready", timeout=60_000)
    finally:
        context.close()


# ---------------------------------------------------------------------------- 4. storage

def open_without_python(context, url):
    pg = context.new_page()
    pg.goto(url + "lessons/attention/")
    expect(pg.locator("body")).to_have_attribute("data-cells", "ready", timeout=RUN_TIMEOUT_MS)
    return pg


@pytest.mark.parametrize("script, message", [
    ("Storage.prototype.setItem = function () { throw new DOMException('quota', 'QuotaExceededError'); };",
     "storage for the site is full"),
    ("Object.defineProperty(window, 'localStorage', { get() { throw new DOMException('denied', 'SecurityError'); } });",
     "does not let the page save"),
], ids=["full", "disabled"])
def test_an_edit_storage_refuses_is_kept_and_the_reader_told_once(fresh_context, site_url, script, message):
    fresh_context.add_init_script(script)
    pg = open_without_python(fresh_context, site_url)
    Cell(pg, "scores").set_code("kept_in_memory = 1")
    alert = pg.locator(".storage-notice")
    expect(alert).to_contain_text(message)
    expect(alert).to_have_attribute("role", "alert")
    Cell(pg, "softmax").set_code("another_edit = 2")
    expect(alert).to_have_count(1)
    assert Cell(pg, "scores").code() == "kept_in_memory = 1"
    assert Cell(pg, "softmax").code() == "another_edit = 2"


#: "At once" made exact. Two tabs type at the same moment when neither has seen the other's save yet; timing
#: both to one wall-clock instant is not enough (a tab busy with a long task, or two tabs sharing one renderer
#: process, handles the other's storage event before its own timer, and then rightly follows it: a run in CI
#: saw no conflict that way). So each tab holds the storage events it gets (a listener added before the page's
#: scripts runs before the page's own) until both have typed, then delivers them, in order, as the browser
#: would have: the page's handling of the real events is what is tested.
HOLD_STORAGE_EVENTS = """
window.heldStorageEvents = null;  // an array while holding
window.addEventListener("storage", (event) => {
  if (!window.heldStorageEvents || !event.isTrusted) return;  // not holding, or one being delivered
  event.stopImmediatePropagation();
  window.heldStorageEvents.push(event);
});"""
DELIVER_STORAGE_EVENTS = """() => {
  const held = window.heldStorageEvents;
  window.heldStorageEvents = null;
  for (const e of held) {
    window.dispatchEvent(new StorageEvent("storage", {
      key: e.key, oldValue: e.oldValue, newValue: e.newValue, url: e.url, storageArea: e.storageArea }));
  }
}"""
HELD_FOR = "(key) => window.heldStorageEvents.some((e) => e.key === key)"


def test_two_tabs_never_overwrite_each_other_silently(fresh_context, site_url):
    fresh_context.add_init_script(HOLD_STORAGE_EVENTS)  # before the page's scripts: its listener comes first
    a = open_without_python(fresh_context, site_url)
    b = open_without_python(fresh_context, site_url)
    key = "attn-lesson:v1:attention:cell:scores"
    # An edit in one tab reaches a tab that has no edits of its own.
    Cell(a, "scores").set_code("from_a = 1")
    expect(Cell(b, "scores").locator.locator(CODE)).to_have_text("from_a = 1")
    Cell(b, "scores").set_code("from_b = 2")
    expect(Cell(a, "scores").locator.locator(CODE)).to_have_text("from_b = 2")
    # Both tabs change the cell at once, each on the version it had: neither follows the other silently,
    # each keeps its own text and asks which to keep.
    for page in (a, b):
        page.evaluate("() => { window.heldStorageEvents = []; }")
    Cell(a, "scores").set_code("typed_in_a = 3")
    Cell(b, "scores").set_code("typed_in_b = 4")
    for page in (a, b):  # each tab has got the other's save, and not yet handled it
        page.wait_for_function(HELD_FOR, arg=key)
        page.evaluate(DELIVER_STORAGE_EVENTS)
    for page, mine in ((a, "typed_in_a = 3"), (b, "typed_in_b = 4")):
        expect(Cell(page, "scores").locator.get_by_role("alert")).to_contain_text("You changed this in another tab too")
        assert Cell(page, "scores").code() == mine
    # b takes a's version: it is saved, whichever tab's save storage held, and a, which has it, is asked no more
    notice = Cell(b, "scores").locator.get_by_role("alert")
    notice.get_by_role("button", name="Use the other tab's version").click()
    expect(notice).to_have_count(0)
    assert Cell(b, "scores").code() == "typed_in_a = 3"
    expect(Cell(a, "scores").locator.get_by_role("alert")).to_have_count(0)
    assert Cell(a, "scores").code() == "typed_in_a = 3"
    assert '"typed_in_a = 3"' in b.evaluate("(key) => localStorage.getItem(key)", key)
    b.reload()
    assert Cell(b, "scores").code() == "typed_in_a = 3"  # what the reader chose, not the save that came last


# ---------------------------------------------------------------------------- 5. replay

def test_a_restart_replays_each_cells_latest_success_within_a_budget(fresh_context, plain_site_url):
    pg = open_lesson(fresh_context, plain_site_url)
    count_boots(pg)
    # the fast cells' runs must fit with room to spare on a loaded machine (the first may take a second), the slow
    # one must not: it sleeps past the whole budget
    pg.evaluate("lessonPage.runtime.replayBudgetSeconds = 3")
    for i in range(3):
        Cell(pg, "setup").run(f"kept = {i}")
    Cell(pg, "scores").run("import time\ntime.sleep(3.5)\nslow = True")  # longer than the budget
    out = Cell(pg, "softmax").run("kept = 99\nraise ValueError('a failed run')")
    expect(out.locator(".out-error")).to_contain_text("ValueError")
    start(pg, "output", "while True:\n    pass")
    stop(pg, "output")
    hint = Cell(pg, "output").locator.locator(".out-hint")
    # setup's prerequisites ran with it the first time: they are replayed too, each once
    before = ", ".join(name(pg, c) for c in ("average", "running", "setup"))
    expect(hint).to_contain_text(f"Python restarted and re-ran {before} to bring your variables back.",
                                 timeout=BOOT_TIMEOUT_MS)
    expect(hint).to_contain_text(re.compile(rf"Not re-run: {name(pg, 'scores')} \(it took \d+\.\d s\)"))
    # the message names each cell as the cell shows it: a reader finds every one on the page
    assert len(named_cells_are_on_the_page(pg, hint.inner_text())) == 4
    ready(pg)
    out = Cell(pg, "softmax").run("print(kept, 'slow' in globals())")
    expect(out).to_contain_text("2 False")
    assert boots(pg) == 1
    # The reader's clean restart: no variable left, nothing replayed.
    pg.get_by_role("button", name="Restart Python (clear all variables)").click()
    expect(python_status(pg)).to_contain_text("every variable is cleared", timeout=BOOT_TIMEOUT_MS)
    out = Cell(pg, "setup").run("print('kept' in globals())")
    expect(out).to_contain_text("False")
    assert boots(pg) == 2


# ---------------------------------------------------------------------------- 6. Stop routing

class Gate:
    """A URL whose answer the test holds back (after the first `let_through`) until release(). A cell that
    asks for it synchronously (GATED_CELL) keeps Python busy for exactly as long as the test needs, however
    slow the machine is: a cell that sleeps a fixed time could end, on a loaded machine, before the test
    has done its part."""

    PATH = "/test-gate"

    def __init__(self, context, let_through=0):
        self.context = context
        self.held = []
        self.let_through = let_through
        context.route("**" + self.PATH, self._hold)

    def _hold(self, route):
        if self.let_through > 0:
            self.let_through -= 1
            route.fulfill(status=200, body="go")
        else:
            self.held.append(route)

    def release(self):
        for route in self.held:
            route.fulfill(status=200, body="go")
        self.held.clear()
        self.context.unroute("**" + self.PATH, self._hold)


#: Waits for the gate's answer (a worker may make a synchronous request), then ends normally.
GATED_CELL = ("from js import XMLHttpRequest, location\n"
              "gate = XMLHttpRequest.new()\n"
              f"gate.open('GET', location.origin + {Gate.PATH!r}, False)\n"
              "gate.send()\n"
              "print('cell finished', gate.responseText)")


def test_a_widget_call_waiting_for_a_cell_has_its_own_stop(shared):
    pg = shared
    gate = Gate(pg.context)
    try:
        start(pg, "scores", GATED_CELL)
        wait_until(pg, lambda: gate.held, "the cell's request of the gate")  # Python is busy with the cell
        explorer = pg.locator('[data-widget="dk-explorer"]')
        # A reader scrolls to it: while Python is busy, a widget far from the screen is not built in idle time.
        explorer.scroll_into_view_if_needed()
        slider = explorer.get_by_label("Head size d_k")
        slider.focus()
        pg.keyboard.press("ArrowRight")
        stop_button = explorer.get_by_role("button", name="Stop")
        expect(stop_button).to_be_visible()
        stop_button.click()
        expect(explorer.locator(".widget-status")).to_contain_text("Stopped")
        expect(Cell(pg, "scores").locator).to_have_attribute("data-status", "running")  # still waiting for the gate
    finally:
        gate.release()
    out = Cell(pg, "scores").wait_done()
    expect(out).to_contain_text("cell finished go")  # the widget's Stop left the cell alone
    expect(Cell(pg, "scores").locator).to_have_attribute("data-status", "ok")


def test_a_stop_while_an_earlier_cell_runs_first_says_which_one_was_stopped(fresh_context, any_site):
    """Run on a later cell first runs the earlier cells it builds on; a Stop pressed on it while one of them
    runs stops that one, and the later cell says which (cells.js, the cell whose earlier cell was stopped)."""
    pg = open_lesson(fresh_context, any_site)
    Cell(pg, "scores").set_code(LOOP)
    later, looping = Cell(pg, "output").locator, Cell(pg, "scores").locator
    later.get_by_role("button", name="Run").click()
    wait_looping(looping)  # after the cells before it: the Stop lands in the loop, not before it started
    expect(later).to_have_attribute("data-status", "queued")  # waiting for the cells it builds on
    stop(pg, "output")
    expect(later.locator(".cell-output")).to_have_text(
        f"Stopped while {name(pg, 'scores')}, which this cell builds on, was running.")
    expect(later.locator(".cell-state")).to_have_text("Stopped.")
    expect(looping).to_have_attribute("data-status", "stopped")
    expect(looping.locator(".cell-output")).to_contain_text("looping")  # what it printed stays
    # The cell between the stopped one and the later cell never ran.
    assert Cell(pg, "softmax").locator.get_attribute("data-status") is None
    expect(Cell(pg, "softmax").locator.locator(".cell-output")).to_have_count(0)  # nothing shown: no output region
    ready(pg)
    expect(later.get_by_role("button", name="Run")).to_be_enabled()


# ---------------------------------------------------------------------------- 7. focus

def test_keyboard_focus_stays_on_the_cells_controls(shared):
    pg = shared
    c = Cell(pg, "output").locator
    # A run that ends by itself, when the test lets it (a 1 s sleep could end before Stop's focus was seen).
    gate = Gate(pg.context)
    try:
        Cell(pg, "output").set_code(GATED_CELL)
        c.get_by_role("button", name="Run").focus()
        pg.keyboard.press("Enter")
        expect(c.get_by_role("button", name="Stop")).to_be_focused()
        wait_until(pg, lambda: gate.held, "the cell's request of the gate")
    finally:
        gate.release()
    expect(Cell(pg, "output").wait_done()).to_contain_text("cell finished go")
    expect(c.get_by_role("button", name="Run")).to_be_focused()
    Cell(pg, "output").set_code("while True:\n    pass")
    c.get_by_role("button", name="Run").focus()
    pg.keyboard.press("Enter")
    expect(c.get_by_role("button", name="Stop")).to_be_focused()
    expect(c).to_have_attribute("data-status", "running")
    pg.keyboard.press("Enter")
    expect(c).to_have_attribute("data-status", "stopped", timeout=15_000)
    expect(c.get_by_role("button", name="Run")).to_be_focused()
    ready(pg)


# ---------------------------------------------------------------------------- exercises

def check_answer(context, url, code):
    """Open the practice lesson, put `code` into its first exercise and press Check; the page and the exercise."""
    pg = context.new_page()
    pg.goto(url + "lessons/practice/")
    ready(pg)
    ex = exercise(pg, "The parameter budget")
    paste_code(ex, code)
    ex.get_by_role("button", name="Check").click()
    return pg, ex


def test_a_cells_stop_cancels_its_own_run_not_the_exercise_check(fresh_context, practice_url):
    pg, ex = check_answer(fresh_context, practice_url, "while True:\n    pass\n")
    expect(ex.locator(".exercise-state")).to_have_text("Checking…")
    hello = Cell(pg, "hello").locator
    hello.get_by_role("button", name="Run").click()
    expect(hello.locator(".cell-state")).to_have_text("Waiting…")  # queued, not running
    expect(hello).to_have_attribute("data-status", "queued")
    hello.get_by_role("button", name="Stop").click()
    expect(hello).to_have_attribute("data-status", "cancelled")
    # The check went on to its own deadline: the cell's Stop did not end it.
    expect(ex).to_have_attribute("data-status", "wrong", timeout=RUN_TIMEOUT_MS)
    expect(ex.locator(".exercise-feedback")).to_contain_text("did not finish in time")
    out = Cell(pg, "hello").run()
    expect(out).to_contain_text("hello from a cell")


def test_a_huge_message_from_the_readers_function_is_clipped_in_the_feedback(fresh_context, practice_url):
    pg, ex = check_answer(fresh_context, practice_url,
                          "def attention_params(n_embd, n_head):\n    raise ValueError('m' * 10**7)\n")
    expect(ex).to_have_attribute("data-status", "wrong", timeout=RUN_TIMEOUT_MS)
    feedback = ex.locator(".exercise-feedback")
    assert text_length(feedback) < 3 * MESSAGE_CHARS
    expect(feedback).to_contain_text("attention_params(768, 12) raised ValueError: mmm")
    expect(feedback).to_contain_text(" characters not shown] … mmm")
    out = Cell(pg, "hello").run()
    expect(out).to_contain_text("hello from a cell")


def test_stored_exercise_state_is_checked_field_by_field(fresh_context, practice_url):
    junk = '{"code": 5, "attempts": -2, "solved": "yes", "hints": -1}'
    fresh_context.add_init_script(
        f"localStorage.setItem('attn-lesson:v1:practice:exercise:attention-params', {junk!r});")
    pg = fresh_context.new_page()
    pg.goto(practice_url + "lessons/practice/")
    ex = exercise(pg, "The parameter budget")
    hint = ex.get_by_role("button", name=re.compile("^Hint"))
    expect(hint).to_have_text(re.compile(r"^Hint \(1 of \d\)$"))
    hint.click()
    expect(ex.get_by_role("list", name="Hints").get_by_role("listitem")).to_have_count(1)
    expect(ex.get_by_role("button", name="Show solution")).to_be_disabled()  # attempts fell back to 0
    expect(ex.locator(CODE)).to_contain_text("def attention_params")  # code fell back to the starter
