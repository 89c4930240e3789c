"""axe-core finds no accessibility violations on the lesson page and the index (WCAG 2 A/AA rules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS
from lesson_checks import course_lessons

pytestmark = pytest.mark.browser
LESSONS = course_lessons(Path(__file__).resolve().parents[2] / "lessons")
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """async () => {
  const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] } });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) }));
}"""


def violations(page) -> list[dict]:
    page.evaluate(AXE.read_text(encoding="utf-8"))  # the test injects axe; the page never loads it
    return page.evaluate(RUN_AXE)


def in_both_schemes(page) -> None:
    """Check the page in light, then switched to dark as a reader's system does while it is open (one page:
    the colours are custom properties and the canvases redraw, so nothing else differs)."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        found = violations(page)
        assert found == [], f"{scheme}:\n" + "\n".join(
            f"{v['id']} ({v['impact']}): {v['help']} at {v['targets']}" for v in found)


def first_picture_cell(lesson) -> str:
    """The id of the first cell that draws the reader's arrays (show_attention) and runs anywhere; in a lesson
    that draws none (Lesson 6), its first cell that runs anywhere: a run's output is checked either way."""
    runs = [c for c in lesson.cells if not c.needs_page]
    return next((c.id for c in runs if "show_attention(" in c.code), runs[0].id)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_every_lesson_page_has_no_violations_light_or_dark(browser, site_url, lesson):
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(site_url + f"lessons/{lesson.slug}/")
        expect(page.get_by_role("banner").get_by_role("status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
        expect(page.locator("body")).to_have_attribute("data-cells", "ready")
        # Draw every widget (they start when scrolled to) so their markup is checked too.
        for section in page.locator("[data-widget]").all():
            section.scroll_into_view_if_needed()
        expect(page.locator("[data-widget]:not([data-started])")).to_have_count(0)
        # Render the whole lesson (off-screen parts are skipped otherwise) so every colour is checked.
        page.add_style_tag(content=".lesson > * { content-visibility: visible !important; }")
        shown = page.locator(f'[data-cell="{first_picture_cell(lesson)}"]')
        shown.get_by_role("button", name="Run").click()
        expect(shown).to_have_attribute("data-status", "ok", timeout=60_000)
        in_both_schemes(page)
    finally:
        ctx.close()


def test_editor_stand_ins_have_no_violations_light_or_dark(browser, site_url):
    """Before CodeMirror is built (held back here), every cell and exercise shows its stand-in."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.route("**/vendor/codemirror.js", lambda route: None)  # never arrives: stand-ins only
        page.goto(site_url + "lessons/attention/")
        expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=BOOT_TIMEOUT_MS)
        page.add_style_tag(content=".lesson > * { content-visibility: visible !important; }")
        assert page.locator("pre.code-standin").count() > 20 and page.locator(".cm-editor").count() == 0
        in_both_schemes(page)
    finally:
        ctx.close()


def test_the_index_has_no_violations(browser, site_url):
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto(site_url)
        assert violations(page) == []
    finally:
        ctx.close()


#: Each top-level block whose laid-out contents reach past its own box, with how far. While the browser skips a
#: far block (content-visibility) the box is its placeholder size; measuring a descendant lays the contents out
#: in that box, as axe does: contents past it lie over the next block, which Lighthouse reported as a Run button
#: under a paragraph (colour contrast) and a Check button over the next quiz's radio buttons (target size). The
#: contents of a closed <details> are skipped the same way but never shown, and the lines a code block scrolls
#: to are inside its scrolling box: neither counted.
PAST_THEIR_BOX = """() => [...document.querySelectorAll('.lesson > *')].flatMap((block) => {
  const box = block.getBoundingClientRect();
  const clipped = (e) => {
    for (let up = e.parentElement; up && up !== block; up = up.parentElement) {
      if (getComputedStyle(up).overflowY !== 'visible') return true;
    }
    return false;
  };
  let bottom = box.bottom;
  for (const e of block.querySelectorAll('*')) {
    if (e.closest('details:not([open]) > :not(summary)') || clipped(e)) continue;
    bottom = Math.max(bottom, e.getBoundingClientRect().bottom);
  }
  return bottom > box.bottom + 1 ? [`${block.className || block.tagName} ${block.id}: ${Math.round(bottom - box.bottom)} px`] : [];
})"""

#: The blocks' heights as they stand in (far ones skipped) and as drawn, widgets left out (a widget's reserved
#: height is its own, once started): [[standing in, drawn], ...].
STAND_IN_AND_DRAWN = """async () => {
  const blocks = [...document.querySelectorAll('.lesson > *:not(.widget)')];
  const standing = blocks.map((b) => b.getBoundingClientRect().height);
  for (const b of blocks) b.style.contentVisibility = 'visible';
  await new Promise(requestAnimationFrame);
  return blocks.map((b, i) => [standing[i], b.getBoundingClientRect().height]);
}"""


@pytest.mark.parametrize("width", [360, 1280])
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_far_blocks_stand_in_no_smaller_and_not_much_larger_than_drawn(browser, site_url, lesson, width):
    ctx = browser.new_context(viewport={"width": width, "height": 800})
    try:
        page = ctx.new_page()
        page.goto(site_url + f"lessons/{lesson.slug}/")
        expect(page.locator("body")).to_have_attribute("data-cells", "ready", timeout=BOOT_TIMEOUT_MS)
        assert page.evaluate(PAST_THEIR_BOX) == []
        # Too large is a fault too: a block drawn as the reader arrives shrinks and moves what they jumped to
        # (a link of the contents) up and away. Every block stood in at its phone height before: 1.8x (360 px)
        # and 3.1x (1280 px) the page's drawn height; now about 1.3x at both.
        heights = page.evaluate(STAND_IN_AND_DRAWN)
        standing, drawn = sum(h[0] for h in heights), sum(h[1] for h in heights)
        assert drawn <= standing <= 1.45 * drawn
    finally:
        ctx.close()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.slug)
def test_on_a_360px_phone_no_lesson_scrolls_sideways_and_tables_scroll_in_their_own_region(browser, site_url, lesson):
    ctx = browser.new_context(viewport={"width": 360, "height": 800})
    try:
        page = ctx.new_page()
        page.goto(site_url + f"lessons/{lesson.slug}/")
        page.add_style_tag(content=".lesson > * { content-visibility: visible !important; }")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
        # every display formula fits its box at this width (none needs a sideways scroll to be read)
        wide = page.evaluate("""() => [...document.querySelectorAll('.math-display')]
            .filter((m) => m.scrollWidth > m.clientWidth + 1)
            .map((m) => m.querySelector('annotation')?.textContent)""")
        assert wide == []
        if lesson.slug != "attention":
            return
        # Lesson 4's wide table scrolls inside a region the keyboard can reach, named by its columns
        regions = page.locator(".table-scroll")
        assert regions.count() >= 1
        page.locator("details:has(.table-scroll) > summary").first.click()  # the table's aside opens first
        heads = page.get_by_role("region", name="Table: model, test, best head, score, chance, next best")
        expect(heads).to_have_attribute("tabindex", "0")
        assert heads.evaluate("(r) => r.scrollWidth > r.clientWidth")  # it is wider than the phone
        heads.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("(r) => r.scrollLeft > 0", arg=heads.element_handle())
    finally:
        ctx.close()


#: Every height the sticky header has from when the page is parsed (its first is the first paint's): any change
#: of it moves all of <main>.
HEADER_HEIGHTS = """addEventListener("DOMContentLoaded", () => {
  globalThis.headerHeights = [];
  new ResizeObserver(([entry]) => headerHeights.push(entry.borderBoxSize[0].blockSize))
    .observe(document.querySelector(".site-header"));
});"""


def test_on_a_phone_the_header_is_one_line_and_its_full_status_is_still_read(browser, site_url):
    """375 px: the sticky header (title, status, offline note, restart) took 84 px, then 130 px on three lines.
    It is one line of at most 56 px, of one height from the first paint on while Python loads (its progress bar
    drawn on its edge), once it is ready (the restart button in the room kept for it) and once the offline note
    came; what is hidden to fit is still in the accessibility tree: the full status, and the restart button's
    full name."""
    ctx = browser.new_context(viewport={"width": 375, "height": 800})
    try:
        ctx.add_init_script(HEADER_HEIGHTS)
        page = ctx.new_page()
        page.goto(site_url + "lessons/attention/")
        header = page.locator(".site-header")
        assert header.bounding_box()["height"] <= 56
        status = page.locator(".site-header").get_by_role("status")
        expect(status).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        restart = page.get_by_role("button", name="Restart Python (clear all variables)")
        expect(restart).to_be_visible()
        expect(page.locator("body")).to_have_attribute("data-offline", "ready", timeout=60_000)  # its note is there too
        assert header.bounding_box()["height"] <= 56
        short = header.get_by_role("button", name="Ready (Python's status in full)", exact=True)  # its words first
        expect(short.locator(".py-status-word")).to_have_text("Ready")
        expect(status.locator(".py-status-text")).to_have_text("Python is ready.")  # read, not drawn
        assert status.locator(".py-status-text").bounding_box()["width"] <= 1
        assert restart.bounding_box()["height"] >= 24 and short.bounding_box()["height"] >= 24  # touch targets
        # the details on demand: a tap on the short word shows the whole status and the offline note, over the
        # page (nothing moves); Escape closes them
        details = page.locator("#py-status-details")
        expect(details).to_be_hidden()
        short.click()
        expect(details).to_be_visible()
        expect(details).to_contain_text("Python is ready.")
        expect(details).to_contain_text(page.locator(".offline-note").text_content())
        assert details.bounding_box()["y"] >= header.bounding_box()["height"] - 1  # under the header, not over it
        page.keyboard.press("Escape")
        expect(details).to_be_hidden()
        heights = page.evaluate("headerHeights")
        assert len(set(heights)) == 1 and heights[0] <= 56, heights
    finally:
        ctx.close()
