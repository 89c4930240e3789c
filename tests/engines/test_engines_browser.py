"""Every reader's browser: each lesson's smoke path in Firefox ESR and WebKitGTK (the engines of Firefox and of
Safari, so of every browser on an iPhone or iPad), served isolated (COOP/COEP) and not. The full suite runs in
Chromium (Playwright); here each engine gets what a reader does first: the boot (restored from the snapshot where
the engine can), a cell, a view and a click on it, Stop, a quiz answer, an exercise, the live MiniLM panel, and a
reload with the server stopped. Drivers: tests/engines/drivers.py (real clicks and keys in both).
"""

from __future__ import annotations

import re

import pytest

from sites import build_once
from engines import drivers
from minilm_random import write_random_live

LONG_FILE = True  # minutes in all: last in the suite's order (tests/support/layers.py says why)
BOOT_S = 120  # WebKit's normal boot takes ~7 s here; a loaded CI machine far longer
RUN_S = 120  # a cell here takes a second or two; the other worker's browser tests load the machine
LOOP_CELL = "cost"  # Lesson 4's last cell
SENTENCE = "the cat sat on the mat because it was tired ."

# Every engine restores Python from the build's memory snapshot on a first visit (WebKit thanks to
# pyodide-seams.mjs, sameTableFunctions); the boot's note says why when one does not.


@pytest.fixture(scope="module")
def engine_site(tmp_path_factory):
    """The real lessons as a first-time reader gets them (the snapshot restored on the first visit, "always"),
    with random MiniLM-shaped live weights standing in for the real 45 MB (tests/support/minilm_random.py says why)."""
    import build
    from sitebuild.realheads import live as live_files

    def make(out):
        made = write_random_live(out.parent / "live-made", SENTENCE.split())
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(live_files, "write_live", lambda cache: made)
            build.build(build.Options(out_dir=out, snapshot="always", live_model=True, log=lambda *_: None))

    return build_once(tmp_path_factory, "engines-site", make)


@pytest.fixture(params=drivers.ENGINES)
def driver(request, tmp_path):
    reason = drivers.missing(request.param)
    if reason:
        pytest.fail(reason)
    d = drivers.start(request.param, tmp_path / f"{request.param}.log")
    yield d
    d.close()


def test_a_closed_firefox_bridge_exits_by_itself(tmp_path):
    # The bridge (firefox_bridge.mjs) ends when its driver closes: were it left running, every close would wait
    # out its 20 s and then kill it.
    reason = drivers.missing("firefox")
    if reason:
        pytest.fail(reason)
    d = drivers.start("firefox", tmp_path / "firefox.log")
    d.close()
    assert d.proc.returncode == 0


def wait_ready(d, timeout=BOOT_S):
    return d.wait("const s = document.querySelector('.py-status'); return s && s.dataset.state === 'ready' && "
                  "document.body.dataset.cells === 'ready' && globalThis.lessonPage.runtime.info", "Python to be ready", timeout)


def status_text(d):
    return d.js("return document.querySelector('.py-status-text').textContent")


def run_cell(d, cell_id, expect_status="ok"):
    """Press the cell's Run (a real click) and wait for its end; return its output's text."""
    press_run(d, cell_id)
    status = d.wait("const s = document.querySelector(`[data-cell='${arguments[0]}']`).dataset.status;"
                    "return ['ok', 'error', 'stopped', 'cancelled'].includes(s) && s", f"cell {cell_id} to end", RUN_S, cell_id,
                    state=lambda: cell_state(d, cell_id))
    out = d.js("return document.querySelector(`[data-cell='${arguments[0]}'] .cell-output`)?.innerText ?? ''", cell_id)
    assert status == expect_status, f"{d.name}: cell {cell_id} ended {status}: {out}"
    return out


def click_until(d, selector, taken, what, *args):
    """Click `selector` until `taken` (a script, given `args`) says the page took the click: the drivers click
    once the element stopped moving, but a page that moves under the pointer just then (a formula typeset, an
    editor built near the screen) can still make a click land beside it."""
    for attempt in range(3):
        d.click(selector)
        try:
            return d.wait(taken, what, 10, *args)
        except AssertionError:
            if attempt == 2:
                raise


def press_run(d, cell_id):
    """Click the cell's Run until the cell takes it (its status changes at once)."""
    d.js("document.querySelector(`[data-cell='${arguments[0]}']`).dataset.status = ''", cell_id)
    click_until(d, f'[data-cell="{cell_id}"] .cell-run', "return document.querySelector(`[data-cell='${arguments[0]}']`).dataset.status",
                "Run to be taken", cell_id)


def type_code(d, holder, code):
    """Replace the code in the editor of `holder` (a CSS selector) as a reader does: click it (its stand-in becomes
    CodeMirror), select all, type. Lines are typed as they are: CodeMirror indents after a colon."""
    # The stand-in becomes CodeMirror as it is clicked, or in idle time just then: click again if the focus
    # went nowhere (the click landed on a stand-in as it was replaced).
    focused = "return document.activeElement?.classList.contains('cm-content') && document.activeElement.closest(arguments[0]) !== null"
    for attempt in range(3):
        d.click(f"{holder} .cm-content, {holder} pre.code-standin")
        try:
            d.wait(focused, "the editor to take the focus", RUN_S / 4, holder)
            break
        except AssertionError:
            if attempt == 2:
                raise
    d.key("Control+a")
    for i, line in enumerate(code.split("\n")):
        if i:
            d.key("Enter")  # WebKit's driver types no newline from "\n"
        d.type(line)


def cell_state(d, cell_id):
    """What a cell and the status line say (for a failure's message)."""
    return d.js("const c = document.querySelector(`[data-cell='${arguments[0]}']`);"
                "return {status: c.dataset.status, state: c.querySelector('.cell-state')?.textContent,"
                " output: c.querySelector('.cell-output')?.innerText, python: document.querySelector('.py-status-text').textContent,"
                " code: lessonPage.cells.cells.find((x) => x.id === arguments[0]).code}", cell_id)


def answer_quiz(d, quiz):
    """Pick the quiz's right answer (the build's data-correct) with the mouse, press Check, see "Correct"."""
    right = d.js(f"return document.querySelector('[data-quiz=\"{quiz}\"]').dataset.correct")
    click_until(d, f"#quiz-{quiz}-{right}", "return document.getElementById(arguments[0]).checked", "the answer to be picked",
                f"quiz-{quiz}-{right}")
    click_until(d, f'[data-quiz="{quiz}"] .quiz-check',
                f"return document.querySelector('[data-quiz=\"{quiz}\"] .quiz-feedback').textContent.includes('Correct')",
                "the quiz to say Correct")


def click_view(d, widget_id):
    """The attention view a cell drew: a click on its picture selects a query row."""
    view = f"#widget-{widget_id}"
    d.wait(f"return Boolean(document.querySelector('{view} [data-state=ok] canvas'))", "the attention view to draw", RUN_S)
    d.click_at(f"{view} [data-state=ok] canvas", 60, 60)
    row = d.wait(f"return document.querySelector('{view} [data-selected]')?.dataset.selected || null",
                 "the click to select a query row", RUN_S)
    assert re.fullmatch(r"\d+", row), f"{d.name}: the click selected {row!r}"


def check_exercise(d, name, attempts):
    """Type each (code, verdict) of `attempts` into the exercise, press Check, and see that verdict."""
    exercise = f'[data-exercise="{name}"]'
    for code, verdict in attempts:
        type_code(d, exercise, code)
        d.js(f"document.querySelector('{exercise}').dataset.status = ''")
        click_until(d, f"{exercise} .exercise-check", f"return document.querySelector('{exercise}').dataset.status",
                    "Check to be taken")
        got = d.wait(f"const s = document.querySelector('{exercise}').dataset.status; return ['right', 'wrong'].includes(s) && s",
                     "the exercise's verdict", RUN_S)
        assert got == verdict, f"{d.name}: {code!r} was {got}"


def editor_code(d, cell_id):
    return d.js("return lessonPage.cells.cells.find((c) => c.id === arguments[0]).code", cell_id)


def smoke_lesson_4(d, url, isolated):
    d.open(url + "lessons/attention/")
    info = wait_ready(d)
    boot = info["boot"]
    assert boot["from"] == "snapshot", f"{d.name}: Python started without its snapshot: {boot['note']}"
    interrupts = d.js("return Boolean(lessonPage.runtime.interruptBuffer)")
    # In place only where the page is isolated and the engine shares a buffer with the worker; said once if not.
    can_share = d.js("return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'")
    assert interrupts == (isolated and can_share), d.name
    if isolated and not can_share:
        assert "Stop cannot interrupt Python in place" in status_text(d)

    # A cell, then the cells a view needs, then the view and a click on it.
    assert "Q, K, V shapes: (4, 8) (4, 8) (4, 8)" in run_cell(d, "setup")
    for cell in ("scores", "softmax", "output"):
        run_cell(d, cell)
    run_cell(d, "show")
    click_view(d, "step1-view")

    # Stop: in place where the page can interrupt (the variables stay), else a restart that re-runs the cells.
    # In the lesson's last cell: no later cell builds on it, so the edit (kept in storage) never runs again.
    type_code(d, f'[data-cell="{LOOP_CELL}"]', "print('looping', flush=True)\nwhile True: pass")
    assert editor_code(d, LOOP_CELL) == "print('looping', flush=True)\nwhile True: pass"
    d.js("document.querySelector(`[data-cell='${arguments[0]}']`).dataset.status = ''", LOOP_CELL)
    d.key("Shift+Enter")  # the editor has the focus: run it from the keyboard
    d.wait(f"return document.querySelector(`[data-cell='{LOOP_CELL}'] .cell-output`)?.innerText.includes('looping')",
           "the loop to start", RUN_S, state=lambda: cell_state(d, LOOP_CELL))
    # Taken: the cell says "Stopping…" at once (or has already stopped). CI once waited 120 s for a Stop that
    # never showed a sign of being taken, WebKit under load, with nothing to say why: clicked until taken, and
    # the wait says what the cell and the status line showed.
    click_until(d, f'[data-cell="{LOOP_CELL}"] .cell-stop',
                "const c = document.querySelector(`[data-cell='${arguments[0]}']`);"
                "return ['stopped', 'error'].includes(c.dataset.status) || c.querySelector('.cell-state')?.textContent === 'Stopping…'",
                "the Stop to be taken", LOOP_CELL)
    stopped = d.wait(f"const s = document.querySelector(`[data-cell='{LOOP_CELL}']`).dataset.status;"
                     "return ['stopped', 'error'].includes(s) && s", "the Stop to end the loop", RUN_S,
                     state=lambda: cell_state(d, LOOP_CELL))
    assert stopped == "stopped", d.name
    wait_ready(d)
    # Interrupted in place: the same interpreter. Else a new one, which re-ran the cells run before.
    assert d.js("return lessonPage.runtime.machine.restarts") == (0 if interrupts else 1), \
        f"{d.name}: {cell_state(d, LOOP_CELL)}"
    run_cell(d, "scores")  # uses Q and K from "setup": kept, or re-run by the restart

    # A quiz answered right, with the mouse.
    answer_quiz(d, "quiz-scale")

    # An exercise: a wrong answer, then a right one, checked by Python in the page.
    check_exercise(d, "attention-params", [
        ("def attention_params(n_embd, n_head): return 3 * n_embd * n_embd", "wrong"),
        ("def attention_params(n_embd, n_head): return 4 * n_embd * n_embd", "right")])

def no_page_errors(d):
    errors = [line for line in d.logs() if re.search(r"pageerror|Uncaught|TypeError|ReferenceError", line)]
    assert not errors, f"{d.name}: the page logged errors: {errors}"


def live_panel(d):
    """The real-heads widget runs MiniLM (random weights of the real shape) on the reader's sentence."""
    real = '[data-widget="real-heads"]'
    d.click(f"{real} input[type=text], {real} textarea")
    d.key("Control+a")
    d.type(SENTENCE)
    d.js(f"const b = [...document.querySelectorAll('{real} button')].find((b) => /Run MiniLM/.test(b.textContent)); b.scrollIntoView(); b.id ||= 'run-minilm'")
    d.click("#run-minilm")
    state = d.wait(f"const s = document.querySelector('{real} [data-live], {real}[data-live]')?.dataset.live;"
                   "return ['done', 'error'].includes(s) && s", "the live model to run", 3 * RUN_S)
    assert state == "done", d.js(f"return document.querySelector('{real} .realheads-live-status')?.textContent")


def offline_reload(d, server):
    """Once the page says the lesson is kept, stop the server and reload: the page, its styles and scripts, and
    Python come from the service worker's cache, and a cell runs."""
    d.wait("return document.body.dataset.offline === 'ready' || /offline too/.test(document.querySelector('.offline-note')?.textContent)",
           "the lesson to be kept for offline use", 3 * RUN_S)
    server.shutdown()
    server.server_close()
    d.reload()
    wait_ready(d)
    assert d.js("return getComputedStyle(document.querySelector('.py-status')).display") != "inline", "no stylesheet"
    assert "Q, K, V shapes" in run_cell(d, "setup")


@pytest.mark.parametrize("isolated", [True, False], ids=["isolated", "plain"])
def test_lesson_4_smoke(driver, engine_site, isolated):
    from sitebuild.server import serve_in_thread

    server, url = serve_in_thread(engine_site, port=0, isolate=isolated, quiet=True)
    try:
        smoke_lesson_4(driver, url, isolated)
        if isolated:
            live_panel(driver)
        no_page_errors(driver)  # (the offline reload's failed requests are the point of it)
        offline_reload(driver, server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("isolated", [True, False], ids=["isolated", "plain"])
def test_lesson_5_smoke(driver, engine_site, isolated):
    from sitebuild.server import serve_in_thread

    server, url = serve_in_thread(engine_site, port=0, isolate=isolated, quiet=True)
    try:
        driver.open(url + "lessons/causal-mask/")
        boot = wait_ready(driver)["boot"]
        assert boot["from"] == "snapshot", f"{driver.name}: Python started without its snapshot: {boot['note']}"
        out = run_cell(driver, "cheat")
        assert out.strip(), f"{driver.name}: the first cell printed nothing"
        run_cell(driver, "show-causal")  # runs the cells it builds on first
        click_view(driver, "causal-view")
        answer_quiz(driver, "quiz-which")
        check_exercise(driver, "causal-attention", [
            ("def causal_attention(Q, K, V): return V, Q @ K.T", "wrong"),
            ("import numpy as np\ndef causal_attention(Q, K, V): T = len(Q); s = np.where(np.triu(np.ones((T, T)), 1) > 0, "
             "-np.inf, Q @ K.T / np.sqrt(Q.shape[1])); w = np.exp(s - s.max(-1, keepdims=True)); w = w / w.sum(-1, keepdims=True); "
             "return w @ V, w", "right")])
        no_page_errors(driver)
    finally:
        server.shutdown()
        server.server_close()
