"""Lazy editors (static/js/page/lazy-editor.js): a cell's code is a plain-text stand-in until the reader
comes near it, and everything a reader does works on a cell whose editor is not built yet.

To hold a page in that state for as long as a test needs, the tests hold back CodeMirror itself
(the request for vendor/codemirror.js waits until the test lets it go): no editor can be built,
as on a slow connection before the script has arrived. Real Chromium, real Pyodide, real clicks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, CODE, LOOP, RUN_TIMEOUT_MS, paste_code, wait_looping
from held_editors import WALK_THROUGH, built, open_held
from pages import LESSON, Cell, python_status

pytestmark = pytest.mark.browser

FAR = "cat"  # a cell several screens below the top of the lesson
COUNTER = "n_far = globals().get('n_far', 0) + 1\nprint('far run', n_far)"


def save_edits(context, url, edits):
    """Edit cells in a tab of their own, as a reader did on an earlier visit (saved in this browser)."""
    page = context.new_page()
    page.goto(url + LESSON)
    for cell_id, code in edits.items():
        paste_code(Cell(page, cell_id).locator, code)
        expect(Cell(page, cell_id).locator.get_by_role("button", name="Reset")).to_be_visible()
    page.close()


def bring_to_centre(locator):
    """Scroll `locator` to the middle of the screen and wait until it stands still: blocks above it
    get their real heights as they are drawn (content-visibility, widgets), which moves it."""
    last = None
    for _ in range(50):
        locator.evaluate("e => e.scrollIntoView({ block: 'center' })")
        locator.page.wait_for_timeout(200)
        box = locator.bounding_box()
        if box == last:
            return box
        last = box
    raise AssertionError("the element never stopped moving")


def standin(page, cell_id):
    return Cell(page, cell_id).locator.locator("pre.code-standin")


def test_a_far_cell_runs_by_run_and_by_keys_before_any_editor_exists(fresh_context, site_url):
    save_edits(fresh_context, site_url, {FAR: COUNTER})
    page, held = open_held(fresh_context, site_url)
    far = Cell(page, FAR).locator
    viewport = page.viewport_size["height"]
    assert far.bounding_box()["y"] > 2 * viewport, "the cell starts well below the fold"
    expect(page.locator(".cm-editor")).to_have_count(0)  # CodeMirror has not even loaded
    expect(standin(page, FAR)).to_contain_text("print('far run', n_far)")  # the saved edit, shown
    far.get_by_role("button", name="Run").click()
    out = Cell(page, FAR).wait_done()
    expect(far).to_have_attribute("data-status", "ok")
    expect(out).to_contain_text("far run 1")
    index = page.evaluate("id => lessonPage.cells.cells.find(c => c.id === id).index", FAR)
    before = ", ".join(f"Cell {i}" for i in range(1, index))
    expect(out).to_contain_text(f"Ran {before} first")  # the cells it builds on, never built either
    # Focused by the keyboard, the stand-in holds the focus and its keys until the editor exists.
    standin(page, FAR).focus()
    # A cell asked to run while it runs is not queued twice (its Run button is disabled then too):
    # each key waits for the run before it to end, not only for its printed line.
    page.keyboard.press("Shift+Enter")
    expect(out).to_contain_text("far run 2", timeout=RUN_TIMEOUT_MS)
    Cell(page, FAR).wait_done()
    page.keyboard.press("Control+Enter")
    expect(out).to_contain_text("far run 3", timeout=RUN_TIMEOUT_MS)
    Cell(page, FAR).wait_done()
    expect(page.locator(".cm-editor")).to_have_count(0)
    # CodeMirror arrives: the focused stand-in becomes an editor with the same code, focused.
    held.release()
    built(far)
    expect(far.locator(".cm-content")).to_be_focused()
    assert Cell(page, FAR).code() == COUNTER
    page.keyboard.press("Shift+Enter")
    expect(out).to_contain_text("far run 4", timeout=RUN_TIMEOUT_MS)


def test_clicking_a_stand_in_gives_the_editor_with_the_caret_where_the_click_was(fresh_context, site_url):
    page, held = open_held(fresh_context, site_url, wait_python=False)
    target = standin(page, FAR)
    # Click just before the first "np." of the cell's code.
    original = Cell(page, FAR).original()
    offset = original.index("np.")
    point = """(pre, offset) => {
      const text = pre.querySelector("code").firstChild; // the stand-in's code is one text node
      const range = document.createRange();
      range.setStart(text, offset);
      range.setEnd(text, offset + 1);
      const r = range.getBoundingClientRect();
      return { x: r.left + 1, y: r.top + r.height / 2 };
    }"""
    bring_to_centre(target)
    box = target.evaluate(point, offset)
    for _ in range(50):  # the character to the middle of the screen, until blocks above it stand still
        page.evaluate("y => window.scrollBy(0, y - innerHeight / 2)", box["y"])
        page.wait_for_timeout(200)
        last, box = box, target.evaluate(point, offset)
        if box == last:
            break
    assert 0 < box["y"] < page.viewport_size["height"]
    page.mouse.click(box["x"], box["y"])
    held.release()
    built(Cell(page, FAR).locator)
    expect(Cell(page, FAR).locator.locator(".cm-content")).to_be_focused()
    expect(standin(page, FAR)).to_have_count(0)
    page.keyboard.type("EDIT")
    assert Cell(page, FAR).code() == original[:offset] + "EDIT" + original[offset:]
    expect(Cell(page, FAR).locator.get_by_role("button", name="Reset")).to_be_visible()


def test_tabbing_into_a_stand_in_gives_the_editor(fresh_context, site_url):
    page, held = open_held(fresh_context, site_url, wait_python=False)
    Cell(page, FAR).locator.locator(".cell-editor").scroll_into_view_if_needed()
    # Back from the cell's Run button to its code, as a keyboard reader goes.
    Cell(page, FAR).locator.get_by_role("button", name="Run").focus()
    page.keyboard.press("Shift+Tab")
    expect(standin(page, FAR)).to_be_focused()
    held.release()
    built(Cell(page, FAR).locator)
    expect(Cell(page, FAR).locator.locator(".cm-content")).to_be_focused()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # typed")
    assert Cell(page, FAR).code() == Cell(page, FAR).original() + "  # typed"
    # the system's theme switched to dark while the page is open: the code's colours follow (site.css --syn-*;
    # fixed light colours left `import` at a contrast of 2.0 on the dark background)
    page.keyboard.press("Control+Home")  # the first line, `import numpy as np`, in CodeMirror's drawn lines
    keyword = Cell(page, FAR).locator.locator(".cm-content span", has_text=re.compile(r"^import$")).first
    expect(keyword).to_have_css("color", "rgb(122, 31, 162)")  # #7a1fa2
    page.emulate_media(color_scheme="dark")
    expect(keyword).to_have_css("color", "rgb(215, 166, 255)")  # #d7a6ff, 4.5:1 or more on the dark --code-bg
    page.emulate_media(color_scheme="light")


def open_every_fold(page):
    """Open every aside (::: aside) and every folded cell (fold="..."), asides first: a closed one's cells
    have no size to measure."""
    for selector in ("details.aside:not([open]) > summary", "details.cell-fold:not([open]) > summary"):
        closed = page.locator(selector)  # re-queried after each click: an opened one leaves the list
        while closed.count():
            closed.first.click()


def test_no_layout_shift_when_editors_replace_their_stand_ins(fresh_context, site_url):
    page, held = open_held(fresh_context, site_url, wait_python=False)
    holders = page.locator(".cell-editor, .exercise-editor")
    measure = """holders => holders.map((h) => {
      const box = h.getBoundingClientRect();
      const text = document.createTreeWalker(h.querySelector("pre.code-standin > code, .cm-line"), NodeFilter.SHOW_TEXT).nextNode();
      const range = document.createRange();
      range.setStart(text, 0);
      range.setEnd(text, 1);
      const first = range.getBoundingClientRect(); // where the code's first character is drawn
      return { id: h.parentElement.id, height: box.height, x: first.left - box.left, y: first.top - box.top };
    })"""
    count = holders.count()
    assert count > 20
    open_every_fold(page)  # a folded cell's code is seen once opened
    for i in range(count):  # on screen, as the reader sees them
        holders.nth(i).scroll_into_view_if_needed()
    before = holders.evaluate_all(measure)
    held.release()
    for i in range(count):
        holders.nth(i).scroll_into_view_if_needed()
        built(holders.nth(i))
        # CodeMirror draws the lines near its viewport and estimates the others (as wrapped, until
        # it knows how many characters fit) until it has measured them, in an animation frame after
        # they came into view: walk through the cell as a reader scrolls, a frame pair at each step.
        holders.nth(i).evaluate(WALK_THROUGH)
    expect(page.locator("pre.code-standin")).to_have_count(0)
    after = holders.evaluate_all(measure)
    for b, a in zip(before, after):
        assert a["id"] == b["id"]
        assert abs(a["height"] - b["height"]) < 0.5, (b, a)
        assert abs(a["x"] - b["x"]) < 0.5 and abs(a["y"] - b["y"]) < 0.5, (b, a)


def test_an_editor_built_off_screen_keeps_its_height_until_it_has_measured_in_view(fresh_context, site_url):
    """Editors built in idle time, far from the screen, take the stand-ins' heights; as the reader scrolls to
    each, nothing in the cell moves (CodeMirror can measure only in view: before, its guesses made every
    cell 10-50% taller off screen and snap back as it came into view, moving the Run button under the pointer)."""
    page, held = open_held(fresh_context, site_url, wait_python=False)
    holders = page.locator(".cell-editor, .exercise-editor")
    open_every_fold(page)  # a folded cell's editor, opened, is built in idle time too
    page.evaluate("scrollTo(0, 0)")
    heights = "holders => holders.map((h) => [h.parentElement.id, h.getBoundingClientRect().height, h.style.height])"
    before = holders.evaluate_all(heights)
    held.release()
    # The idle builds, the reader still at the top of the page
    expect(page.locator("pre.code-standin")).to_have_count(0, timeout=BOOT_TIMEOUT_MS)
    assert page.evaluate("scrollY") == 0
    off_screen = holders.evaluate_all(heights)
    for (cell_id, height, _), (_, now, held_at) in zip(before, off_screen):
        assert abs(now - height) < 0.5, (cell_id, height, now)
    assert any(held_at for *_, held_at in off_screen), "no editor was built off screen: the test saw nothing"
    for i in range(holders.count()):
        holders.nth(i).evaluate(WALK_THROUGH)
    seen = holders.evaluate_all(heights)
    for (cell_id, height, _), (_, now, held_at) in zip(before, seen):
        assert held_at == "", f"{cell_id}: still held at {held_at} after it was in view"
        assert abs(now - height) < 0.5, (cell_id, height, now)


def test_reset_and_other_tabs_edits_reach_cells_whose_editor_was_never_built(fresh_context, site_url):
    save_edits(fresh_context, site_url, {FAR: "mine = 1"})
    page, held = open_held(fresh_context, site_url, wait_python=False)
    far = Cell(page, FAR).locator
    expect(far.locator(CODE)).to_have_text("mine = 1")
    # Another tab (its editors built) edits the cell: this tab's stand-in follows.
    other = fresh_context.new_page()
    other.goto(site_url + LESSON)
    paste_code(Cell(other, FAR).locator, "theirs = 2")
    expect(far.locator(CODE)).to_have_text("theirs = 2")
    assert Cell(page, FAR).code() == "theirs = 2"
    # Reset on the stand-in brings the lesson's code back, saved for the other tab too.
    far.get_by_role("button", name="Reset").click()
    expect(far.get_by_role("button", name="Reset")).to_be_hidden()
    assert Cell(page, FAR).code() == Cell(page, FAR).original()
    expect(Cell(other, FAR).locator.locator(".cm-content")).to_contain_text(Cell(other, FAR).original().splitlines()[0])
    assert Cell(other, FAR).code() == Cell(other, FAR).original()
    expect(page.locator(".cm-editor")).to_have_count(0)  # all of it without CodeMirror in this tab
    held.release()


def test_stop_replays_cells_whose_editor_was_never_built(fresh_context, plain_site_url):
    save_edits(fresh_context, plain_site_url, {
        "setup": "kept = 41", "scores": "kept += 1\n" + LOOP, "softmax": "print('kept is', kept)"})
    page, _held = open_held(fresh_context, plain_site_url)
    assert page.evaluate("crossOriginIsolated") is False  # Stop restarts Python and replays
    Cell(page, "setup").locator.get_by_role("button", name="Run").click()
    Cell(page, "setup").wait_done()
    scores = Cell(page, "scores").locator
    scores.get_by_role("button", name="Run").click()
    wait_looping(scores)
    scores.get_by_role("button", name="Stop").click()
    expect(scores).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    expect(scores.locator(".cell-output")).to_contain_text("re-ran Cell")
    Cell(page, "softmax").locator.get_by_role("button", name="Run").click()
    expect(Cell(page, "softmax").wait_done()).to_contain_text("kept is 41")
    expect(page.locator(".cm-editor")).to_have_count(0)


def test_far_editors_and_widgets_wait_until_the_reader_moves(fresh_context, site_url):
    """Building what is off the screen waits for the reader's first scroll, key, pointer or touch (idle.js,
    readerMoved): on a phone it was half of the load's blocking time, for a reader who may never scroll."""
    page = fresh_context.new_page()
    page.goto(site_url + LESSON)
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    standins, widgets = page.locator("pre.code-standin"), page.locator("[data-widget]")
    # Far: beyond the margin in which editors are built once Python has started (lazy-editor.js, NEAR: 150% of
    # the screen). Those near are built just after "Python is ready", so a count of every stand-in at that
    # moment took one still being built for a far one that had not waited (1 run in 4).
    far = "() => [...document.querySelectorAll('pre.code-standin')].filter((s) => s.getBoundingClientRect().top > 3 * innerHeight).length"
    far_editors, far_widgets = page.evaluate(far), widgets.count() - page.locator('[data-started="true"]').count()
    assert far_editors > 10 and far_widgets > 3
    page.wait_for_timeout(2000)  # idle time enough for every one of them, had they not waited
    assert page.evaluate(far) == far_editors
    assert page.locator('[data-widget][data-started="true"]').count() == widgets.count() - far_widgets
    assert page.evaluate("scrollY") == 0
    page.mouse.move(300, 300)
    page.mouse.wheel(0, 5)  # a reader's first scroll, however small
    expect(standins).to_have_count(0, timeout=BOOT_TIMEOUT_MS)
    expect(page.locator('[data-widget][data-started="true"]')).to_have_count(widgets.count(), timeout=BOOT_TIMEOUT_MS)


def test_editors_near_the_screen_wait_for_python_but_one_the_reader_clicks_does_not(fresh_context, site_url):
    """Even the editors on the first screens are built only once Python has started (lazy-editor.js,
    deferNearEditors, from page.js): built beside Python's start they delayed the first output on a machine
    with few cores. Until then their stand-ins show the code; one the reader clicks is an editor at once."""
    held = []
    fresh_context.route("**/pyodide.asm.wasm", lambda route: held.append(route))  # no Python until let go
    page = fresh_context.new_page()
    page.goto(site_url + LESSON)
    expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=BOOT_TIMEOUT_MS)
    first = page.locator("[data-cell]").first
    first.scroll_into_view_if_needed()  # the reader scrolls down to the first cell
    expect(first.locator("pre.code-standin")).to_be_in_viewport()
    page.wait_for_timeout(2000)  # idle time enough to build the editors near it, had they not waited
    assert held, "the page never asked for Python's engine"
    expect(page.locator(".cm-editor")).to_have_count(0)
    first.locator("pre.code-standin").click()  # the reader wants to type: no waiting for Python
    built(first)
    expect(first.locator(".cm-content")).to_be_focused()
    assert page.locator(".cm-editor").count() == 1
    for route in held:
        route.continue_()
    fresh_context.unroute("**/pyodide.asm.wasm")
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    # then the other editors near the reader come, without a click
    expect(page.locator(".cm-editor")).not_to_have_count(1, timeout=BOOT_TIMEOUT_MS)


def test_an_editor_the_reader_scrolls_to_while_python_computes_waits_for_the_run_to_end(fresh_context, site_url):
    """Editors are not built while Python computes (deferNearEditors' `busy`, from page.js): on a machine with
    few cores the reader's result comes first. The stand-in shows the code meanwhile; the editor follows."""
    save_edits(fresh_context, site_url, {"scores": LOOP})
    page = fresh_context.new_page()
    page.goto(site_url + LESSON)
    expect(python_status(page)).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    scores = Cell(page, "scores").locator
    scores.get_by_role("button", name="Run").click()
    wait_looping(scores)
    far = Cell(page, FAR).locator
    far.scroll_into_view_if_needed()
    page.wait_for_timeout(2000)  # idle time enough to build it, were Python not computing
    expect(standin(page, FAR)).to_have_count(1)
    scores.get_by_role("button", name="Stop").click()
    expect(scores).not_to_have_attribute("data-status", "running", timeout=BOOT_TIMEOUT_MS)
    built(far)
