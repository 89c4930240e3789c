"""The step-through in a real page (tests/fixtures/widgets/steps.md), drawn from the build's payload before
Python runs: it opens at step 0, a score step writes its score as the q·k of one query and one key (the rows
of Q and K the payload carries), and on a phone its controls and the numbers they change stay on screen
while the pictures scroll by."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import build_lesson_site
from lessonpy.course.attention import widget_payloads as widgets

pytestmark = pytest.mark.browser
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "widgets" / "steps.md"
LESSON = "lessons/steps/"
PHONE = {"width": 390, "height": 844}  # an iPhone 13's viewport


@pytest.fixture(scope="module")
def steps_url(tmp_path_factory):
    from sitebuild.server import serve_in_thread

    site = build_lesson_site(tmp_path_factory.mktemp("steps"), FIXTURE)
    server, url = serve_in_thread(site, port=0, isolate=True, quiet=True)
    yield url + LESSON
    server.shutdown()


@pytest.fixture(scope="module")
def expected():
    """What the build drew: the fixture's seeded example, computed here in CPython."""
    p = widgets.prerender_view({"T": 5, "seed": 1})
    return {k: np.asarray(v, dtype=np.float64) for k, v in p["arrays"].items()}


def opened(browser, url, **context_options):
    context = browser.new_context(**context_options)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(url)
    steps = page.locator("#widget-steps")
    steps.scroll_into_view_if_needed()  # a widget starts when it comes near the screen
    return context, page, steps


def shown(v: float) -> str:
    """A number as the panel writes it: two decimals, a real minus sign."""
    return f"{v:.2f}".replace("-", "−")


def test_the_step_through_opens_at_step_0_and_a_score_step_is_one_q_dot_k(browser, steps_url, expected):
    context, page, steps = opened(browser, steps_url, viewport={"width": 1000, "height": 900})
    try:
        status, now = steps.locator(".attn-step-status"), steps.locator(".attn-now")
        expect(status).to_contain_text("Step 0 of 15: nothing computed yet")
        expect(steps.locator(".attn-view")).to_have_attribute("data-reveal", "0,0,0")
        expect(steps.get_by_role("button", name="Back: one step back")).to_be_disabled()
        expect(now).to_contain_text("Q (5 × 8) and K (5 × 8)")  # Q and K, named before any score

        steps.get_by_role("button", name="Next: one step forward").click()
        expect(status).to_contain_text("Step 1 of 15")
        expect(now).to_have_attribute("data-kind", "score")
        Q, K, scores = expected["Q"], expected["K"], expected["scores"]
        key = int(scores[0].argmax())  # the row's strongest key comes first
        expect(now).to_have_attribute("data-key", str(key))

        def check(i, j):
            qk, score = float(now.get_attribute("data-qk")), float(now.get_attribute("data-score"))
            assert qk == pytest.approx(Q[i] @ K[j], rel=1e-5, abs=1e-6)
            assert score == pytest.approx(scores[i, j], rel=1e-5, abs=1e-6)
            assert qk / math.sqrt(8) == pytest.approx(score, rel=1e-5, abs=1e-6)  # the score in the cell is q·k / √d_k
            expect(now).to_contain_text(f"q·k = {shown(qk)}")
            expect(now).to_contain_text(f"÷ √8 = {shown(score)}")
            rows = now.locator("tr").evaluate_all("trs => trs.slice(1).map(tr => [...tr.cells].slice(1).map(c => c.textContent))")
            assert rows[0] == [shown(v) for v in Q[i]] and rows[1] == [shown(v) for v in K[j]]  # its rows of Q and K

        check(0, key)
        other = (key + 1) % 5
        now.get_by_label("Key").select_option(str(other))  # the reader picks another key
        expect(now).to_have_attribute("data-key", str(other))
        check(0, other)
        steps.get_by_role("button", name="Next: one step forward").click()
        expect(now).to_have_attribute("data-query", "1")
        check(1, other)  # the picked key stays picked
    finally:
        context.close()
    assert not page.errors, page.errors


def test_on_a_phone_the_controls_and_what_they_change_stay_on_screen(browser, steps_url):
    context, page, steps = opened(browser, steps_url, viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        status, now = steps.locator(".attn-step-status"), steps.locator(".attn-now")
        next_button = steps.get_by_role("button", name="Next: one step forward")
        expect(status).to_contain_text("Step 0 of 15")

        def on_screen(locator):
            box = locator.bounding_box()
            header = page.locator(".site-header").bounding_box()
            return box["y"] >= header["y"] + header["height"] - 1 and box["y"] + box["height"] <= PHONE["height"]

        # the scores, then the softmax with the weights scrolled to, then the output with the output scrolled to
        for step, kind, picture in [(1, "score", "scores"), (6, "softmax", "weights"), (11, "output", "out")]:
            steps.locator(f".attn-figure-{picture}").scroll_into_view_if_needed()  # where a reader would look
            while f"Step {step} of" not in status.inner_text():
                next_button.click()
            expect(now).to_have_attribute("data-kind", kind)
            for what in (next_button, status, now):
                assert on_screen(what), (step, what)
    finally:
        context.close()
    assert not page.errors, page.errors
