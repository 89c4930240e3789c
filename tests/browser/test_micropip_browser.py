"""micropip.list() in the page names the lesson's own package, whichever way Python came up.

The worker unpacks the lesson's wheel itself (micropip stays off the start-up path), so it writes the
PYODIDE_SOURCE file micropip 0.9.0 lists packages by; a normal boot and a restore from the memory
snapshot both unpack the wheel the same way, and both are checked here.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, paste_code, protocol_errors

pytestmark = pytest.mark.browser
LESSON = "lessons/attention/"
LIST_CODE = ("import micropip\n"
             "listed = micropip.list()\n"
             "print('lessonpy' in listed, listed['lessonpy'].source.endswith('.whl'), 'numpy' in listed)")


def python_lists_lessonpy(page) -> None:
    cell = page.locator('[data-cell="setup"]')
    paste_code(cell, LIST_CODE)
    cell.get_by_role("button", name="Run").click()
    expect(cell).to_have_attribute("data-status", "ok", timeout=90_000)  # micropip loads on first import
    expect(cell.locator(".cell-output")).to_contain_text("True True True")


def test_micropip_lists_lessonpy_after_a_normal_boot_and_after_a_restore(browser, revisit_site, serve):
    context = browser.new_context()
    page = context.new_page()
    page.goto(serve(revisit_site, isolate=True) + LESSON)  # a first visit boots normally only where revisits restore
    ready = page.get_by_role("banner").get_by_role("status")
    expect(ready).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("lessonPage.runtime.info.boot.from") == "start"
    python_lists_lessonpy(page)
    # Once the service worker keeps the snapshot, a reload restores Python from it.
    expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=120_000)
    page.reload()
    expect(ready).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("lessonPage.runtime.info.boot.from") == "snapshot"
    python_lists_lessonpy(page)
    assert protocol_errors(page) == []
    context.close()
