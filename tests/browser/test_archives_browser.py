"""Stored or deflated archives, as the host compresses: the worker fetches only the variant it picked.

The site ships each Pyodide archive twice (sitebuild/startup/archives.py): stored, for hosts that compress
(with brotli copies, a third smaller than deflated), and deflated, for hosts that do not (where
stored archives would cost 2-3x). These tests serve the same built site three ways and check, from
the requests the browser made, which variant the worker booted from, and that a NumPy cell runs.
"""

from __future__ import annotations

import os
import shutil

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS, paste_code

pytestmark = pytest.mark.browser
LESSON = "lessons/attention/"
NUMPY_CELL = "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\nprint('softmax rows', (np.exp(x) / np.exp(x).sum(1, keepdims=True)).sum(1))"


def boot_and_run(browser, url):
    """Open the lesson, run a NumPy cell; return (the variants the worker picked, the archive URLs fetched)."""
    context = browser.new_context()
    fetched = []
    context.on("request", lambda request: fetched.append(request.url))
    try:
        page = context.new_page()
        page.goto(url + LESSON)
        expect(page.get_by_role("banner").get_by_role("status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
        cell = page.locator('[data-cell="setup"]')
        paste_code(cell, NUMPY_CELL)
        cell.get_by_role("button", name="Run").click()
        expect(cell).to_have_attribute("data-status", "ok", timeout=RUN_TIMEOUT_MS)
        expect(cell.locator(".cell-output")).to_contain_text("softmax rows [1. 1.]")
        # The downloads of idle time (matplotlib, the standard library's rest) are over too: every archive of
        # the visit is counted, not those that happened to start before the context closed.
        assert page.evaluate("lessonPage.preload") is not None
        picked = page.evaluate("lessonPage.runtime.info.archives")
    finally:
        context.close()
    archives = sorted({u.split("/pyodide/", 1)[1].split("/", 1)[1] for u in fetched
                       if "/pyodide/" in u and u.endswith((".zip", ".whl", "-lock.json"))})
    return picked, archives


def numpy_wheel(archives):
    return next(name for name in archives if name.rsplit("/", 1)[-1].startswith("numpy-"))


def test_a_compressing_host_gets_the_stored_archives(browser, built_site, serve):
    picked, archives = boot_and_run(browser, serve(built_site))
    assert picked == {"stdlib": "stored", "wheels": "stored"}
    assert "stored/python_stdlib.zip" in archives and "stored/pyodide-lock.json" in archives
    assert numpy_wheel(archives).startswith("stored/")
    assert "python_stdlib.zip" not in archives and "pyodide-lock.json" not in archives  # no double download


def test_a_host_that_compresses_nothing_gets_the_deflated_archives(browser, built_site, serve):
    picked, archives = boot_and_run(browser, serve(built_site, compress=False))
    assert picked == {"stdlib": "deflated", "wheels": "deflated"}
    assert "python_stdlib.zip" in archives and "pyodide-lock.json" in archives
    assert not numpy_wheel(archives).startswith("stored/")
    assert [name for name in archives if name.startswith("stored/")] == [
        "stored/compression-probe.whl", "stored/compression-probe.zip"]  # only the probes


def test_without_its_probes_the_worker_falls_back_to_the_deflated_archives(browser, built_site, serve, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(built_site, site, copy_function=os.link)  # hard links: fast, and the original stays whole
    probes = list(site.glob("pyodide/*/stored/compression-probe.*"))
    assert len(probes) == 4  # .zip and .whl, and their brotli copies
    for probe in probes:
        probe.unlink()
    picked, archives = boot_and_run(browser, serve(site))
    assert picked == {"stdlib": "deflated", "wheels": "deflated"}
    assert "python_stdlib.zip" in archives and not numpy_wheel(archives).startswith("stored/")
