"""Page objects of the browser layer: a lesson page's cells, its widgets and its Python status line, found the
way a reader finds them (a cell by its number, "Cell 3", or its id; a widget by its section's name or id), so that
the tests say what they do to the page and read what it shows, and the page's internals are read in one place."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, RUN_TIMEOUT_MS, paste_code, printed

LESSON = "lessons/attention/"
DONE = re.compile(r"^(ok|error|stopped)$")  # a cell's data-status once its run has ended
PHONE = {"width": 390, "height": 844}  # an iPhone 13's CSS viewport


def python_status(page):
    """The page's Python status line (in the header: widgets have status lines of their own)."""
    return page.get_by_role("banner").get_by_role("status")


def wait_python_ready(page, timeout=BOOT_TIMEOUT_MS) -> None:
    expect(python_status(page)).to_contain_text("Python is ready", timeout=timeout)


def interpreter(page) -> int:
    """Which interpreter the page's Python is (one more at every restart; an interrupt in place keeps it)."""
    return page.evaluate("lessonPage.runtime.generation")


def open_lesson(context, base_url, lesson=LESSON):
    """Open the lesson in a new tab and wait until Python says it is ready; page.errors collects the page's
    uncaught errors."""
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(base_url + lesson)
    wait_python_ready(page)
    return page


def wait_cells_ready(page) -> None:
    """Wait until the page's cells have their editors and saved edits. Right after a goto or a
    reload a loaded machine can take longer than Playwright's default 5 s to get there, so this
    waits as long as a boot may take."""
    expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=BOOT_TIMEOUT_MS)


class Cell:
    """One runnable cell: its code, its Run, its status and its output."""

    def __init__(self, page, cell_id: str):
        self.page, self.id = page, cell_id
        self.locator = page.locator(f'[data-cell="{cell_id}"]')

    @classmethod
    def numbered(cls, page, number: int) -> Cell:
        """The cell the page names "Cell <number>" (its group's accessible name, what the reader sees)."""
        group = page.get_by_role("group", name=f"Cell {number}", exact=True)
        return cls(page, group.get_attribute("data-cell"))

    @property
    def output(self):
        return self.locator.locator(".cell-output")

    @property
    def status(self) -> str | None:
        """"idle", "running", "ok", "error" or "stopped" (data-status)."""
        return self.locator.get_attribute("data-status")

    def button(self, name: str):
        return self.locator.get_by_role("button", name=name)

    def set_code(self, code: str) -> None:
        """Replace the code the way a reader pastes it in."""
        paste_code(self.locator, code)

    def code(self) -> str:
        """The exact text in the editor (inner_text of CodeMirror's lines drops newlines)."""
        wait_cells_ready(self.page)
        return self.page.evaluate("id => lessonPage.cells.cells.find(c => c.id === id).code", self.id)

    def original(self) -> str:
        """The code the lesson gave the cell (what Reset restores)."""
        wait_cells_ready(self.page)
        return self.page.evaluate("id => lessonPage.cells.cells.find(c => c.id === id).original", self.id)

    def wait_done(self, timeout=RUN_TIMEOUT_MS):
        """Wait until the run has ended (ok, error or stopped); the output's locator."""
        expect(self.locator).to_have_attribute("data-status", DONE, timeout=timeout)
        return self.output

    def press_run(self, code: str | None = None) -> None:
        """Optionally set the code, then press Run (not waiting)."""
        if code is not None:
            self.set_code(code)
        self.button("Run").click()

    def run(self, code: str | None = None, timeout=RUN_TIMEOUT_MS):
        """press_run(), then wait for the result; the output's locator."""
        self.press_run(code)
        return self.wait_done(timeout)

    def run_ok(self, code: str | None = None, timeout=RUN_TIMEOUT_MS):
        """run(), and the run must have succeeded."""
        self.press_run(code)
        expect(self.locator).to_have_attribute("data-status", "ok", timeout=timeout)
        return self.output

    def run_as_written(self, timeout=60_000) -> str:
        """Run the cell's own code as a reader does (opening its fold first, if it is in one): what it printed.
        The run must succeed."""
        fold = self.page.locator(f'details:has([data-cell="{self.id}"])')
        if fold.count() and not fold.evaluate("d => d.open"):  # a folded cell (fold="...") or an aside
            fold.locator(":scope > summary").click()
        self.press_run()
        self.wait_done(timeout)
        text = printed(self.locator)
        assert self.status == "ok", f"cell {self.id} failed:\n{text}"
        return text


class Widget:
    """One widget: the section the build wrote (data-widget-id, an aria-label), where the page draws its view."""

    def __init__(self, page, widget_id: str):
        self.page, self.id = page, widget_id
        self.locator = page.locator(f"#widget-{widget_id}")

    @classmethod
    def named(cls, page, label: str) -> Widget:
        """The widget whose section the page names `label` (its region's accessible name)."""
        return cls(page, page.get_by_role("region", name=label, exact=True).get_attribute("data-widget-id"))

    def wait_started(self, timeout=BOOT_TIMEOUT_MS) -> None:
        """Wait until the page has drawn the widget (widget-loader.js marks it started)."""
        expect(self.locator).to_have_attribute("data-started", "true", timeout=timeout)

    @property
    def alert(self):
        return self.locator.get_by_role("alert")

    @property
    def source(self):
        """The line that says whose arrays the view shows ("Showing what Cell 3 computed.")."""
        return self.locator.locator(".widget-source")

    @property
    def updates(self) -> int:
        """How many times a cell's arrays have replaced the view's (data-updated)."""
        return int(self.locator.get_attribute("data-updated") or 0)

    def canvas(self, within: str = ""):
        return self.locator.locator(f"{within} canvas".strip())
