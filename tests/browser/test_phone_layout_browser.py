"""The lesson on a phone (390 px wide, an iPhone 13's width): what is wider than the screen scrolls in a region
that says so, and captions wrap at words inside what can be seen (issue 39)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS, open_tables
from pages import LESSON, PHONE

pytestmark = pytest.mark.browser

#: Every table of the page that does not fit the screen, and whether a cue says so: its scrolling region's frame
#: shows the shade on the side with more (scrollcue.js), and its caption ends inside what can be seen.
TABLES = """() => [...document.querySelectorAll("table")].filter((t) => t.getClientRects().length).map((table) => {
  const region = table.closest(".attn-table-wrap, .widget-scroll, .table-scroll");
  const frame = region?.parentElement?.matches(".attn-scroll-frame") ? region.parentElement : null;
  const box = table.getBoundingClientRect(), seen = (region ?? document.documentElement).getBoundingClientRect();
  const caption = table.caption?.getBoundingClientRect();
  return {
    name: region?.getAttribute("aria-label") ?? table.caption?.textContent ?? table.className,
    fits: box.right <= Math.min(innerWidth, seen.right) + 1,
    cue: Boolean(frame) && frame.dataset.more.includes("right") && getComputedStyle(frame, "::after").opacity === "1",
    captionInside: !caption || caption.right <= Math.min(innerWidth, seen.right) + 1,
    pageScrolls: document.documentElement.scrollWidth > innerWidth,
  };
})"""


def test_no_tables_numbers_start_off_screen_without_a_cue_at_390_px(browser, site_url):
    context = browser.new_context(viewport=PHONE, color_scheme="dark", device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(site_url + LESSON)
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        for section in page.locator("[data-widget]").all():  # each widget starts as it comes near the screen
            section.scroll_into_view_if_needed()
            expect(section).to_have_attribute("data-started", "true")
        open_tables(page)
        tables = page.evaluate(TABLES)
        assert len(tables) > 10, tables
        assert not tables[0]["pageScrolls"], "the page itself scrolls sideways"
        wide = [t for t in tables if not t["fits"]]
        assert wide, "no table is wider than a phone: this test would try no cue"
        uncued = [t for t in wide if not t["cue"]]
        assert uncued == [], f"wide tables without a cue: {uncued}"
        assert [t["name"] for t in tables if not t["captionInside"]] == [], "captions cut at the screen's edge"
        explorer = next(t for t in tables if t["name"] == "Entropy of each query row")
        assert explorer["fits"], "the √d_k explorer's entropy table fits a phone"
        # Scrolled to its end, a wide table's cue moves to the other edge.
        region = page.locator(".attn-scroll-frame[data-more='right'] > *").first.element_handle()
        region.evaluate("r => r.scrollTo({ left: r.scrollWidth })")
        page.wait_for_function("r => r.parentElement.dataset.more === 'left'", arg=region)
    finally:
        context.close()
