"""The lesson page as a reader uses it: real Chromium, real Pyodide, real clicks and keys."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, CODE, LOOP, protocol_errors, wait_looping
from pages import LESSON, Cell, Widget, open_lesson, python_status, wait_cells_ready

pytestmark = pytest.mark.browser
@pytest.fixture(scope="module")
def context(browser, site_url):
    ctx = browser.new_context()
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def page(context, site_url):
    """One loaded lesson page shared by the tests of this module (Python boots once)."""
    errors, csp = [], []
    pg = context.new_page()
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: csp.append(msg.text) if "Content Security Policy" in msg.text else None)
    pg.goto(site_url + LESSON)
    expect(python_status(pg)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    yield pg
    assert not errors, f"uncaught errors in the page: {errors}"
    assert not csp, f"the page's Content-Security-Policy blocked something: {csp}"
    assert protocol_errors(pg) == []


def test_every_message_of_a_run_is_one_protocol_js_defines(page):
    code = ("import sys\nimport numpy as np\nimport matplotlib.pyplot as plt\nfrom lessonpy.maths.show import show_attention\n"
            "print('out'); print('err', file=sys.stderr)\nplt.plot([0, 1])\n"
            "show_attention(weights=np.eye(2))\nshow_attention(weights=np.ones((2, 2)))")
    out = Cell(page, "setup").run(code)
    expect(out.locator("img.out-figure")).to_have_count(1)
    expect(out.locator(".out-error")).to_contain_text("sums to 2")
    assert protocol_errors(page) == []
    # The check is live: a message the protocol does not define is recorded.
    page.evaluate("lessonPage.runtime.worker.onmessage({data: {type: 'show-error', runId: null, message: 'x'}})")
    assert protocol_errors(page) == ['unknown event type "show-error"']
    page.evaluate("lessonPage.runtime.protocolErrors.length = 0")


#: What a reader's cell can send the page: an arrays event with a field protocol.js does not define.
MALFORMED_EMIT = ("from lessonpy.runtime import bridge\n"
                  "bridge.emit('arrays', {'view': 'attention', 'title': None, 'target': None, 'colour': 'red'})")
COUNT_ARRAYS = ("window.arraysSeen = 0; lessonPage.runtime.addEventListener('python-event', "
                "({detail}) => { if (detail.type === 'arrays') window.arraysSeen += 1; })")


def test_python_cannot_send_the_page_an_event_the_protocol_does_not_define(page):
    """The reader's code reaches the page through lessonpy.runtime.bridge.emit: the worker refuses a malformed event
    and the reader's cell says why; the page never gets it."""
    assert page.evaluate("lessonPage.runtime.checkProtocol") is True  # under test, every message is checked
    page.evaluate(COUNT_ARRAYS)
    out = Cell(page, "setup").run(MALFORMED_EMIT)
    expect(out.locator(".out-error")).to_contain_text("event arrays has fields the protocol does not define: colour")
    assert page.evaluate("window.arraysSeen") == 0
    assert protocol_errors(page) == []


def test_a_readers_page_checks_only_what_python_sends(fresh_context, site_url):
    """A browser no test drives (navigator.webdriver false) skips the check of every message, whose senders are
    the page's own code, and still refuses a malformed event from the reader's Python."""
    fresh_context.add_init_script("Object.defineProperty(Navigator.prototype, 'webdriver', {get: () => false})")
    page = open_lesson(fresh_context, site_url)
    assert page.evaluate("lessonPage.runtime.checkProtocol") is False
    page.evaluate("lessonPage.runtime.worker.onmessage({data: {type: 'show-error', runId: null, message: 'x'}})")
    assert protocol_errors(page) == []  # not checked on a reader's page
    page.evaluate(COUNT_ARRAYS)
    out = Cell(page, "setup").run(MALFORMED_EMIT)
    expect(out.locator(".out-error")).to_contain_text("does not define: colour")
    assert page.evaluate("window.arraysSeen") == 0


def test_status_says_ready_and_page_is_isolated(page):
    status = python_status(page)
    expect(status).to_have_attribute("data-state", "ready")
    assert page.evaluate("crossOriginIsolated") is True


def test_cells_and_widgets_are_found_by_the_names_a_reader_hears(page):
    # The page objects (pages.py) find a cell by its group's name and a widget by its region's, as a screen
    # reader announces them; a widget found so is drawn once it comes near the screen.
    first = Cell.numbered(page, 1)
    assert first.id == page.locator("[data-cell]").first.get_attribute("data-cell")
    expect(first.locator.locator(".cell-name")).to_have_text("Cell 1")
    lookup = Widget.named(page, "A soft dictionary lookup")
    assert lookup.id == "soft-lookup"
    lookup.locator.scroll_into_view_if_needed()
    lookup.wait_started()


def test_run_shows_the_output_of_numpy_code(page):
    out = Cell(page, "setup").run("import numpy as np\nprint('sum =', np.arange(6).reshape(2, 3).sum(axis=0))")
    expect(out).to_contain_text("sum = [3 5 7]")
    expect(Cell(page, "setup").locator).to_have_attribute("data-status", "ok")
    # the output is a log named after its cell, made at its first output (cells.js): a cell never run has none
    name = Cell(page, "setup").locator.locator(".cell-name").text_content()  # the name the cell shows, and its group's
    expect(page.get_by_role("group", name=name, exact=True)).to_have_attribute("data-cell", "setup")
    expect(Cell(page, "setup").locator.get_by_role("log", name=f"Output of {name}")).to_contain_text("sum = [3 5 7]")
    expect(Cell(page, "cost").locator.get_by_role("log")).to_have_count(0)


def test_last_expression_is_shown_like_a_notebook(page):
    out = Cell(page, "setup").run("import numpy as np\nnp.eye(2).sum()")
    expect(out.locator(".out-value")).to_have_text("np.float64(2.0)")


def test_shift_enter_runs_the_cell(page):
    Cell(page, "scores").set_code("print('shifted', 6 * 7)")
    page.keyboard.press("Shift+Enter")
    expect(Cell(page, "scores").wait_done()).to_contain_text("shifted 42")
    assert "\n" not in Cell(page, "scores").locator.locator(".cm-content").inner_text().strip()  # no newline typed


def test_ctrl_enter_runs_the_cell(page):
    Cell(page, "scores").set_code("print('ctrl', 2 ** 10)")
    page.keyboard.press("Control+Enter")
    expect(Cell(page, "scores").wait_done()).to_contain_text("ctrl 1024")


def test_exception_shows_a_traceback_of_the_readers_code_only(page):
    out = Cell(page, "softmax").run("def f(n):\n    return 1 / n\n\nf(0)")
    error = out.locator(".out-error")
    expect(error).to_contain_text("ZeroDivisionError: division by zero")
    expect(error).to_contain_text('Cell "softmax", line 4')
    expect(error).to_contain_text('Cell "softmax", line 2, in f')
    text = error.inner_text()
    assert "pyodide" not in text.lower() and "lessonpy" not in text and "_pyodide" not in text
    expect(Cell(page, "softmax").locator).to_have_attribute("data-status", "error")


def test_syntax_error_points_at_the_line(page):
    out = Cell(page, "softmax").run("x = (1,\ny = 2")
    expect(out.locator(".out-error")).to_contain_text("SyntaxError")


def test_output_is_text_never_html(page):
    out = Cell(page, "output").run("print('<b id=\"injected\">bold</b>')")
    expect(out).to_contain_text('<b id="injected">bold</b>')
    assert page.locator("#injected").count() == 0


def test_stdout_streams_while_the_cell_runs(page):
    # The loop outlasts any wait below however loaded the machine is; Stop ends it.
    code = ("import time\nprint('first', flush=True)\nt = time.time()\n"
            "while time.time() - t < 120:\n    pass\nprint('second')")
    Cell(page, "output").set_code(code)
    Cell(page, "output").locator.get_by_role("button", name="Run").click()
    out = Cell(page, "output").locator.locator(".cell-output")
    expect(out).to_contain_text("first", timeout=60_000)
    expect(Cell(page, "output").locator).to_have_attribute("data-status", "running")  # seen before the run ended
    assert "second" not in out.inner_text()
    Cell(page, "output").locator.get_by_role("button", name="Stop").click()
    out = Cell(page, "output").wait_done()
    expect(out).to_contain_text("first")  # what streamed stays
    expect(out.locator(".out-error")).to_have_text("Stopped.")


def test_matplotlib_figure_appears_under_the_cell(page):
    code = ("import matplotlib.pyplot as plt\nimport numpy as np\n"
            "plt.imshow(np.arange(16).reshape(4, 4))\nplt.title('weights')")
    Cell(page, "output").set_code(code)
    Cell(page, "output").locator.get_by_role("button", name="Run").click()
    out = Cell(page, "output").wait_done(timeout=120_000)  # the first import loads matplotlib: slow
    figure = out.get_by_role("img")
    expect(figure).to_have_count(1)
    expect(figure).to_have_attribute("alt", re.compile("Figure 1"))
    width = figure.evaluate("img => img.decode().then(() => img.naturalWidth)")
    assert width > 100
    # its size is given before it decodes (from the PNG's header), so the page moves once as it comes, not twice
    assert figure.evaluate("img => [img.getAttribute('width'), img.getAttribute('height')]") == [
        str(width), str(figure.evaluate("img => img.naturalHeight"))]
    # The build ships matplotlib's font cache: the reader's first figure does not build it.
    assert "font cache" not in out.inner_text()
    # Pyodide's matplotlib documents its artists' set() when asked (lessonpy.runtime.artist_set_docs), as matplotlib would
    # and matplotlib took the build's property lists for its docstrings instead of writing them (the same module)
    out = Cell(page, "output").run("import inspect, matplotlib.lines as lines, matplotlib.pyplot as plt\n"
                              "import lessonpy.runtime.artist_set_docs as docs\n"
                              "print(type(lines.Line2D.__dict__['set']).__name__)\n"
                              "print('color' in inspect.signature(lines.Line2D.set).parameters)\n"
                              "print(lines.Line2D.set.__doc__.startswith('Set multiple properties'))\n"
                              "print(type(lines.Line2D.__dict__['set']).__name__)\n"
                              "print(docs.seeded >= 8, 'antialiased or aa: bool' in plt.plot.__doc__)")
    assert out.inner_text().split() == ["DeferredSet", "True", "True", "function", "True", "True"]


def test_lessonpy_is_installed_without_micropip_which_a_cell_can_still_import(page):
    # The lesson's wheel is unpacked at start-up; micropip loads only when a cell asks for it.
    out = Cell(page, "setup").run("import sys\nprint('micropip' in sys.modules)\n"
                             "import importlib.metadata as md\nprint(md.version('lessonpy'))")
    expect(out).to_contain_text("False")
    expect(out).to_contain_text(re.compile(r"\d+\.\d+"))
    out = Cell(page, "setup").run("import micropip\nprint(micropip.__name__, callable(micropip.install))")
    expect(Cell(page, "setup").locator).to_have_attribute("data-status", "ok")
    expect(out).to_contain_text("micropip True")


def test_a_package_loaded_on_demand_is_found_without_rereading_the_standard_librarys_zip(fresh_context, site_url):
    # Pyodide's loadPackage ends with importlib.invalidate_caches(), which re-reads the zip's directory once
    # per package imported from it; the worker has it look only for the files an install adds.
    page = open_lesson(fresh_context, site_url)
    Cell(page, "setup").run("import zipimport\nzip_reads = []\n_read = zipimport.zipimporter.invalidate_caches\n"
                       "zipimport.zipimporter.invalidate_caches = lambda self: (zip_reads.append(self.archive), _read(self))[1]")
    out = Cell(page, "setup").run("import micropip, packaging.version\nprint(micropip.__name__, len(zip_reads))\n"
                             "zipimport.zipimporter.invalidate_caches = _read")
    expect(out).to_contain_text("micropip 0")


def test_stop_interrupts_an_endless_loop_and_the_next_run_works(page):
    Cell(page, "setup").run("kept = 'still here'")
    Cell(page, "scores").set_code(LOOP)
    Cell(page, "scores").locator.get_by_role("button", name="Run").click()
    wait_looping(Cell(page, "scores").locator)
    Cell(page, "scores").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "stopped", timeout=10_000)
    # Interrupted in place: the namespace survived, no restart was needed.
    out = Cell(page, "scores").run("print(kept)")
    expect(out).to_contain_text("still here")


def test_running_a_later_cell_first_runs_what_it_needs(fresh_context, site_url):
    pg = open_lesson(fresh_context, site_url)
    out = Cell(pg, "output").run()
    expect(out).to_contain_text("output shape: (4, 8)")
    # the warm-up's two cells, then Step 1's three before "output"
    expect(out.locator(".out-hint")).to_contain_text("Ran Cell 1, Cell 2, Cell 3, Cell 4, Cell 5 first")
    for earlier in ("average", "running", "setup", "scores", "softmax"):
        expect(Cell(pg, earlier).locator).to_have_attribute("data-status", "ok")
    assert "NameError" not in out.inner_text()


def test_edits_survive_a_reload_and_reset_restores_the_original(fresh_context, site_url):
    pg = fresh_context.new_page()
    pg.goto(site_url + LESSON)
    wait_cells_ready(pg)
    original = Cell(pg, "scores").original()
    assert Cell(pg, "scores").code() == original
    Cell(pg, "scores").set_code("my_edit = 123  # keep me")
    reset = Cell(pg, "scores").locator.get_by_role("button", name="Reset")
    expect(reset).to_be_visible()
    pg.reload()
    wait_cells_ready(pg)
    expect(Cell(pg, "scores").locator.locator(CODE)).to_contain_text("my_edit = 123  # keep me")
    Cell(pg, "scores").locator.get_by_role("button", name="Reset").click()
    expect(Cell(pg, "scores").locator.get_by_role("button", name="Reset")).to_be_hidden()
    assert Cell(pg, "scores").code() == original
    pg.reload()
    wait_cells_ready(pg)
    expect(Cell(pg, "scores").locator.locator(CODE)).to_contain_text("row i holds query i")
    assert Cell(pg, "scores").code() == original


def test_no_request_leaves_the_local_server(fresh_context, site_url):
    seen = []

    def guard(route):
        seen.append(route.request.url)
        host = urlparse(route.request.url).hostname
        if host in ("127.0.0.1", "localhost") or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            route.abort()

    fresh_context.route("**/*", guard)
    pg = open_lesson(fresh_context, site_url)
    Cell(pg, "output").run()
    code = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])"
    Cell(pg, "output").set_code(code)
    Cell(pg, "output").locator.get_by_role("button", name="Run").click()
    Cell(pg, "output").wait_done(timeout=120_000)
    outside = [u for u in seen if urlparse(u).hostname not in ("127.0.0.1", "localhost")
               and not u.startswith(("data:", "blob:"))]
    assert seen, "the route guard saw no requests at all"
    assert outside == []
    assert any(u.endswith(".wasm") for u in seen) and any("matplotlib" in u for u in seen)


def test_an_output_flood_is_capped_and_the_page_stays_usable(page):
    out = Cell(page, "output").run("for i in range(300_000):\n    print('line', i)\nprint('finished')")
    expect(out).to_contain_text(re.compile(r"\[output (cut|truncated)"))
    expect(Cell(page, "output").locator).to_have_attribute("data-status", "ok")
    # The page still answers quickly: the next run works and shows its output.
    out = Cell(page, "output").run("print('after the flood')")
    expect(out).to_contain_text("after the flood")
    assert len(out.inner_text()) < 1000


def test_a_cell_that_exits_keeps_python_alive(page):
    out = Cell(page, "output").run("import sys\nsys.exit('bye')")
    expect(out.locator(".out-error")).to_contain_text("SystemExit")
    out = Cell(page, "output").run("print('still alive')")
    expect(out).to_contain_text("still alive")


def test_stop_while_a_figure_renders_leaves_no_figure_behind(page):
    # A figure that renders until it is stopped: the cell's code ends at once, then figure
    # collection draws an artist whose draw() never returns. Stop always lands while the
    # figure renders, however fast or loaded the machine is.
    code = ("import matplotlib.pyplot as plt\nfrom matplotlib.artist import Artist\n\n"
            "class Endless(Artist):\n"
            "    def draw(self, renderer):\n"
            "        while True:\n"
            "            pass\n\n"
            "plt.figure().add_artist(Endless())\n"
            "print('drawn', flush=True)")
    Cell(page, "output").set_code(code)
    Cell(page, "output").locator.get_by_role("button", name="Run").click()
    out = Cell(page, "output").locator.locator(".cell-output")
    expect(out).to_contain_text("drawn", timeout=120_000)  # the first import loads matplotlib: slow
    expect(Cell(page, "output").locator).to_have_attribute("data-status", "running")  # still rendering
    Cell(page, "output").locator.get_by_role("button", name="Stop").click()
    out = Cell(page, "output").wait_done()
    expect(Cell(page, "output").locator).to_have_attribute("data-status", "stopped")
    expect(out.locator(".out-error")).to_have_text("Stopped.")  # no frames of the page's machinery
    expect(out.get_by_role("img")).to_have_count(0)
    # The figure was closed: the next, unrelated run does not draw it again.
    out = Cell(page, "output").run("print('next')")
    expect(out).to_contain_text("next")
    expect(out.get_by_role("img")).to_have_count(0)


def test_input_says_the_page_cannot_ask_for_input(page):
    out = Cell(page, "output").run("name = input('Your name? ')")
    expect(out.locator(".out-error")).to_contain_text(
        "input() is not supported in this page: there is no keyboard prompt here. "
        "Set the value in the code instead, e.g. name = 'Ada'")
    assert "Errno 29" not in out.inner_text()


def test_plt_show_draws_the_figure_without_agg_warning(page):
    Cell(page, "output").set_code("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\nprint('shown')")
    Cell(page, "output").locator.get_by_role("button", name="Run").click()
    out = Cell(page, "output").wait_done(timeout=120_000)
    expect(out).to_contain_text("shown")
    expect(out.get_by_role("img")).to_have_count(1)
    assert "non-interactive" not in out.inner_text() and "Warning" not in out.inner_text()
