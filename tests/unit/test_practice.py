"""sitebuild.pages.practice: ```quiz and ```exercise fences, their HTML, and file:line errors for authors."""

from __future__ import annotations

import html
import json
import re
import textwrap
from pathlib import Path

import pytest
from lesson_source import exercise_fences, exercise_fences_text

from sitebuild.pages.lessons import LessonError
from sitebuild.pages.practice import parse_exercise
from sitebuild.pages.quiz_order import option_key
from sitebuild.pages.render import FENCE_RENDERERS, make_renderer

QUIZ = """\
question: Why divide by **√d_k**?
choices:
  - text: To keep the scores' variance near 1
    correct: true
    why: The sum of d_k unit-variance products has variance d_k.
  - text: To make the softmax cheaper
    why: It costs the *same*.
explain: Otherwise the softmax saturates.
"""

EXERCISE = """\
title: The parameter budget
prompt: Write `attention_params`.
starter: |
  def attention_params(n_embd, n_head):
      return ____
hints:
  - Count **weights**.
  - Four matrices.
solution: |
  def attention_params(n_embd, n_head):
      return 4 * n_embd * n_embd  # </script> stays inside the data block
"""


def render(text: str, path: Path) -> str:
    """Render Markdown *text* as the build does, with *path* named in errors."""
    path.write_text(text, encoding="utf-8")
    return make_renderer().render(text, {"path": path})


def fence(kind: str, body: str, info: str = "") -> str:
    return f"```{kind}{info}\n{body}```\n"


def error_of(text: str, path: Path) -> LessonError:
    with pytest.raises(LessonError) as info:
        render(text, path)
    return info.value


def quiz_attributes(page: str) -> dict:
    """The data-* attributes of the page's (first) quiz, by name."""
    tag = re.search(r'<div class="quiz"[^>]*>', page).group(0)
    return dict(re.findall(r' data-([a-z]+)="([^"]*)"', tag))


def data_block(page: str, cls: str) -> dict:
    match = re.search(rf'<script type="application/json" class="{cls}">(.*?)</script>', page, re.S)
    assert match, f"no {cls} block"
    return json.loads(match.group(1))


@pytest.fixture
def md_path(tmp_path):
    return tmp_path / "lesson.md"


# ---------------------------------------------------------------------------- quiz HTML

def test_fences_are_registered():
    make_renderer()
    assert {"quiz", "exercise"} <= set(FENCE_RENDERERS)


def test_single_answer_quiz_is_a_fieldset_of_radios(md_path):
    page = render("Intro\n\n" + fence("quiz", QUIZ, " id=scale"), md_path)
    assert "<form" not in page  # see render_quiz
    assert "<fieldset>" in page and '<legend class="quiz-question">Why divide by <strong>√d_k</strong>?</legend>' in page
    assert page.count('type="radio" name="quiz-scale"') == 2 and 'type="checkbox"' not in page
    right = option_key("scale", "To keep the scores' variance near 1")
    assert f'<label for="quiz-scale-{right}">To keep the scores’ variance near 1</label>' in page
    assert '<template class="quiz-why">It costs the <em>same</em>.</template>' in page
    assert '<template class="quiz-explain"><p>Otherwise the softmax saturates.</p>' in page
    assert 'aria-live="polite"' in page and '<button type="button" class="quiz-check" disabled>Check</button>' in page
    wrong = option_key("scale", "To make the softmax cheaper")
    assert re.search(rf'<div class="quiz" data-quiz="scale" id="quiz-scale" data-correct="{right}" '
                     rf'data-authored="{right} {wrong}" data-version="[0-9a-f]{{10}}">',
                     page) and "<script" not in page  # what quiz.js reads (its attributes)


def test_several_correct_choices_make_checkboxes(md_path):
    body = QUIZ.replace("    why: It costs", "    correct: true\n    why: It costs")
    page = render(fence("quiz", body, " id=multi"), md_path)
    assert page.count('type="checkbox"') == 2 and "Choose every answer that applies." in page
    assert quiz_attributes(page)["correct"] == quiz_attributes(page)["authored"]  # both keys, in the lesson's order


def test_quiz_version_changes_with_its_content(md_path):
    one = quiz_attributes(render(fence("quiz", QUIZ, " id=q"), md_path))["version"]
    two = quiz_attributes(render(fence("quiz", QUIZ.replace("cheaper", "faster"), " id=q"), md_path))["version"]
    assert one != two


# ---------------------------------------------------------------------------- quiz errors

# (body, expected message, line of the error counted from the ```quiz line, 0 = that line)
QUIZ_ERRORS = {
    "missing question": (QUIZ.replace("question: Why divide by **√d_k**?\n", ""), "'question' is missing", 0),
    "no correct choice": (QUIZ.replace("    correct: true\n", ""), "no choice is marked 'correct: true'", 2),
    "unknown key": (QUIZ.replace("explain:", "explian:"), "unknown key 'explian' (did you mean 'explain'?)", 8),
    "unknown choice key": (QUIZ.replace("    why: It costs", "    wyh: It costs"), "choice 2: unknown key 'wyh'", 7),
    "missing why": (QUIZ.replace("    why: It costs the *same*.\n", ""), "choice 2: 'why' is missing", 6),
    "correct not a bool": (QUIZ.replace("correct: true", "correct: yes please"), "'correct' must be true or false", 4),
    "one choice": (QUIZ.split("  - text: To make")[0], "at least two choices", 2),
    "duplicate key": (QUIZ + "question: again?\n", "key 'question' appears twice (first on line 6)", 9),
    "bad yaml": (QUIZ.replace("choices:\n", "choices: [\n"), "not valid YAML", None),
    "not a mapping": ("- just\n- a list\n", "must be YAML 'key: value' lines", 0),
    "empty question": (QUIZ.replace("Why divide by **√d_k**?", "''"), "'question' must be non-empty text", 1),
    "repeated choice": (QUIZ.replace("To make the softmax cheaper", "To keep the scores' variance near 1"),
                        "choice 2 repeats choice 1", 6),
}


@pytest.mark.parametrize("name", sorted(QUIZ_ERRORS))
def test_quiz_errors_name_file_and_line(md_path, name):
    body, message, offset = QUIZ_ERRORS[name]
    err = error_of("# Title\n\nText.\n\n" + fence("quiz", body, " id=scale"), md_path)  # the fence is on line 5
    assert message in err.message, err.message
    assert err.path == str(md_path)
    if offset is not None:
        assert err.line == 5 + offset, (err.line, err.message)
    assert str(err).startswith(f"{md_path}:{err.line}: ")


def test_quiz_needs_an_id_and_a_valid_one(md_path):
    assert "a quiz needs an id=NAME" in error_of(fence("quiz", QUIZ), md_path).message
    assert "must start with a letter" in error_of(fence("quiz", QUIZ, " id=1st"), md_path).message
    assert "unknown option 'multiple'" in error_of(fence("quiz", QUIZ, " id=a multiple=yes"), md_path).message


def test_duplicate_quiz_ids_point_at_the_first_one(md_path):
    text = fence("quiz", QUIZ, " id=same") + "\nBetween.\n\n" + fence("quiz", QUIZ, " id=same")
    err = error_of(text, md_path)
    assert err.message == "quiz id 'same' is already used by the quiz on line 1"
    assert err.line == text.splitlines().index("```quiz id=same", 1) + 1


def test_a_quiz_and_an_exercise_may_share_an_id(md_path):
    page = render(fence("quiz", QUIZ, " id=attention-params") + "\n"
                  + fence("exercise", EXERCISE, " id=attention-params"), md_path)
    assert 'id="quiz-attention-params"' in page and 'id="exercise-attention-params"' in page


# ---------------------------------------------------------------------------- exercise

def test_exercise_renders_static_code_buttons_and_a_data_block(md_path):
    page = render(fence("exercise", EXERCISE, " id=attention-params"), md_path)
    assert '<section class="exercise" data-exercise="attention-params" id="exercise-attention-params"' in page
    assert 'aria-labelledby="exercise-attention-params-title"' in page
    assert '<h3 class="exercise-title" id="exercise-attention-params-title">' in page
    assert "The parameter budget" in page and "<code>attention_params</code>" in page
    assert '<div class="exercise-editor"><pre class="highlight code-standin"' in page  # the editor's stand-in
    for label in ("Check my answer", "Hint", "Show solution", "Reset", "Use this code"):
        assert f">{label}</button>" in page
    assert page.count('<li class="exercise-hint" hidden>') == 2 and "<strong>weights</strong>" in page
    data = data_block(page, "exercise-data")
    assert data == {"id": "attention-params", "title": "The parameter budget", "check": "attention_params", "timeout": 5}
    # the starter and the solution are written once, as the page shows them, and exercises.js reads them there:
    # each element's text is the fence's code exactly
    ex = parse_exercise(EXERCISE, {"id": "attention-params"}, {"path": md_path, "line": 1})
    [standin] = re.findall(r'<div class="exercise-editor"><pre[^>]*><code>(.*?)</code></pre>', page, re.S)
    [solution] = re.findall(r'<div class="exercise-solution"[^>]*>.*?<pre[^>]*><code>(.*?)</code></pre>', page, re.S)
    assert html.unescape(standin) == ex["starter"] and "____" in ex["starter"]
    assert html.unescape(solution) == ex["solution"] and "</script> stays inside" in ex["solution"]
    assert page.count("</script>") == 1


def test_exercise_without_hints_has_no_hint_button(md_path):
    body = re.sub(r"hints:\n(  - .*\n)+", "", EXERCISE)
    page = render(fence("exercise", body, " id=attention-params"), md_path)
    assert "exercise-hint-button" not in page


def test_exercise_check_and_timeout_can_be_given(md_path):
    page = render(fence("exercise", EXERCISE + "check: split_qkv\ntimeout: 2.5\n", " id=mine"), md_path)
    data = data_block(page, "exercise-data")
    assert (data["check"], data["timeout"]) == ("split_qkv", 2.5)


EXERCISE_ERRORS = {
    "missing solution": (EXERCISE.split("solution:")[0], "'solution' is missing", 0),
    "unknown check": (EXERCISE + "check: split_qvk\n", "no check function 'split_qvk' in py/lessonpy/course/checks.py "
                                                       "(did you mean 'split_qkv'?)", 12),
    "bad timeout": (EXERCISE + "timeout: 0\n", "'timeout' must be a number of seconds", 12),
    "timeout too long": (EXERCISE + "timeout: 600\n", "'timeout' must be a number of seconds", 12),
    "solution does not parse": (EXERCISE.replace("return 4 * n_embd * n_embd", "return (4 * n_embd"),
                                "the solution code does not parse", 11),
    "hints not a list": (re.sub(r"hints:\n(  - .*\n)+", "hints: Count them.\n", EXERCISE), "'hints' must be a list", 6),
    "unknown key": (EXERCISE + "sollution: x\n", "unknown key 'sollution' (did you mean 'solution'?)", 12),
}


@pytest.mark.parametrize("name", sorted(EXERCISE_ERRORS))
def test_exercise_errors_name_file_and_line(md_path, name):
    body, message, offset = EXERCISE_ERRORS[name]
    id_ = "mine" if "check:" in body else "attention-params"
    err = error_of("Text.\n\n" + fence("exercise", body, f" id={id_}"), md_path)  # the fence is on line 3
    assert message in err.message, err.message
    assert err.line == 3 + offset, (err.line, err.message)


def test_exercise_default_check_comes_from_the_id(md_path):
    err = error_of(fence("exercise", EXERCISE, " id=no-such-check"), md_path)
    assert "no check function 'no_such_check'" in err.message and err.line == 1


def test_duplicate_exercise_ids(md_path):
    text = fence("exercise", EXERCISE, " id=attention-params") + "\n" + fence("exercise", EXERCISE, " id=attention-params")
    assert "already used by the exercise on line 1" in error_of(text, md_path).message


def test_the_lessons_exercise_fences_render(md_path):
    """The lesson's exercise fences build into four exercises."""
    page = render(exercise_fences_text(), md_path)
    assert page.count('<section class="exercise"') == 4
    titles = [html.unescape(t) for t in re.findall(r'<span class="exercise-kicker">Exercise</span> (.*?)<span', page)]
    assert titles == ["The parameter budget", "Split the fused projection into heads",
                      "Scaled attention with a stable softmax", "The whole multi-head forward pass"]
    # what exercises.js reads as each one's starter and solution is the fence's code, exactly
    standins = re.findall(r'<div class="exercise-editor"><pre[^>]*><code>(.*?)</code></pre>', page, re.S)
    solutions = re.findall(r'<div class="exercise-solution"[^>]*>.*?<pre[^>]*><code>(.*?)</code></pre>', page, re.S)
    for (ident, body, _), standin, solution in zip(exercise_fences(), standins, solutions, strict=True):
        ex = parse_exercise(body, {"id": ident}, {"path": md_path, "line": 1})
        assert (html.unescape(standin), html.unescape(solution)) == (ex["starter"], ex["solution"]), ident


def test_renderers_work_without_a_lesson_file():
    """Called on its own (no file to scan for duplicate ids), a renderer still validates."""
    html_ = FENCE_RENDERERS["quiz"](QUIZ, {"id": "q"}, {"path": "?", "line": 1})
    assert 'data-quiz="q"' in html_
    with pytest.raises(LessonError, match=r"^\?:1: "):
        FENCE_RENDERERS["quiz"](textwrap.dedent("choices: []\n"), {"id": "q"}, {"path": "?", "line": 1})
