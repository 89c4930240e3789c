"""Big formulas far down Lesson 4 reach the page as their TeX and are typeset as the reader nears them
(sitebuild/pages/math_later.py, static/js/page/maths.js): the page at load is small, what a reader sees is
MathML, printing typesets them all at once, and a failed download of their file is asked for again."""

from __future__ import annotations

import pytest
from browser import BOOT_TIMEOUT_MS, first_fails
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
LESSON = "lessons/attention/"
# Lighthouse's "avoid an excessive DOM size" counts the body's elements at load: docs/speed.md's goal
DOM_AT_LOAD = 3_000


def far_maths(page) -> dict:
    return page.evaluate("async () => (await fetch('maths.json')).json()")


def test_the_page_at_load_holds_tex_for_far_big_formulas_and_printing_typesets_them_all(browser, site_url):
    context = browser.new_context(viewport={"width": 375, "height": 667})
    page = context.new_page()
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type in ("warning", "error") else None)
    try:
        page.goto(site_url + LESSON)
        # at load, before the reader moves: the body's elements are under the goal, the far big formulas TeX
        assert page.evaluate("document.body.querySelectorAll('*').length") <= DOM_AT_LOAD
        maths = far_maths(page)
        standins = page.locator("code.math-later")
        keys = standins.evaluate_all("s => s.map(e => e.dataset.math)")
        assert set(keys) == set(maths)  # a formula written twice is one entry
        assert "\\frac" in " ".join(standins.all_text_contents())
        # none before the lesson's second section: the first screens never change as maths arrives
        assert page.evaluate("""() => {
            const second = document.querySelectorAll("article.lesson > h2")[1];
            const first = document.querySelector("code.math-later");
            return Boolean(second.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING);
        }""")
        # once Python has settled the file has come, so printing typesets every formula at once
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        page.wait_for_function("() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/maths.json'))")
        before = page.evaluate("document.querySelectorAll('math').length")
        typeset = page.evaluate("""(maths) => {
            const standin = document.querySelector("code.math-later");
            const parent = standin.parentNode, at = [...parent.childNodes].indexOf(standin);
            const key = standin.dataset.math;
            dispatchEvent(new Event("beforeprint"));
            const formula = parent.childNodes[at];
            const expected = document.createElement("template");
            expected.innerHTML = maths[key];
            return { left: document.querySelectorAll("code.math-later").length, tag: formula.localName,
                     same: formula.isEqualNode(expected.content.firstChild) };
        }""", maths)
        assert typeset == {"left": 0, "tag": "math", "same": True}
        assert page.evaluate("document.querySelectorAll('math').length") == before + len(keys)
        assert warnings == []
    finally:
        context.close()


def test_a_failed_download_leaves_the_tex_and_the_reader_moving_gets_the_formulas(browser, site_url):
    # (no service worker: its precache asks for the file as well)
    context = browser.new_context(viewport={"width": 1000, "height": 800}, service_workers="block")
    answers = []
    context.route("**/maths.json", first_fails(answers))
    page = context.new_page()
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    try:
        page.goto(site_url + LESSON)
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        page.wait_for_function("() => performance.getEntriesByType('resource').some(e => e.name.endsWith('/maths.json'))")
        expect(page.locator("code.math-later").first).to_be_attached()
        assert any("stay as TeX for now: its data did not download (HTTP 503)" in w for w in warnings), warnings
        # the reader scrolls to a far formula: it is typeset before they reach it, and the rest in idle time
        far = page.locator("code.math-later").nth(30)
        holder = far.evaluate_handle("e => e.parentElement")
        page.mouse.wheel(0, 400)
        far.evaluate("e => e.scrollIntoView({block: 'center'})")
        expect(page.locator("code.math-later")).to_have_count(0)
        assert holder.evaluate("h => h.querySelector('math') !== null")
        assert len(answers) == 2, answers  # the failed one, and one for every formula since
    finally:
        context.close()
