"""Quizzes and exercises as a reader uses them: real Chromium, real Pyodide, keyboard and clicks.

They run on a fixture lesson (tests/fixtures/practice/practice.md followed by the lesson's
exercise fences, read from lessons/attention.md) built into a temporary site.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from lesson_source import exercise_fences
from browser import BOOT_TIMEOUT_MS, CODE, RUN_TIMEOUT_MS, paste_code, protocol_errors
from sitebuild.pages.practice import parse_exercise
from practice_site import LESSON, exercise, solution_of

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context()
    yield ctx
    ctx.close()


def open_page(context, url, wait_python=True):
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + LESSON)
    if wait_python:
        expect(page.locator(".py-status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    page.errors = errors
    return page


@pytest.fixture(scope="module")
def page(context, practice_url):
    """One loaded page shared by the tests of this module (Python boots once)."""
    pg = open_page(context, practice_url)
    yield pg
    assert not pg.errors, f"uncaught errors in the page: {pg.errors}"
    assert protocol_errors(pg) == []


def quiz(page, quiz_id):
    return page.locator(f'[data-quiz="{quiz_id}"]')


def set_code(ex, code):
    """Replace an exercise's code the way a reader pastes it in."""
    paste_code(ex, code)


def check(ex, timeout=RUN_TIMEOUT_MS):
    """Press "Check my answer" and wait for the verdict."""
    ex.get_by_role("button", name="Check my answer").click()
    expect(ex).to_have_attribute("data-status", re.compile("^(right|wrong)$"), timeout=timeout)
    return ex.locator(".exercise-feedback")


def starter_of(ident: str) -> str:
    """An exercise's starter code, from its fence in the lesson."""
    [body] = [body for name, body, _ in exercise_fences() if name == ident]
    return parse_exercise(body, {"id": ident}, {"path": "?", "line": 1})["starter"]


# ---------------------------------------------------------------------------- quiz

RIGHT = "It keeps the scores’ variance near 1, so the softmax does not saturate."
WRONG = "It makes the weights sum to 1."


def test_quiz_is_a_fieldset_answered_with_the_keyboard(page):
    form = quiz(page, "scale")
    group = page.get_by_role("group", name=re.compile("Why are attention scores divided"))
    expect(group).to_be_visible()
    radios = group.get_by_role("radio")
    expect(radios).to_have_count(3)
    # the build shuffles the choices: the arrows' way from one to the other depends on where each is shown
    labels = form.locator(".quiz-choice label").all_inner_texts()
    steps = (labels.index(RIGHT) - labels.index(WRONG)) % 3  # ArrowDown steps, wrapping as radio groups do
    # Tab into the radio group, Space picks an answer, Tab to Check, Enter submits.
    radios.nth(labels.index(WRONG)).focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect(form.get_by_role("button", name="Check")).to_be_focused()
    page.keyboard.press("Enter")
    feedback = form.locator(".quiz-feedback")
    expect(feedback).to_contain_text("Not quite")
    expect(feedback).to_contain_text("The softmax already does that")
    expect(feedback).to_have_attribute("aria-live", "polite")
    # Back to the group, arrows to the right answer, then Enter on the answer itself checks (as a form's would).
    page.keyboard.press("Shift+Tab")
    for _ in range(steps):
        page.keyboard.press("ArrowDown")
    expect(group.get_by_role("radio", name=RIGHT)).to_be_focused()
    expect(group.get_by_role("radio", name=RIGHT)).to_be_checked()
    page.keyboard.press("Enter")
    expect(feedback).to_contain_text("Correct!")
    expect(feedback).to_contain_text("dividing by √d_k brings it back to 1")
    expect(feedback).to_contain_text("one-hot weights")  # the explanation shown once right


def test_multiple_answer_quiz_uses_checkboxes_and_says_what_is_missing(page):
    form = quiz(page, "shapes")
    expect(form.get_by_role("checkbox")).to_have_count(3)
    form.get_by_role("checkbox", name="Its shape is (T, T).").check()
    form.get_by_role("button", name="Check").click()
    expect(form.locator(".quiz-feedback")).to_contain_text("one more answer is correct too")
    form.get_by_role("checkbox", name="Row i holds query i against every key.").check()
    form.get_by_role("button", name="Check").click()
    expect(form.locator(".quiz-feedback")).to_contain_text("Correct!")


def test_quiz_answers_and_score_survive_a_reload(context, practice_url):
    pg = open_page(context, practice_url, wait_python=False)
    form = quiz(pg, "scale")
    form.get_by_role("radio", name=RIGHT).check()
    form.get_by_role("button", name="Check").click()
    expect(pg.locator(".quiz-score")).to_contain_text(re.compile(r"[12] of 2 answered correctly"))
    pg.reload()
    form = quiz(pg, "scale")
    expect(form.get_by_role("radio", name=RIGHT)).to_be_checked()
    expect(form.locator(".quiz-feedback")).to_contain_text("Correct!")
    pg.close()


def test_a_quiz_answer_checked_in_one_tab_shows_in_the_other(context, practice_url):
    first = open_page(context, practice_url, wait_python=False)
    second = open_page(context, practice_url, wait_python=False)
    try:
        for choice, verdict in ((WRONG, "Not quite"), (RIGHT, "Correct!")):
            form = quiz(first, "scale")
            form.get_by_role("radio", name=choice).check()
            form.get_by_role("button", name="Check").click()
            other = quiz(second, "scale")
            expect(other.get_by_role("radio", name=choice)).to_be_checked()
            expect(other.locator(".quiz-feedback")).to_contain_text(verdict)
        # both tabs count the same score
        expect(second.locator(".quiz-score")).to_have_text(first.locator(".quiz-score").inner_text())
        assert not first.errors and not second.errors, first.errors + second.errors
    finally:
        first.close()
        second.close()


# ---------------------------------------------------------------------------- exercises

def test_wrong_answer_gets_the_specific_message_and_unlocks_the_solution(page):
    ex = exercise(page, "Split the fused projection")
    expect(ex.get_by_role("heading", name=re.compile("Split the fused projection"))).to_be_visible()
    show = ex.get_by_role("button", name="Show solution")
    expect(show).to_be_disabled()
    wrong = ("import numpy as np\n"
             "def split_qkv(qkv, n_head):\n"
             "    B, T, C3 = qkv.shape\n"
             "    q, k, v = np.split(qkv, 3, axis=-1)\n"
             "    return q, k, v\n")
    set_code(ex, wrong)
    feedback = check(ex)
    expect(feedback).to_contain_text("✗")
    expect(feedback).to_contain_text("q has shape (2, 8, 768) where (2, 12, 8, 64) was expected")
    expect(show).to_be_enabled()
    show.click()
    expect(ex.locator(".exercise-solution")).to_be_visible()
    expect(ex.locator(".exercise-solution")).to_contain_text("transpose(0, 2, 1, 3)")
    expect(ex.get_by_role("button", name="Hide solution")).to_have_attribute("aria-expanded", "true")


def test_a_named_mistake_reaches_the_page_word_for_word(page):
    ex = exercise(page, "Scaled attention")
    set_code(ex, "import numpy as np\n"
                 "def attention(Q, K, V):\n"
                 "    s = Q @ K.T / np.sqrt(K.shape[-1])\n"
                 "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
                 "    w = e / e.sum(axis=-1, keepdims=True)\n"
                 "    return w, w @ V\n")
    feedback = check(ex)
    expect(feedback.locator(".check-fail")).to_have_text(
        "✗Failed: attention(Q, K, V) returned (weights, out): the first array has the weights' shape (5, 5) and the "
        "second out's (5, 3). Return them the other way round: return out, weights")


def test_hints_are_revealed_one_at_a_time(page):
    ex = exercise(page, "The parameter budget")
    hints = ex.get_by_role("list", name="Hints")
    expect(hints).to_be_hidden()
    ex.get_by_role("button", name="Hint").click()
    expect(hints).to_be_visible()
    expect(hints.get_by_role("listitem")).to_have_count(1)
    expect(hints).to_contain_text("a * b")
    ex.get_by_role("button", name="Hint").click()
    expect(hints.get_by_role("listitem")).to_have_count(2)


def test_progress_made_in_one_tab_survives_an_edit_in_another(browser, practice_url):
    ctx = browser.new_context()  # storage of its own: the module's page has progress of its own
    try:
        first, second = open_page(ctx, practice_url, wait_python=False), open_page(ctx, practice_url, wait_python=False)
        exercise(first, "The parameter budget").get_by_role("button", name="Hint").click()
        theirs = exercise(second, "The parameter budget")
        expect(theirs.get_by_role("list", name="Hints").get_by_role("listitem")).to_have_count(1)
        set_code(theirs, "# edited in the second tab\n")  # saves this tab's state: the hint must stay in it
        first.reload()
        mine = exercise(first, "The parameter budget")
        expect(mine.get_by_role("list", name="Hints").get_by_role("listitem")).to_have_count(1)
        expect(mine.locator(CODE).first).to_contain_text("edited in the second tab")
        assert not first.errors and not second.errors, first.errors + second.errors
    finally:
        ctx.close()


def test_blanks_are_reported_before_anything_runs(page):
    ex = exercise(page, "The parameter budget")
    set_code(ex, starter_of("attention-params"))
    expect(ex.get_by_role("button", name="Reset")).to_be_hidden()  # the starter code is back
    feedback = check(ex)
    expect(feedback).to_contain_text("Fill in the blanks first")


def test_correct_answer_passes_every_check_and_solved_survives_a_reload(context, practice_url):
    pg = open_page(context, practice_url)
    ex = exercise(pg, "Scaled attention")
    ex.get_by_role("button", name="Check my answer").click()  # blanks: an attempt all the same
    expect(ex).to_have_attribute("data-status", "wrong", timeout=RUN_TIMEOUT_MS)
    ex.get_by_role("button", name="Show solution").click()
    ex.get_by_role("button", name="Use this code").click()
    feedback = check(ex)
    expect(feedback).to_contain_text("Solved! All 5 checks pass.")
    expect(feedback.locator(".check-ok")).to_have_count(5)
    expect(feedback.locator(".check-fail")).to_have_count(0)
    expect(ex.locator(".exercise-badge")).to_be_visible()
    pg.reload()
    ex = exercise(pg, "Scaled attention")
    expect(ex).to_have_attribute("data-solved", "true")
    expect(ex.locator(".exercise-badge")).to_be_visible()
    expect(ex.get_by_role("button", name="Show solution")).to_be_enabled()
    # the other exercise's code is its own (once): read after its editor has its text (a stand-in being swapped
    # for CodeMirror on a loaded machine read as ""), as text content (not layout-dependent inner text)
    other = pg.locator('[data-exercise="stable-attention"]').locator(CODE)
    expect(other).to_contain_text("z.max(axis=-1, keepdims=True)")
    assert other.text_content().count("z.max(axis=-1, keepdims=True)") == 1
    pg.close()


def test_endless_loop_times_out_and_the_page_keeps_working(page):
    ex = exercise(page, "The parameter budget")
    set_code(ex, "def attention_params(n_embd, n_head):\n    while True:\n        pass\n")
    feedback = check(ex, timeout=20_000)
    # Stopped by Python itself (the trace deadline), not by the page's fallback.
    expect(feedback).to_contain_text("Your function ran longer than 5 s and was stopped — an endless loop?")
    expect(ex.locator(".exercise-summary")).to_have_text("Not checked: your code did not finish in time.")
    # Python still works: the same exercise checks a right answer, and a cell runs.
    set_code(ex, solution_of(ex))
    expect(check(ex)).to_contain_text("Solved!")
    cell = page.locator('[data-cell="hello"]')
    cell.get_by_role("button", name="Run").click()
    expect(cell).to_have_attribute("data-status", "ok", timeout=RUN_TIMEOUT_MS)  # this run's end, not an earlier one's output
    expect(cell.locator(".cell-output")).to_contain_text("hello from a cell")


def test_readers_code_does_not_leak_into_the_notebook_namespace(page):
    ex = exercise(page, "The parameter budget")
    set_code(ex, "leaked_name = 42\n" + solution_of(ex))
    check(ex)
    cell = page.locator('[data-cell="hello"]')
    paste_code(cell, "print('leaked' if 'leaked_name' in globals() else 'separate')")
    cell.get_by_role("button", name="Run").click()
    expect(cell).to_have_attribute("data-status", "ok", timeout=RUN_TIMEOUT_MS)
    expect(cell.locator(".cell-output")).to_contain_text("separate")


def test_code_stuck_outside_python_is_stopped_by_the_page(context, practice_url):
    """A sleep (or a huge C call) never reaches the trace deadline: the page stops Python itself."""
    pg = open_page(context, practice_url)
    ex = exercise(pg, "The parameter budget")
    set_code(ex, "import time\ndef attention_params(n_embd, n_head):\n    time.sleep(60)\n")
    feedback = check(ex, timeout=40_000)  # 5 s + 3 s grace, then an interrupt or a restart
    expect(feedback).to_contain_text("Your code ran longer than 5 s and was stopped — an endless loop?")
    expect(pg.locator(".py-status")).to_contain_text("Python is ready", timeout=BOOT_TIMEOUT_MS)
    set_code(ex, solution_of(ex))
    expect(check(ex)).to_contain_text("Solved!")
    assert not pg.errors, pg.errors
    pg.close()
