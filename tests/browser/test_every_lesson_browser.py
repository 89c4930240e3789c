"""Every lesson course.yml lists that has a page, as a reader meets it in Chromium with Pyodide, with no
test code of its own: the page boots, and every cell, the needs=page ones included (only the page can run
them: tests/unit/test_every_lesson.py runs the others in CPython, the build under Node), runs top to bottom and
prints the numbers the text quotes (the numbers module's CELL_PRINTS, as CPython's numpy gave the text);
then, run again from the last to the first, each prints the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import BOOT_TIMEOUT_MS, protocol_errors
from lesson_checks import course_lessons, missing_prints
from playwright.sync_api import expect
from pages import Cell

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
LESSONS = course_lessons(ROOT / "lessons")


@pytest.fixture(scope="module", params=LESSONS, ids=lambda lesson: lesson.slug)
def lesson_page(request, browser, site_url):
    lesson = request.param
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{site_url}lessons/{lesson.slug}/")
    expect(page.locator(".py-status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    yield lesson, page
    assert not errors, f"uncaught errors in the page: {errors}"
    assert protocol_errors(page) == []  # every cell of the lesson, figures and arrays included
    context.close()


def test_every_cell_runs_in_the_page_prints_what_the_text_quotes_and_the_same_when_run_again(lesson_page):
    lesson, page = lesson_page
    assert page.locator("[data-cell]").count() == len(lesson.cells)
    # the page reads each cell's code from its stand-in, once: it must be the lesson's code exactly
    expect(page.locator("body")).to_have_attribute("data-cells", "ready")
    assert page.evaluate("() => lessonPage.cells.cells.map((c) => [c.id, c.original])") == [
        [cell.id, cell.code] for cell in lesson.cells]
    first = {}
    for cell in lesson.cells:
        text = first[cell.id] = Cell(page, cell.id).run_as_written()
        assert " first: this cell builds on " not in text, f"cell {cell.id} needed earlier cells: they should have run"
    problems = missing_prints(lesson, first)  # Pyodide's numpy must print what CPython's numpy gave the text
    assert not problems, "\n\n".join(problems)
    changed = [f"{lesson.source_path}:{cell.line}: cell {cell.id!r}" for cell in reversed(lesson.cells)
               if Cell(page, cell.id).run_as_written() != first[cell.id]]
    assert not changed, "these cells print something else when run again after the later ones:\n" + "\n".join(changed)
