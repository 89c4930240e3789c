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
