"""Big formulas far down Lesson 4 reach the page as their TeX and are typeset as the reader nears them
(sitebuild/pages/math_later.py, static/js/page/maths.js): the page at load is small, a formula is typeset
before the reader reaches it, printing typesets them all at once, and a failed download is asked for again.
That they are all typeset once the reader moves on the page: test_lesson_browser.py."""

from __future__ import annotations

import pytest
from browser import BOOT_TIMEOUT_MS, first_fails
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
LESSON = "lessons/attention/"
# Lighthouse's "avoid an excessive DOM size" counts the body's elements at load: #25's goal (docs/speed.md)
DOM_AT_LOAD = 3_000
FETCHED = "() => performance.getEntriesByType('resource').filter(e => e.name.endsWith('/maths.json')).length"


def test_far_big_formulas_wait_as_tex_come_near_the_reader_and_all_before_printing(browser, site_url):
    # (no service worker: its precache asks for the file as well)
    context = browser.new_context(viewport={"width": 375, "height": 667}, service_workers="block")
    answers = []
    context.route("**/maths.json", first_fails(answers))
    page = context.new_page()
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type in ("warning", "error") else None)
    try:
        page.goto(site_url + LESSON)
        # at load, before the reader moves: the body's elements are under the goal, the far big formulas TeX,
        # none of them before the lesson's second section (the first screens never change as maths arrives)
        assert page.evaluate("document.body.querySelectorAll('*').length") <= DOM_AT_LOAD
        standins = page.locator("code.math-later")
        assert standins.count() > 40 and "\\frac" in " ".join(standins.all_text_contents())
        assert page.evaluate("""() => {
            const second = document.querySelectorAll("article.lesson > h2")[1];
            return Boolean(second.compareDocumentPosition(document.querySelector("code.math-later"))
                           & Node.DOCUMENT_POSITION_FOLLOWING);
        }""")
        # once Python has settled the file is fetched: here it fails, the TeX stays and the console says why
        expect(page.locator(".py-status")).to_have_attribute("data-state", "ready", timeout=BOOT_TIMEOUT_MS)
        page.wait_for_function(f"() => ({FETCHED})() >= 1")
        assert any("stay as TeX for now: its data did not download (HTTP 503)" in w for w in warnings), warnings
        total = standins.count()
        # a formula coming near (a taller window, not a reader's move) asks again and is typeset
        near = page.evaluate("""() => {
            const standin = document.querySelector("code.math-later");
            return standin.getBoundingClientRect().top;
        }""")
        page.set_viewport_size({"width": 375, "height": int(near) + 100})
        expect(standins).not_to_have_count(total)
        assert standins.count() > 0 and len(answers) == 2, answers
        # printing typesets the rest at once, each as the file has it
        maths = page.evaluate("async () => (await fetch('maths.json')).json()")
        typeset = page.evaluate("""(maths) => {
            const standin = document.querySelector("code.math-later");
            const parent = standin.parentNode, at = [...parent.childNodes].indexOf(standin);
            const expected = document.createElement("template");
            expected.innerHTML = maths[standin.dataset.math];
            dispatchEvent(new Event("beforeprint"));
            return { left: document.querySelectorAll("code.math-later").length,
                     same: parent.childNodes[at].isEqualNode(expected.content.firstChild) };
        }""", maths)
        assert typeset == {"left": 0, "same": True}
        assert [w for w in warnings if "stay as TeX" not in w and "status of 503" not in w] == []
    finally:
        context.close()
