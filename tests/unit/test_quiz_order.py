"""sitebuild.pages.quiz_order: quizzes show their choices shuffled, stably, with the right answers spread,
and the build refuses a lesson whose right answers can only sit in one position."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from lesson_source import fences_of
from sitebuild.pages.lessons import LessonError, read_lesson
from sitebuild.pages.practice import parse_quiz, quiz_orders
from sitebuild.pages.quiz_order import all_in_one_position, crowded, option_key, right_positions, shuffled
from sitebuild.pages.render import make_renderer, render_lesson_body

ROOT = Path(__file__).resolve().parents[2]
LESSONS = [ROOT / "lessons" / "attention.md", ROOT / "lessons" / "causal-mask.md"]


def quiz_fence(qid: str, rights: list[bool]) -> str:
    choices = "".join(f"  - text: Choice {i}\n" + ("    correct: true\n" if right else "") + f"    why: Because {i}.\n"
                      for i, right in enumerate(rights))
    return f"```quiz id={qid}\nquestion: Question {qid}?\nchoices:\n{choices}```\n\n"


def render(text: str, path: Path) -> str:
    path.write_text(text, encoding="utf-8")
    return make_renderer().render(text, {"path": path, "slug": "fixture"})


def shown_values(page: str, qid: str) -> list[str]:
    return re.findall(rf'<input type="\w+" name="quiz-{qid}" id="quiz-{qid}-(\w+)" value="\1">', page)


def lesson_positions(path: Path) -> list[frozenset[int]]:
    lesson = read_lesson(path, maths=False)
    orders = quiz_orders(lesson.tokens, lesson.slug, lesson.source_path)
    quizzes = [parse_quiz(*fence) for fence in fences_of(lesson, "quiz")]
    return [right_positions(orders[q["id"]], [c["correct"] for c in q["choices"]]) for q in quizzes]


def test_the_shuffle_is_a_stable_permutation_seeded_by_lesson_and_quiz():
    order = shuffled("attention", "quiz-scale", 4)
    assert sorted(order) == [0, 1, 2, 3]
    assert shuffled("attention", "quiz-scale", 4) == order  # rebuilds, and so reloads, show the same order
    # another quiz, lesson or salt shuffles on its own (over many, not all alike)
    assert len({tuple(shuffled("attention", f"q{i}", 4)) for i in range(20)}) > 5
    assert len({tuple(shuffled(f"lesson{i}", "quiz-scale", 4)) for i in range(20)}) > 5
    assert len({tuple(shuffled("attention", "quiz-scale", 4, salt)) for salt in range(20)}) > 5


def test_option_keys_name_a_choice_not_its_place():
    assert option_key("q", "Its shape is (T, T).") == option_key("q", " Its shape is (T, T).\n")
    assert option_key("q", "Its shape is (T, T).") != option_key("r", "Its shape is (T, T).")
    assert re.fullmatch(r"[0-9a-f]{8}", option_key("q", "0"))


def test_positions_all_in_one_place_and_crowded():
    one, two, three = frozenset({0}), frozenset({1}), frozenset({2})
    assert not all_in_one_position([one])  # one quiz: nothing to give away
    assert all_in_one_position([one, one, one])
    assert not all_in_one_position([one, one, two])
    assert crowded([one, one, two]) and crowded([one, one, one])
    assert not crowded([one, two, three]) and not crowded([one, one, two, three])  # half is not more than half
    assert right_positions([2, 0, 1], [True, False, False]) == frozenset({1})


def test_the_page_shows_the_lesson_order_shuffled_and_names_choices_by_key(tmp_path):
    text = "".join(quiz_fence(f"q{i}", [True, False, False, False]) for i in range(6))
    page = render(text, tmp_path / "lesson.md")
    assert render(text, tmp_path / "lesson.md") == page, "the same lesson renders the same orders"
    for i in range(6):
        keys = [option_key(f"q{i}", f"Choice {j}") for j in range(4)]
        order = [keys.index(value) for value in shown_values(page, f"q{i}")]
        assert sorted(order) == [0, 1, 2, 3]
        tag = re.search(rf'<div class="quiz" data-quiz="q{i}"[^>]*>', page).group(0)
        assert f'data-correct="{keys[0]}"' in tag and f'data-authored="{" ".join(keys)}"' in tag
        assert 'value="0"' not in page
    firsts = [shown_values(page, f"q{i}")[0] for i in range(6)]
    assert sum(first == option_key(f"q{i}", "Choice 0") for i, first in enumerate(firsts)) <= 3, \
        "the right answer, written first every time, is first in at most half of the quizzes"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_both_lessons_spread_their_right_answers(path):
    positions = lesson_positions(path)
    assert len(positions) > 1
    assert len(set(positions)) > 1, "the right answers sit in more than one position"
    assert not crowded(positions), Counter(positions)
    assert Counter(positions)[frozenset({0})] < len(positions) / 2 + 1


def test_a_lesson_whose_right_answers_can_only_sit_in_one_place_is_refused(tmp_path):
    # every choice right in both quizzes: whatever the order, positions 1 and 2 hold the right answers
    text = "Intro.\n\n" + quiz_fence("first", [True, True]) + quiz_fence("second", [True, True])
    with pytest.raises(LessonError) as info:
        render(text, tmp_path / "lesson.md")
    err = info.value
    assert err.line == text.splitlines().index("```quiz id=second") + 1
    assert re.fullmatch(r".*lesson\.md:\d+: quiz 'second': in every order the build tried, the right answers of all 2 "
                        r"quizzes sit in position 1 and 2, so the position gives them away; .*", str(err)), str(err)


def test_when_crowding_cannot_be_avoided_the_answers_still_differ(tmp_path):
    # two right of three in each quiz: some position is always right in both, but not every position alike
    text = quiz_fence("first", [True, True, False]) + quiz_fence("second", [True, True, False])
    page = render(text, tmp_path / "lesson.md")
    rights = [{shown for shown, key in enumerate(shown_values(page, qid))
               if key in {option_key(qid, "Choice 0"), option_key(qid, "Choice 1")}} for qid in ("first", "second")]
    assert rights[0] != rights[1]


def test_one_quiz_alone_is_not_refused(tmp_path):
    assert 'data-quiz="only"' in render(quiz_fence("only", [True, True]), tmp_path / "lesson.md")


def test_the_built_lesson_uses_the_lesson_orders():
    lesson = read_lesson(LESSONS[1], maths=False)
    page = render_lesson_body(lesson)
    orders = quiz_orders(lesson.tokens, lesson.slug, lesson.source_path)
    for content, options, env in fences_of(lesson, "quiz"):
        quiz = parse_quiz(content, options, env)
        keys = [option_key(quiz["id"], c["text"]) for c in quiz["choices"]]
        assert shown_values(page, quiz["id"]) == [keys[i] for i in orders[quiz["id"]]]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_right_answer_is_not_given_away_by_its_length(path):
    lesson = read_lesson(path, maths=False)
    longest = 0
    for content, options, env in fences_of(lesson, "quiz"):
        quiz = parse_quiz(content, options, env)
        right = max(len(c["text"].strip()) for c in quiz["choices"] if c["correct"])
        wrong = max(len(c["text"].strip()) for c in quiz["choices"] if not c["correct"])
        assert right <= 1.25 * wrong, f"{quiz['id']}: the right answer is much the longest ({right} vs {wrong})"
        longest += right > wrong
    assert longest < len(fences_of(lesson, "quiz")) / 2
