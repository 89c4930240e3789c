"""Static code and solutions are coloured near the screen (static/js/page/highlight.js): the page carries them
as plain text and token runs, and the spans are made as the reader comes near. Real Chromium, real clicks."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS
from pages import LESSON, wait_cells_ready


pytestmark = pytest.mark.browser

COLOUR = "(e) => getComputedStyle(e).color"


def test_a_far_code_block_is_plain_until_the_reader_comes_near_then_coloured_with_the_same_text(fresh_context,
                                                                                                site_url):
    page = fresh_context.new_page()
    page.goto(site_url + LESSON)
    wait_cells_ready(page)  # the page's scripts are running (as long as a boot may take, on a loaded machine)
    block = page.locator("figure.code-block pre").last
    text = block.text_content()
    assert block.get_attribute("data-tokens") and block.locator("span").count() == 0  # far: plain text
    assert page.locator("pre[data-tokens] span").count() == 0
    block.scroll_into_view_if_needed()
    expect(block.locator("span.k").first).to_be_attached(timeout=BOOT_TIMEOUT_MS)  # highlight.js may still load
    assert block.get_attribute("data-tokens") is None
    assert block.text_content() == text  # the same code, to select, copy and find
    keyword, plain = block.locator("span.k").first, block.locator("code")
    assert keyword.evaluate(COLOUR) != plain.evaluate(COLOUR)  # the stylesheet's colours apply


def test_a_solution_is_coloured_when_it_is_shown(fresh_context, site_url):
    page = fresh_context.new_page()
    page.goto(site_url + LESSON)
    wait_cells_ready(page)
    solution = page.locator(".exercise-solution").first
    page.locator(".exercise").first.scroll_into_view_if_needed()  # the exercise near the screen, its solution hidden
    page.wait_for_timeout(300)
    assert solution.locator("pre span").count() == 0
    solution.evaluate("(e) => { e.hidden = false; }")  # as Show solution does
    expect(solution.locator("pre span.k").first).to_be_attached(timeout=BOOT_TIMEOUT_MS)
