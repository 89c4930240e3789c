"""axe-core finds no accessibility violations on the lesson page and the index (WCAG 2 A/AA rules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser import BOOT_TIMEOUT_MS

pytestmark = pytest.mark.browser
AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """async () => {
  const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) }));
}"""


def violations(page) -> list[dict]:
    page.evaluate(AXE.read_text(encoding="utf-8"))  # the test injects axe; the page never loads it
    return page.evaluate(RUN_AXE)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_lesson_page_has_no_violations(browser, site_url, scheme):
    ctx = browser.new_context(color_scheme=scheme)
    try:
        page = ctx.new_page()
        page.goto(site_url + "lessons/attention/")
        expect(page.get_by_role("banner").get_by_role("status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
        expect(page.locator("body")).to_have_attribute("data-cells", "ready")
        # Draw every widget (they start when scrolled to) so their markup is checked too.
        for section in page.locator("[data-widget]").all():
            section.scroll_into_view_if_needed()
        expect(page.locator("[data-widget]:not([data-started])")).to_have_count(0)
        # Render the whole lesson (off-screen parts are skipped otherwise) so every colour is checked.
        page.add_style_tag(content=".lesson > * { content-visibility: visible !important; }")
        page.locator('[data-cell="show"]').get_by_role("button", name="Run").click()
        expect(page.locator('[data-cell="show"]')).to_have_attribute("data-status", "ok", timeout=60_000)
        found = violations(page)
        assert found == [], "\n".join(f"{v['id']} ({v['impact']}): {v['help']} at {v['targets']}" for v in found)
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
