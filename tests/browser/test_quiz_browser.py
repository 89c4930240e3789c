"""The quizzes of the built lessons as a reader meets them: shuffled choices (the right one is not always
first), answers checked right and wrong, and saved answers, old and new, shown again after a reload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lesson_checks import course_lessons
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
#: every lesson with a page, as the every-lesson tests take them: a new lesson's quizzes are checked too
LESSONS = [lesson.slug for lesson in course_lessons(Path(__file__).resolve().parents[2] / "lessons")]
QUIZ = "quiz-scale"


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context()
    yield ctx
    ctx.close()


def open_lesson(context, site_url, slug):
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{site_url}lessons/{slug}/")
    # quiz.js enables Check once it has brought the quizzes to life (and restored saved answers)
    expect(page.locator("[data-quiz] .quiz-check").last).to_be_enabled()
    page.errors = errors
    return page


def right_places(page):
    """For each quiz of the page, the places (0 = first shown) of its right choices."""
    return page.eval_on_selector_all("[data-quiz]", """quizzes => quizzes.map((q) => {
        const right = q.dataset.correct.split(" ");
        return [...q.querySelectorAll("input")].flatMap((input, i) => right.includes(input.value) ? [i] : []);
    })""")


def choice(page, key):
    return page.locator(f'[data-quiz="{QUIZ}"] input[value="{key}"]')


def keys(page):
    """The quiz's (right keys, every key in the lesson's order) as the build wrote them."""
    quiz = page.locator(f'[data-quiz="{QUIZ}"]')
    return quiz.get_attribute("data-correct").split(), quiz.get_attribute("data-authored").split()


@pytest.mark.parametrize("slug", LESSONS)
def test_the_right_answer_is_not_always_in_one_place(context, site_url, slug):
    page = open_lesson(context, site_url, slug)
    places = right_places(page)
    assert len(places) > 1 and all(places)
    assert len({tuple(p) for p in places}) > 1, places
    assert sum(p == [0] for p in places) <= len(places) / 2, places  # first at most half the time
    assert not page.errors, page.errors
    page.close()


def test_answers_are_checked_right_and_wrong_and_survive_a_reload(context, site_url):
    page = open_lesson(context, site_url, "attention")
    right, authored = keys(page)
    wrong = next(key for key in authored if key not in right)
    quiz = page.locator(f'[data-quiz="{QUIZ}"]')
    choice(page, wrong).check()
    quiz.get_by_role("button", name="Check").click()
    feedback = quiz.locator(".quiz-feedback")
    expect(feedback).to_contain_text("Not quite")
    expect(quiz.locator(".quiz-choice[data-mark=wrong] input")).to_have_attribute("value", wrong)
    choice(page, right[0]).check()
    quiz.get_by_role("button", name="Check").click()
    expect(feedback).to_contain_text("Correct!")
    expect(quiz.locator(".quiz-choice[data-mark=right] input")).to_have_attribute("value", right[0])
    page.reload()
    expect(choice(page, right[0])).to_be_checked()
    expect(quiz.locator(".quiz-feedback")).to_contain_text("Correct!")
    assert not page.errors, page.errors
    page.close()


@pytest.mark.parametrize("index, verdict", [(0, "Correct!"), (1, "Not quite")])
def test_an_answer_saved_before_the_shuffle_means_the_same_choice(context, site_url, index, verdict):
    """The page before the shuffle saved the chosen choices' indices in the lesson's order (the right one, for
    this quiz, 0): such an answer shows that same choice, checked, not another one."""
    page = open_lesson(context, site_url, "attention")
    right, authored = keys(page)
    assert authored[0] in right  # the lesson writes this quiz's right answer first
    version = page.locator(f'[data-quiz="{QUIZ}"]').get_attribute("data-version")
    saved = {"version": version, "chosen": [index], "correct": index == 0}
    page.evaluate("([key, value]) => localStorage.setItem(key, value)",
                  [f"attn-lesson:v1:attention:quiz:{QUIZ}", json.dumps(saved)])
    page.reload()
    quiz = page.locator(f'[data-quiz="{QUIZ}"]')
    expect(choice(page, authored[index])).to_be_checked()
    expect(quiz.locator(".quiz-feedback")).to_contain_text(verdict)
    expect(quiz.locator("input:checked")).to_have_count(1)
    # checking again saves it in the same terms
    quiz.get_by_role("button", name="Check").click()
    stored = page.evaluate("key => JSON.parse(localStorage.getItem(key))", f"attn-lesson:v1:attention:quiz:{QUIZ}")
    assert stored["chosen"] == [index] and stored["version"] == version
    page.evaluate("key => localStorage.removeItem(key)", f"attn-lesson:v1:attention:quiz:{QUIZ}")
    assert not page.errors, page.errors
    page.close()
