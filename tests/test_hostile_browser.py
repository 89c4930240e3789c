"""What a reader's code, a broken host or the editor's API can throw at the lesson page, held (issue 44): a message
from Python far longer than a status line, a widgets.json that is not what the build wrote, carriage returns in a
cell's text. The behaviours are the same isolated or not (none of them touches Stop or the interrupt buffer), so
the isolated site serves them all."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import LINE_CHARS
from lessonpy.limits import MESSAGE_CHARS
from test_page_browser import LESSON, cell, run

pytestmark = pytest.mark.browser


def test_an_exception_class_named_by_ten_million_characters_gives_one_short_status_line(browser, site_url):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        output = run(page, "average", "raise type('E' * 10**7, (Exception,), {})()")
        expect(cell(page, "average")).to_have_attribute("data-status", "error")
        state = cell(page, "average").locator(".cell-state").text_content()
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
    bodies = ["null", "[]"]  # one per load, then the real file
    served = []

    def answer(route):
        served.append(bodies[0] if bodies else "the file")
        if bodies:
            route.fulfill(status=200, content_type="application/json", body=bodies.pop(0))
        else:
            route.continue_()

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
            page.reload()
        first.scroll_into_view_if_needed()
        expect(first).to_have_attribute("data-started", "true")
        expect(first.locator(".attn-view")).to_have_count(1)
        expect(page.locator(".widget-error")).to_have_count(0)
        assert served[:3] == ["null", "[]", "the file"], served
        assert errors == []
    finally:
        context.close()
