"""What a reader's code, a broken host or the editor's API can throw at the lesson page, held (issue 44): a message
from Python far longer than a status line, a widgets.json that is not what the build wrote, carriage returns in a
cell's text. The behaviours are the same isolated or not (none of them touches Stop or the interrupt buffer), so
the isolated site serves them all."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser import LINE_CHARS
from lessonpy.runtime.limits import MESSAGE_CHARS
from pages import LESSON, Cell, wait_cells_ready

pytestmark = pytest.mark.browser


def test_an_exception_class_named_by_ten_million_characters_gives_one_short_status_line(browser, site_url):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        output = Cell(page, "average").run("raise type('E' * 10**7, (Exception,), {})()")
        expect(Cell(page, "average").locator).to_have_attribute("data-status", "error")
        state = Cell(page, "average").locator.locator(".cell-state").text_content()
        assert len(state) <= LINE_CHARS, len(state)
        assert re.fullmatch(r"E{100,}…: see the output below\.", state), state[:80]
        # the class's name as Python cut it (MESSAGE_CHARS, in the middle) is in the output, in its whole length
        longest = max(map(len, re.findall(r"E+", output.text_content())))
        assert MESSAGE_CHARS // 3 < longest < MESSAGE_CHARS and "characters not shown" in output.text_content()
    finally:
        context.close()


WRONG = "This picture could not start: its data did not download (what came is not the page's file); reload the page to try again"


def test_a_widgets_file_of_the_wrong_shape_is_a_failed_download_and_a_reload_recovers(browser, site_url):
    """widgets.json as valid JSON of another shape (null, a list): every widget says the sentence of a failed
    download, in place, and the next load of the page, which gets the build's file, draws them."""
    context = browser.new_context(viewport={"width": 1000, "height": 900}, service_workers="block")
    # One body per load, whoever asks: a widget whose download failed asks again when the next one starts, and
    # a second ask within the same load must get the same wrong file (served by count, a retry got the real one
    # and drew the picture before the test looked, when the machine was slow enough for widgets to start apart).
    loads = ["null", "[]", None]  # None: the build's file
    served = []

    def answer(route):
        body = loads[0]
        served.append(body or "the file")
        if body is None:
            route.continue_()
        else:
            route.fulfill(status=200, content_type="application/json", body=body)

    context.route("**/widgets.json", answer)
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        first = page.locator('[data-widget-id="step1-view"]')
        page.goto(site_url + LESSON)
        for _ in range(2):  # null, then []
            first.scroll_into_view_if_needed()
            expect(first.locator(".widget-error")).to_have_text(WRONG)
            expect(first.get_by_role("alert")).to_have_count(1)
            expect(page.locator(".widget-error").filter(has_not_text=WRONG)).to_have_count(0)  # no other sentence
            loads.pop(0)
            page.reload()
        first.scroll_into_view_if_needed()
        expect(first).to_have_attribute("data-started", "true")
        expect(first.locator(".attn-view")).to_have_count(1)
        expect(page.locator(".widget-error")).to_have_count(0)
        assert list(dict.fromkeys(served)) == ["null", "[]", "the file"], served
        assert errors == []
    finally:
        context.close()


CODE_WITH_CRS = "a = 1\r\nb = 2\rc = a + b\r\nprint(c)\r"
CODE_AS_KEPT = "a = 1\nb = 2\nc = a + b\nprint(c)\n"
FAR = "cost"  # the lesson's last cell: its editor is not built while Python starts (lazy-editor.js)


def test_carriage_returns_set_through_the_editor_become_newlines_everywhere_the_text_goes(browser, site_url):
    """One rule (code-text.js): a cell's text has "\\n" line ends, whether its editor is built or not, in
    storage, after a reload, and in "Download with my edits"."""
    assert len(CODE_WITH_CRS) == 33 and len(CODE_AS_KEPT) == 31  # two "\r\n" each lose a character
    context = browser.new_context(accept_downloads=True)
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        wait_cells_ready(page)
        code_of = "id => lessonPage.cells.cells.find(c => c.id === id).code"
        stand_in = page.evaluate("""([id, code]) => {
            const { editor } = lessonPage.cells.cells.find(c => c.id === id);
            const standIn = editor.editor === null; // CodeMirror not built: the stand-in holds the text
            editor.setCode(code);
            return standIn;
        }""", [FAR, CODE_WITH_CRS])
        assert stand_in, "the far cell's editor was built already: this test would not try the stand-in"
        assert page.evaluate(code_of, FAR) == CODE_AS_KEPT
        stored = page.evaluate("key => JSON.parse(localStorage.getItem(key)).code", f"attn-lesson:v1:attention:cell:{FAR}")
        assert stored == CODE_AS_KEPT
        page.reload()
        wait_cells_ready(page)
        assert page.evaluate(code_of, FAR) == CODE_AS_KEPT
        Cell(page, FAR).locator.locator(".cm-content, pre.code-standin").first.click()  # the editor is built: the same text
        expect(Cell(page, FAR).locator.locator(".cm-content")).to_have_count(1)
        assert page.evaluate(code_of, FAR) == CODE_AS_KEPT
        button = page.get_by_role("button", name="Download with my edits")
        expect(button).to_be_enabled()
        with page.expect_download() as info:
            button.click()
        notebook = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
        mine = next(c for c in notebook["cells"] if c["metadata"].get("lesson", {}).get("cell") == FAR)
        assert "".join(mine["source"]) == CODE_AS_KEPT.rstrip("\n")
    finally:
        context.close()
