"""The standard library in two archives (sitebuild/startup/stdlib_split.py): the page fetches the core before the
first output, the rest after it, and a cell that imports a module of the rest works at any moment.

Before the rest has come, lessonpy.runtime.stdlib_rest downloads it synchronously (an XMLHttpRequest); these tests
force that path by failing the worker's idle fetch of the rest (Playwright tells the two requests apart by
their type), on a normal boot and on a restore from the memory snapshot, and check the other path (the
rest arrived in idle time: no second download). The last test counts the standard library's bytes that
had arrived when the first output appeared.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import RUN_TIMEOUT_MS, until_output
from booting import boot, later_modules, lesson_config, patch_config
from pages import LESSON, Cell, wait_python_ready

pytestmark = pytest.mark.browser
REST = "python_stdlib_rest.zip"
# Modules of the rest: top-level ones, a module of a package whose __init__ is in the core (encodings,
# email), a package of the rest with its own modules (xml); `this` prints the Zen of Python.
REST_MODULES = ["this", "difflib", "encodings.cp1252", "email.mime.text", "xml.dom.minidom"]
REST_CODE = """import difflib, this
import email.mime.text, xml.dom.minidom
print("ratio", difflib.SequenceMatcher(None, "attention", "retention").ratio())
print("cp1252", "é€".encode("cp1252"))
print("mime", email.mime.text.MIMEText("hi")["Content-Type"])
print("xml", xml.dom.minidom.parseString("<a><b/></a>").documentElement.firstChild.tagName)"""
REST_PRINTS = ["Beautiful is better than ugly.", "ratio 0.777", "cp1252 b'\\xe9\\x80'",
               'mime text/plain; charset="us-ascii"', "xml b"]


def rest_requests(context) -> list[str]:
    """The resource types of the requests for the rest ("fetch": the idle one; "xhr": an import's), as made."""
    made = []
    context.on("request", lambda request: made.append(request.resource_type) if request.url.endswith(REST) else None)
    return made


def fail_idle_fetch(context):
    """The worker's idle fetch of the rest fails (as on a flaky link): only an import can bring it."""
    def handle(route):
        if route.request.resource_type == "fetch":
            route.abort()
        else:
            route.continue_()
    context.route(re.compile(rf".*/{re.escape(REST)}$"), handle)


def expect_rest_prints(output):
    for line in REST_PRINTS:
        expect(output).to_contain_text(line)


def test_the_modules_tested_are_in_the_rest(built_site):
    [rest] = lesson_config(built_site)["plan"]["kinds"]["stdlib"]["deflated"]["later"]
    modules = later_modules(built_site, rest)
    assert set(REST_MODULES) <= set(modules)
    assert "numpy" not in modules and "encodings" not in modules and "json" not in modules  # the core's


@pytest.mark.parametrize("start", ["start", "snapshot"])
def test_a_module_of_the_rest_imports_before_the_rest_has_come(browser, built_site, serve, start):
    url = serve(built_site, isolate=True)
    context = browser.new_context(service_workers="block")
    try:
        # a first visit that restores (as readers' pages do) or boots normally (as where only revisits restore):
        # the same finder either way
        patch_config(context, url, lambda spec: spec.update(fetch="always" if start == "snapshot" else "kept"))
        made = rest_requests(context)
        fail_idle_fetch(context)
        page = context.new_page()
        page.goto(url + LESSON)
        wait_python_ready(page)
        assert boot(page)["from"] == start
        assert made == []  # nothing of the rest before the first output
        expect_rest_prints(Cell(page, "setup").run_ok(REST_CODE))
        assert made.count("xhr") == 1  # fetched by the import, once
        # a second cell, and a module of the rest not imported yet: no second download
        expect(Cell(page, "scores").run_ok("import colorsys\nprint('hls', colorsys.rgb_to_hls(1, 0, 0))")).to_contain_text("hls (0.0, 0.5, 1.0)")
        assert made.count("xhr") == 1
    finally:
        context.close()


def test_once_the_rest_has_come_in_idle_time_imports_read_it(browser, built_site, serve):
    url = serve(built_site, isolate=True)
    context = browser.new_context(service_workers="block")
    try:
        made = rest_requests(context)
        page = context.new_page()
        page.goto(url + LESSON)
        wait_python_ready(page)
        expect(Cell(page, "setup").run_ok("print('first', 1 + 1)")).to_contain_text("first 2")
        code = "import sys\nprint('mounted', '/lib/python312-rest.zip' in sys.path)"
        until_output(lambda: Cell(page, "scores").run_ok(code), "mounted True", "the rest never came in idle time")
        expect_rest_prints(Cell(page, "softmax").run_ok(REST_CODE))
        assert made == ["fetch"]  # the idle fetch only
    finally:
        context.close()


# When the measured cell's output appears, on the page's clock (ms since the epoch), as bench/startup.py does.
OUTPUT_PROBE = """
window.__outputAt = null;
new MutationObserver((_, observer) => {
  const el = document.querySelector('[data-cell="output"] .cell-output');
  if (el && el.textContent.trim()) { window.__outputAt = performance.timeOrigin + performance.now(); observer.disconnect(); }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def test_only_the_core_of_the_standard_library_arrives_before_the_first_output(browser, built_site, serve):
    url = serve(built_site, isolate=True)
    context = browser.new_context(service_workers="block")
    arrived = []  # (url, when it arrived on the browser's clock, bytes as served)
    context.on("requestfinished", lambda r: arrived.append(
        (r.url, r.timing["startTime"] + r.timing["responseEnd"], r.sizes()["responseBodySize"])))
    try:
        page = context.new_page()
        page.add_init_script(OUTPUT_PROBE)
        page.goto(url + LESSON)
        cell = page.locator('[data-cell="output"]')
        cell.get_by_role("button", name="Run").click()  # as an eager reader does: it runs once Python is ready
        expect(cell).to_have_attribute("data-status", "ok", timeout=RUN_TIMEOUT_MS * 3)
        page.wait_for_function("window.__outputAt !== null")
        output_at = page.evaluate("window.__outputAt")
        page.wait_for_timeout(500)  # requestfinished events come a little after
    finally:
        context.close()
    # the standard library's archives only: a first visit that restores (as readers' do) also brings numpy's
    # libraries, as a zip of their own, before the first output (docs/speed.md)
    stdlib = {u.split("/pyodide/", 1)[1].split("/", 1)[1]: size for u, at, size in arrived
              if u.endswith(".zip") and "/python_stdlib" in u and at <= output_at}
    core = (next(built_site.glob("pyodide/*/stored/python_stdlib.zip.br"))).stat().st_size
    whole = core + next(built_site.glob(f"pyodide/*/stored/{REST}.br")).stat().st_size
    assert stdlib == {"stored/python_stdlib.zip": core}  # the core, as brotli, and nothing of the rest
    assert core < 0.5 * whole
