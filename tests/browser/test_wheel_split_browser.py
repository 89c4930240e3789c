"""numpy's wheel split for the snapshot's restore (sitebuild/startup/wheel_split.py): a restore reads numpy's
libraries only; the rest of its files comes after the first output, and a cell that imports a numpy
module the image did not import works at any moment (lessonpy.runtime.stdlib_rest.FolderRest fetches the rest
synchronously when it has not come).

These tests make the rest's requests fail or count them (Playwright tells the worker's idle fetch, "fetch",
from an import's synchronous one, "xhr"), on a first visit that restores ("always": the page config's
snapshot spec says so), a restart, an offline revisit, and a restore that fails into the normal boot.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import RUN_TIMEOUT_MS, until_output
from booting import RESTART, boot, first_visit_kept, later_modules, lesson_config, new_interpreter, patch_config
from pages import LESSON, Cell, wait_python_ready

pytestmark = pytest.mark.browser
REST = re.compile(r".*/numpy-[^/]*\.rest\.zip$")
LIBS = re.compile(r".*/numpy-[^/]*\.libs\.zip$")
# Modules of numpy the image did not import (sitebuild/startup/snapshot.mjs's warm-up imports numpy, numpy.random,
# numpy.linalg and numpy.fft): a subpackage, one that imports more of the rest, and a module of a package in memory.
OUTSIDE = ["numpy.polynomial", "numpy.testing", "numpy.lib.recfunctions"]
OUTSIDE_CODE = """import sys
fresh = [m for m in %r if m not in sys.modules]
import numpy as np, numpy.polynomial, numpy.testing
from numpy.lib import recfunctions
print("fresh", fresh)
print("poly", numpy.polynomial.Polynomial([1, 2, 3])(2))
numpy.testing.assert_allclose(np.ones(2), [1, 1])
print("rec", recfunctions.structured_to_unstructured(np.array([(1, 2.5)], dtype=[("a", "i4"), ("b", "f8")])).tolist())
""" % (OUTSIDE,)
OUTSIDE_PRINTS = [f"fresh {OUTSIDE!r}", "poly 17.0", "rec [[1.0, 2.5]]"]
# The lesson's cells before its first figure (the first needs matplotlib, which no boot loads).
FIRST_CELLS = 8


def rest_requests(context) -> list[str]:
    """The resource types of the requests for numpy's rest, as made."""
    made = []
    context.on("request", lambda request: made.append(request.resource_type) if REST.match(request.url) else None)
    return made


def restoring_context(browser, url, **options):
    """A context without a service worker whose first visit restores (the spec says "always")."""
    context = browser.new_context(service_workers="block", **options)
    patch_config(context, url, lambda spec: spec.update(fetch="always"))
    return context


def expect_outside_prints(output):
    for line in OUTSIDE_PRINTS:
        expect(output).to_contain_text(line)


def test_the_modules_tested_are_in_numpys_rest(built_site):
    [rest] = lesson_config(built_site)["plan"]["kinds"]["stdlib"]["deflated"]["restored"]
    modules = later_modules(built_site, rest)
    assert set(OUTSIDE) <= set(modules) and "numpy.linalg" in modules


def test_a_first_visit_restores_from_the_libraries_and_the_first_cells_need_nothing_else(browser, built_site, serve):
    url = serve(built_site, isolate=True)
    context = restoring_context(browser, url)
    try:
        made = rest_requests(context)
        context.route(REST, lambda route: route.abort())  # numpy's rest never comes
        page = context.new_page()
        page.goto(url + LESSON)
        wait_python_ready(page)
        assert boot(page) == {"from": "snapshot", "note": None}
        ids = lesson_config(built_site)["cells"][:FIRST_CELLS]
        for cell_id in ids:  # each as the lesson has it, in page order
            Cell(page, cell_id).locator.get_by_role("button", name="Run").click()
            expect(Cell(page, cell_id).locator).to_have_attribute("data-status", "ok", timeout=RUN_TIMEOUT_MS)
        assert "xhr" not in made  # no import needed the rest
        # The idle preload installs matplotlib but imports nothing ahead without the rest (it would download it).
        reply = page.evaluate("lessonPage.preload")
        assert reply is not None and reply["imported"] == [], reply
        assert "xhr" not in made
        # A module outside the image, while the rest cannot come: the reader is told what is missing.
        out = run_failing(page, "setup", "import numpy.polynomial")
        expect(out).to_contain_text("the rest of numpy's files could not be downloaded")
        # Once it can come, the same import fetches it, once, and every module of it is there.
        context.unroute(REST)
        expect_outside_prints(Cell(page, "setup").run_ok(OUTSIDE_CODE))
        assert made.count("xhr") == 2  # the failed try and the one that came
        expect(Cell(page, "scores").run_ok("import numpy.ma\nprint('ma', numpy.ma.masked_less([1, 5], 2).sum())")).to_contain_text("ma 5")
        assert made.count("xhr") == 2
    finally:
        context.close()


def run_failing(page, cell_id, code):
    from browser import paste_code

    paste_code(Cell(page, cell_id).locator, code)
    Cell(page, cell_id).locator.get_by_role("button", name="Run").click()
    expect(Cell(page, cell_id).locator).to_have_attribute("data-status", "error", timeout=RUN_TIMEOUT_MS)
    return Cell(page, cell_id).locator.locator(".cell-output")


def wait_for_rest(page):
    """Until the worker's idle download has unpacked numpy's rest (a file of it is in site-packages)."""
    code = "import os\nprint('came', os.path.isfile('/lib/python3.12/site-packages/numpy/polynomial/__init__.pyc'))"
    until_output(lambda: Cell(page, "scores").run_ok(code), "came True", "numpy's rest never came in idle time")


def test_once_the_rest_has_come_imports_read_it_and_a_restart_restores_again(browser, built_site, serve):
    url = serve(built_site, isolate=True)
    context = restoring_context(browser, url)
    try:
        made = rest_requests(context)
        page = context.new_page()
        page.goto(url + LESSON)
        wait_python_ready(page)
        assert boot(page)["from"] == "snapshot"
        expect(Cell(page, "setup").run_ok("print('first', 1 + 1)")).to_contain_text("first 2")
        wait_for_rest(page)
        expect_outside_prints(Cell(page, "softmax").run_ok(OUTSIDE_CODE))
        # numpy's metadata came with it: importlib.metadata finds numpy
        expect(Cell(page, "scores").run_ok("import importlib.metadata as md\nprint('version', md.version('numpy'))")).to_contain_text("version 2.0.2")
        assert made == ["fetch"]  # the idle download only

        page.evaluate("lessonPage.runtime.info.old = true")  # gone once a new interpreter reports
        page.get_by_role("button", name=RESTART).click()
        new_interpreter(page)
        assert boot(page) == {"from": "snapshot", "note": None}
        # a new file system: its rest comes again in idle time, metadata included, with no import asking
        wait_for_rest(page)
        expect(Cell(page, "scores").run_ok("import importlib.metadata as md\nprint('version', md.version('numpy'))")).to_contain_text("version 2.0.2")
        expect_outside_prints(Cell(page, "setup").run_ok(OUTSIDE_CODE))
        assert made == ["fetch", "fetch"]
    finally:
        context.close()


def test_an_offline_revisit_restores_and_reads_the_kept_rest(browser, serve_copy):
    url = serve_copy(isolate=True)
    context = browser.new_context()
    try:
        page = context.new_page()
        first_visit_kept(page, url)  # a normal boot; the service worker keeps the site, numpy's parts too
        context.set_offline(True)
        page.reload()
        wait_python_ready(page)
        assert boot(page) == {"from": "snapshot", "note": None}
        expect_outside_prints(Cell(page, "setup").run_ok(OUTSIDE_CODE))
    finally:
        context.close()


def test_when_the_restore_fails_the_normal_boot_has_all_of_numpy(browser, built_site, serve):
    url = serve(built_site, isolate=True)
    context = restoring_context(browser, url)
    try:
        made = rest_requests(context)
        context.route(LIBS, lambda route: route.fulfill(status=404, body="not found"))
        page = context.new_page()
        page.goto(url + LESSON)
        wait_python_ready(page)
        assert boot(page)["from"] == "start" and "404" in boot(page)["note"]
        expect_outside_prints(Cell(page, "setup").run_ok(OUTSIDE_CODE))
        # The idle prefetch and installs are over (a fixed wait could end before they began, and this would pass
        # without them): they had no rest of numpy to fetch.
        assert page.evaluate("lessonPage.preload") is not None
        assert made == []
    finally:
        context.close()
