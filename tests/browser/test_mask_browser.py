"""A causal head's future is grey wherever its pattern is drawn (the scores, the weights, the real-heads grid's
open head), before Python and after the reader's cell, and the views' numbers read as words with no false alarm
on the lessons' own examples (lessonpy.maths.show's stats, static/js/page/components/statwords.js)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS
from pages import Cell, python_status

pytestmark = pytest.mark.browser

WEIGHTS_MASKED = "Grey cells are masked: their scores are −∞, so their weight is 0."
SCORES_MASKED = "Grey cells are masked (−∞ before the softmax)."
# every cell of the lessons that calls show_attention, and the view it draws in
SHOW_CELLS = {"attention": [("show", "step1-view"), ("show", "step1-steps"), ("cat", "cat-view"),
                            ("train-head", "trained-head-view"), ("real-head-minilm", "real-view-minilm"),
                            ("real-head-smollm2", "real-view-smollm2")],
              "causal-mask": [("show-causal", "causal-view")]}
CAUSAL_VIEWS = {"real-view-smollm2", "causal-view"}


@pytest.fixture(scope="module", params=sorted(SHOW_CELLS))
def lesson(request, browser, site_url):
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(site_url + f"lessons/{request.param}/")
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    yield request.param, page
    ctx.close()


def only(lesson, wanted):
    """The page of *lesson* when it is lessons/{wanted}.md (a test of one lesson skips the other's page)."""
    name, page = lesson
    if name != wanted:
        pytest.skip(f"a test of lessons/{wanted}.md")
    return page


def caption(view, figure):
    return view.locator(f".attn-figure-{figure} figcaption")


def expect_words_and_no_alarm(view, causal):
    """The view's numbers as labelled words, the causal mask named for a causal head, no false alarm."""
    facts = view.locator(".attn-facts dt")
    expect(facts.filter(has_text="Mean entropy of a row")).to_have_count(1)
    assert 1 <= facts.count() <= 3  # two or three numbers in words; the rest in the disclosure
    expect(facts.filter(has_text="Causal mask")).to_have_count(1 if causal else 0)
    expect(view.locator(".attn-notes")).not_to_contain_text("not the softmax")
    text = view.inner_text()
    for raw in ("weights_match_scores", "log_T", "mean_entropy", "scores_divided_by", "masked 0"):
        assert raw not in text, f"{raw!r} shown raw in {view.get_attribute('id')}"


def expect_masked(view, causal):
    if causal:
        expect(caption(view, "scores")).to_contain_text(SCORES_MASKED)
        expect(caption(view, "weights")).to_contain_text(WEIGHTS_MASKED)
    else:
        expect(caption(view, "weights")).not_to_contain_text("Grey cells")


def test_lesson_4s_smollm2_cell_as_written_keeps_the_future_grey(lesson):
    page = only(lesson, "attention")
    view = page.locator("#widget-real-view-smollm2")
    view.scroll_into_view_if_needed()
    expect_masked(view, causal=True)  # the build's picture
    expect(view.locator(".attn-facts")).to_contain_text("the 120 scores above the diagonal are −∞")
    Cell(page, "real-head-smollm2").run_as_written()
    expect(view.locator(".widget-source")).to_contain_text("Showing what Cell")  # now the reader's arrays
    expect_masked(view, causal=True)
    expect(view.locator(".attn-facts")).to_contain_text("the 120 scores above the diagonal are −∞")
    expect_words_and_no_alarm(view, causal=True)
    # the query-row view: the first token's later keys are masked (hatched grey), not bars of 0%
    bars = view.locator(".attn-figure-query canvas")
    bars.scroll_into_view_if_needed()
    bars.focus()
    for _ in range(20):  # up to the first query
        bars.press("ArrowUp")
    expect(bars).to_have_attribute("aria-label", re.compile(r"15 later keys are masked \(grey\): it cannot see them"))


def test_every_show_cell_draws_words_and_no_false_alarm(lesson):
    name, page = lesson
    for cell_id, view_id in SHOW_CELLS[name]:
        view = page.locator(f"#widget-{view_id}")
        view.scroll_into_view_if_needed()
        causal = view_id in CAUSAL_VIEWS
        expect_words_and_no_alarm(view, causal)  # the build's picture
        expect_masked(view, causal)
        if not view.locator(".widget-source").inner_text().startswith("Showing what Cell"):
            Cell(page, cell_id).run_as_written()
        expect(view.locator(".widget-source")).to_contain_text("Showing what Cell")
        expect_words_and_no_alarm(view, causal)
        expect_masked(view, causal)
        view.locator(".attn-tables > summary").click()  # the other numbers, labelled, in the disclosure
        expect(view.locator(".attn-numbers")).to_contain_text("Positions T")


def test_an_open_causal_head_greys_its_future_in_the_weights_too(lesson):
    page = only(lesson, "causal-mask")
    grid = page.locator("#widget-smollm2-heads")
    grid.scroll_into_view_if_needed()
    expect(grid.locator(".realheads-status")).to_have_text(
        "Computed in Python from the shipped data: all 270 heads.", timeout=60_000)
    expect(grid.locator(".realheads-open-title")).to_contain_text("layer 18, head 6")
    grid.locator(".realheads-view .attn-figure-weights").scroll_into_view_if_needed()
    expect(caption(grid, "weights")).to_contain_text(WEIGHTS_MASKED)  # as the grid and the strip grey it
