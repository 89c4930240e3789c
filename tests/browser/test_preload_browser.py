"""The idle preload (static/js/runtime/preload.js): matplotlib is loaded after the reader's first output, in
the worker's idle time; runs pressed meanwhile get their output, and Stop and Restart Python work
as they do without it. Real Chromium, real Pyodide, real clicks."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, printed, wait_until
from pages import LESSON, Cell, interpreter, open_lesson, python_status

pytestmark = pytest.mark.browser

MATPLOTLIB_WHEEL = re.compile(r"/matplotlib-[^/]+\.whl$")
FONT_CACHE = re.compile(r"/mpl/fontlist[^/]*\.json$")  # matplotlib's font cache (the build's), fetched at boot
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


@pytest.fixture()
def context_without_sw(browser):
    """A fresh context without a service worker, for the tests that hold matplotlib's font cache: the service
    worker's precache (offline.js) asks for that file too, and, held, keeps the preload out of its turn for
    30 s (runtime/in-turn.js, TURN_WAIT_MS) whenever the precache's turn comes first (a loaded machine)."""
    ctx = browser.new_context(service_workers="block")
    yield ctx
    ctx.close()


class WheelGate:
    """Holds requests for matplotlib's wheel (or what `pattern` matches), after the first `let_through`,
    until release().

    Routing turns Chromium's HTTP cache off, so every fetch of the wheel reaches the route (in a reader's
    browser a second fetch of it comes from that cache).
    """

    def __init__(self, context, let_through=0, pattern=MATPLOTLIB_WHEEL):
        self.held = []
        self.seen = 0
        self.let_through = let_through
        self.released = False
        context.route(pattern, self._route)

    def _route(self, route):
        self.seen += 1
        if self.released or self.seen <= self.let_through:
            route.continue_()
        else:
            self.held.append(route)

    def release(self):
        """Let the held requests and every later one through."""
        self.released = True
        for route in self.held:
            try:
                route.continue_()
            except Exception:  # noqa: BLE001 - the request may be gone with its worker
                pass
        self.held.clear()


def page_requests(context) -> list[str]:
    """The URLs the page and its Python worker ask for from now on (not the service worker's precache)."""
    urls = []
    context.on("request", lambda request: request.service_worker or urls.append(request.url))
    return urls


def wheel_requests(urls) -> Counter:
    """How many times each wheel was asked for (the lesson's own wheel aside)."""
    return Counter(url.rsplit("/", 1)[-1] for url in urls if url.endswith(".whl") and "/lessonpy-" not in url)


def test_nothing_is_preloaded_before_the_first_output(fresh_context, site_url):
    requests = page_requests(fresh_context)
    page = fresh_context.new_page()
    page.add_init_script(POSTED_PROBE)
    page.goto(site_url + LESSON)
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    # Python is ready and idle, but the reader has run nothing: no matplotlib.
    page.wait_for_timeout(2000)
    assert not [url for url in requests if MATPLOTLIB_WHEEL.search(url)]
    assert page.evaluate("lessonPage.runtime.background.size") == 0

    out = Cell(page, "output").run()  # runs the five cells it builds on first
    expect(out).to_contain_text("output shape")
    reply = page.evaluate("lessonPage.preload")  # the promise: waits for the whole preload
    assert "matplotlib" in reply["loaded"]
    assert [url for url in requests if MATPLOTLIB_WHEEL.search(url)]
    assert reply["imported"] == ["matplotlib.pyplot"]
    posted = page.evaluate("window.__posted")
    preloads = [(kind, shown) for kind, shown in posted if kind in ("prefetch", "preload")]
    # the download once, then one install per package and the import, only when the output was on the page
    assert preloads[0] == ("prefetch", True) and len(preloads) == len(reply["loaded"]) + 2, posted
    assert set(preloads[1:]) == {("preload", True)}, posted
    # Nothing of the preload is the reader's: pyplot is imported, but not into their names, and their
    # next figure is Figure 1, alone under its cell.
    out = Cell(page, "scores").run("import sys\nprint('names', 'plt' in globals(), 'matplotlib.pyplot' in sys.modules)")
    expect(out).to_contain_text("names False True")
    out = Cell(page, "scores").run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint(plt.get_fignums())")
    expect(out).to_contain_text("[1]")
    expect(out.get_by_role("img")).to_have_count(1)
    expect(out.get_by_role("img")).to_have_attribute("alt", re.compile("Figure 1 "))
    # Each wheel was read once, by the download; the installs were served its bytes (downloads.js).
    wheels = wheel_requests(requests)
    assert {"matplotlib", "pillow", "fonttools"} <= {name.split("-")[0] for name in wheels}, wheels
    assert set(wheels.values()) == {1}, wheels


def test_a_figure_asked_for_during_the_download_installs_from_its_bytes(boot_context, site_url):
    # The reader asks for a figure while the preload's download of matplotlib is still coming (held
    # here): the run's install waits for those bytes instead of fetching the wheels again.
    boot, context = boot_context
    requests = page_requests(context)
    gate = WheelGate(context)
    page = open_lesson(context, site_url)
    assert page.evaluate("lessonPage.runtime.info.boot.from") == boot
    Cell(page, "setup").run("kept = 'still here'")
    wait_until(page, lambda: gate.held, "the preload's download of matplotlib")
    Cell(page, "scores").set_code("import matplotlib.pyplot as plt\nplt.imshow([[0, 1], [1, 0]])\nprint(kept)")
    Cell(page, "scores").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "running")
    page.wait_for_timeout(1000)  # time for a second request of the wheel, were one made
    assert gate.seen == 1
    gate.release()
    out = Cell(page, "scores").wait_done()
    expect(out).to_contain_text("still here")
    expect(out.get_by_role("img")).to_have_count(1)
    assert page.evaluate("lessonPage.preload") is not None  # its installs found the packages there
    wheels = wheel_requests(requests)
    assert "matplotlib" in {name.split("-")[0] for name in wheels} and set(wheels.values()) == {1}, wheels


def test_runs_during_the_preload_get_their_output_and_stop_interrupts_in_place(fresh_context, site_url):
    gate = WheelGate(fresh_context)
    page = open_lesson(fresh_context, site_url)
    Cell(page, "setup").run("kept = 'still here'")
    wait_until(page, lambda: gate.held, "the preload's download of matplotlib")
    # The preload is under way (its download held back): a run does not wait for it.
    out = Cell(page, "scores").run("print(kept)")
    expect(out).to_contain_text("still here")
    assert page.evaluate("lessonPage.runtime.background.size") == 1  # the preload still waits for its download
    generation = interpreter(page)
    Cell(page, "softmax").set_code("while True:\n    pass")
    Cell(page, "softmax").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "softmax").locator).to_have_attribute("data-status", "running")
    Cell(page, "softmax").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "softmax").locator).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(Cell(page, "scores").run("print(kept)")).to_contain_text("still here")
    # interrupted in place: the same interpreter (a restart's replay would bring `kept` back too)
    assert interpreter(page) == generation

    gate.release()
    reply = page.evaluate("lessonPage.preload")
    assert "matplotlib" in reply["loaded"]  # the preload went on after the Stop (a figure after it: the first test)
    assert interpreter(page) == generation


def test_restart_python_during_the_preload_gives_a_working_interpreter(fresh_context, site_url):
    gate = WheelGate(fresh_context)
    page = open_lesson(fresh_context, site_url)
    Cell(page, "setup").run()
    wait_until(page, lambda: gate.held, "the preload's download of matplotlib")
    page.get_by_role("button", name=RESTART).click()
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("lessonPage.preload") is None  # given up with its interpreter
    # The old worker's download (held) was given up. The new interpreter downloads the rests once it has settled
    # (preload.js, "restarted"), which is not held: a size of 1 just after the restart can be that one.
    wait_until(page, lambda: page.evaluate("lessonPage.runtime.background.size") == 0, "no download left")
    expect(Cell(page, "output").run()).to_contain_text("output shape")
    gate.release()  # the old worker's request: nobody waits for it any more


@pytest.mark.parametrize("phase", ["download", "install"])
def test_a_stop_of_a_run_importing_matplotlib_during_the_preload_stops_it_in_place(context_without_sw, site_url, phase):
    # The preload's download of matplotlib is held, and the run's install waits for its bytes: a Stop then
    # ("download") must end the run at once, in place (no restart), and not be used up by an install. Or
    # the bytes come and the run installs from them, held on matplotlib's font cache (fetched at boot,
    # held too), and the Stop comes then ("install", interrupts held): the same. Either way the wheel is
    # requested once, and the install finishes before the next request.
    wheel = WheelGate(context_without_sw)
    fonts = WheelGate(context_without_sw, pattern=FONT_CACHE)
    page = open_lesson(context_without_sw, site_url)
    Cell(page, "setup").run("kept = 'still here'")
    wait_until(page, lambda: wheel.held, "the preload's download of matplotlib")
    generation = interpreter(page)
    Cell(page, "scores").set_code("import matplotlib\nprint('the code ran')")
    Cell(page, "scores").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "running")
    if phase == "install":
        wheel.release()
        wait_until(page, lambda: page.evaluate("lessonPage.runtime.background.size") == 0, "the download's end")
    Cell(page, "scores").locator.get_by_role("button", name="Stop").click()
    out = Cell(page, "scores").wait_done()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "stopped")
    assert "the code ran" not in out.inner_text()
    assert interpreter(page) == generation  # interrupted in place, not restarted

    wheel.release()  # the downloads and installs finish; the Stop was not theirs
    fonts.release()
    assert page.evaluate("lessonPage.preload") is not None  # the preload completed
    assert wheel.seen == 1  # the run's install read the download's bytes
    out = Cell(page, "scores").run("import matplotlib.pyplot as plt\nplt.imshow([[0, 1], [1, 0]])\nprint(kept)")
    expect(out).to_contain_text("still here")
    expect(out.get_by_role("img")).to_have_count(1)
    assert interpreter(page) == generation


def test_a_stop_while_the_preload_installs_cancels_the_waiting_run_and_the_install_finishes(context_without_sw, site_url):
    # Each install is a request like the others: a run pressed meanwhile waits behind it, and its Stop
    # cancels the run without reaching the install. The download goes through, and the installs read
    # its bytes; the one that installs matplotlib then writes the build's font cache, whose fetch at
    # boot is held here, so that install is under way until it is released.
    gate = WheelGate(context_without_sw, pattern=FONT_CACHE)
    page = open_lesson(context_without_sw, site_url)
    Cell(page, "setup").run("kept = 'still here'")
    wait_until(page, lambda: gate.held, "the font cache's fetch")
    installing = "lessonPage.runtime.inflight?.type === 'preload' && lessonPage.runtime.inflight.fields.packages[0]"
    wait_until(page, lambda: page.evaluate(installing) == "matplotlib", "the install of matplotlib")
    Cell(page, "setup").set_code("print('the code ran')\nwhile True:\n    pass")  # a cell with nothing to run first
    Cell(page, "setup").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "setup").locator).to_have_attribute("data-status", "queued")  # "Waiting…"
    Cell(page, "setup").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "setup").locator).to_have_attribute("data-status", "cancelled")
    assert "the code ran" not in printed(Cell(page, "setup").locator)
    # A cell whose earlier cells run first: the first of them waits, and a Stop cancels both, saying so.
    Cell(page, "output").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "queued")
    Cell(page, "output").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "cancelled")
    expect(Cell(page, "output").locator).to_have_attribute("data-status", "cancelled")
    expect(Cell(page, "output").locator.locator(".cell-state")).to_have_text("Cancelled.")
    expect(Cell(page, "output").locator.locator(".cell-output")).to_have_text(
        "Cancelled while Cell 4, which this cell builds on, was waiting to run.")
    assert page.evaluate("lessonPage.runtime.inflight?.type") == "preload"  # the install goes on

    gate.release()
    reply = page.evaluate("lessonPage.preload")
    assert "matplotlib" in reply["loaded"]  # the install was not cut short
    Cell(page, "setup").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "setup").locator).to_have_attribute("data-status", "running")
    Cell(page, "setup").locator.get_by_role("button", name="Stop").click()
    expect(Cell(page, "setup").locator).to_have_attribute("data-status", "stopped", timeout=10_000)
    out = Cell(page, "scores").run("import matplotlib.pyplot as plt\nplt.imshow([[0, 1], [1, 0]])\nprint(kept)")
    expect(out).to_contain_text("still here")
    expect(out.get_by_role("img")).to_have_count(1)


def test_an_install_that_stalls_is_given_up_at_its_deadline_and_the_run_behind_it_runs(context_without_sw, site_url):
    # matplotlib's install ends by writing the build's font cache, whose fetch (made at boot) never
    # answers here: the install stalls. A run pressed meanwhile waits behind it; past the install's deadline
    # (shortened here, as tests shorten the replay's budget) Python restarts, replays, and the run runs.
    gate = WheelGate(context_without_sw, pattern=FONT_CACHE)
    page = open_lesson(context_without_sw, site_url)
    page.evaluate("lessonPage.runtime.installDeadlineMs = 3000")
    generation = interpreter(page)
    Cell(page, "setup").run("kept = 'still here'")
    wait_until(page, lambda: gate.held, "the font cache's fetch")
    installing = "lessonPage.runtime.inflight?.type === 'preload' && lessonPage.runtime.inflight.fields.packages[0]"
    wait_until(page, lambda: page.evaluate(installing) == "matplotlib", "the install of matplotlib")
    Cell(page, "scores").set_code("print(kept)")
    Cell(page, "scores").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "queued")  # "Waiting…" behind the install
    out = Cell(page, "scores").wait_done(timeout=BOOT_TIMEOUT_MS)
    expect(out).to_contain_text("still here")  # run after the restart, on the replayed variables
    expect(Cell(page, "scores").locator).to_have_attribute("data-status", "ok")
    assert interpreter(page) > generation
    assert page.evaluate("lessonPage.preload") is None  # given up with its interpreter
    expect(python_status(page)).to_contain_text(
        "Installing matplotlib did not finish within 3 s, so Python was restarted and re-ran 3 earlier cells.")  # average, running, setup

    gate.release()  # the new interpreter loads matplotlib when a cell imports it, as any does
