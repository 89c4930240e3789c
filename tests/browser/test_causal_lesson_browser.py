"""What Lesson 5 (lessons/causal-mask.md) shows beyond what every lesson gets (tests/browser/test_every_lesson_browser.py):
its pictures are the causal ones its text describes."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS

pytestmark = pytest.mark.browser


@pytest.fixture
def lesson5(browser, site_url):
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(site_url + "lessons/causal-mask/")
    yield page
    ctx.close()


def test_the_masked_view_shows_the_future_grey_before_python_and_after_the_readers_run(lesson5):
    view = lesson5.locator("#widget-causal-view")
    view.scroll_into_view_if_needed()
    expect(view).to_contain_text("Grey cells are masked")  # the build's picture: the seeded head, masked
    expect(lesson5.get_by_role("banner").get_by_role("status")).to_contain_text("Python is ready",
                                                                               timeout=BOOT_TIMEOUT_MS)
    cell = lesson5.locator('[data-cell="show-causal"]')
    cell.get_by_role("button", name="Run").click()  # runs the cells it needs first
    expect(cell).to_have_attribute("data-status", "ok", timeout=60_000)
    expect(view.locator(".widget-source")).to_contain_text("Showing what Cell")
    expect(view).to_contain_text("Grey cells are masked")


def test_before_python_the_heads_grid_shows_the_head_the_lesson_chose(browser, site_url):
    ctx = browser.new_context()
    ctx.route("**/pyodide.asm.wasm", lambda route: None)  # never answered: Python stays loading
    page = ctx.new_page()
    page.goto(site_url + "lessons/causal-mask/")
    grid = page.locator("#widget-smollm2-heads")
    grid.scroll_into_view_if_needed()
    # the build's picture is the lesson's `head: induction`, titled, not the first featured head's empty place
    expect(grid.locator(".realheads-open-title")).to_contain_text("layer 18, head 6")
    expect(grid.locator(".realheads-view canvas:visible")).not_to_have_count(0)  # its picture drawn
    expect(grid.get_by_label("Sentence")).to_have_value("3")
    ctx.close()


def test_the_heads_grid_is_smollm2s_alone_on_the_sentence_written_twice(lesson5):
    grid = lesson5.locator("#widget-smollm2-heads")
    expect(lesson5.get_by_role("banner").get_by_role("status")).to_contain_text("Python is ready",
                                                                               timeout=BOOT_TIMEOUT_MS)
    # scrolled to once the page above it has its final height (a far block's size is an estimate until drawn):
    # the grid asks Python for every head when it comes near, and keeps the lesson's chosen head open
    grid.scroll_into_view_if_needed()
    expect(grid.get_by_label("Model")).to_have_value("smollm2")
    expect(grid.get_by_label("Sentence")).to_have_value("3")
    expect(grid.locator(".realheads-status")).to_have_text(
        "Computed in Python from the shipped data: all 270 heads.", timeout=60_000)
    expect(grid).to_have_attribute("data-heads", "270")
    expect(grid.locator(".realheads-open-title")).to_contain_text("layer 18, head 6")
    # live: false, ablation: false: MiniLM's live panel and SmolLM2's knock-out view are left out
    expect(grid.get_by_role("button", name="Run MiniLM on it")).to_have_count(0)
    expect(grid.locator(".realheads-live, .realheads-ablation")).to_have_count(0)
