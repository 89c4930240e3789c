"""The widgets fixture lesson (tests/fixtures/widgets/widgets.md): every widget of the course on one small page,
built from the fixture into a site of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from browser import build_lesson_site, open_tables

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "widgets" / "widgets.md"
LESSON = "lessons/widgets/"


def build_fixture_site(tmp: Path, **options) -> Path:
    """Build the widgets fixture lesson into tmp/site (with build.Options *options*); return the site's folder."""
    return build_lesson_site(tmp, FIXTURE, **options)


def open_page(browser, url, **context_options):
    """A new context and the fixture lesson in it (not waiting for Python): (context, page); page.errors collects
    the page's uncaught errors."""
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(url + LESSON)
    return context, page


def open_panel(browser, url, widget_id):
    """A new context on the fixture lesson, Python ready, the widget *widget_id* in view: (context, page, its page
    errors, the widget's locator)."""
    from playwright.sync_api import expect

    from browser import BOOT_TIMEOUT_MS
    from pages import Widget

    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + LESSON)
    expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
    widget = Widget(page, widget_id).locator
    widget.scroll_into_view_if_needed()
    return context, page, errors, widget


def real_table(real):
    """The open head's table as float32 (T, T), from the cells' exact data-value."""
    open_tables(real)
    rows = real.locator(".realheads-table tbody tr")
    return np.array(rows.evaluate_all(
        "trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => Number(td.dataset.value)))"), dtype=np.float32)
