"""Every lesson course.yml lists that has a page, checked with no test code of its own (CPython).

For each: its cells run in page order (the needs=page ones are left to tests/browser/test_every_lesson_browser.py)
without an error or a warning, and print the same when run again; each prints the numbers its numbers
module's CELL_PRINTS says it prints, which the text quotes; each exercise's starter fails, its solution
passes and its listed wrong answers fail with their words. Its notebook runs in tests/build/test_notebook_run.py.
The checks are in tests/support/lesson_checks.py; a new lesson in course.yml gets them (the tests at the end show it
on a course made here).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lesson_checks import (EDITOR_COLUMNS, course_lessons, exercises_of, grading_problems, missing_prints,
                           run_cell, run_in_page_order, wide_lines)

from sitebuild.pages.lessons import LessonError, runs_outside_the_page

ROOT = Path(__file__).resolve().parents[2]
LESSONS = course_lessons(ROOT / "lessons")
EXERCISES = [(lesson, ex) for lesson in LESSONS for ex in exercises_of(lesson)]


@pytest.fixture(scope="module", params=LESSONS, ids=lambda lesson: lesson.slug)
def lesson(request):
    return request.param


@pytest.fixture(scope="module")
def outputs(lesson):
    return run_in_page_order(lesson)


def test_the_cells_run_in_page_order_without_error_or_warning(lesson, outputs):
    assert list(outputs) == [cell.id for cell in runs_outside_the_page(lesson.cells)]


def test_every_line_of_every_cell_fits_the_editor_without_scrolling_sideways(lesson):
    wide = wide_lines(lesson)
    assert not wide, (f"wrap these lines to {EDITOR_COLUMNS} characters (a comment above, a split call or "
                      "f-string):\n" + "\n".join(wide))


def test_each_cell_prints_the_numbers_the_text_quotes(lesson, outputs):
    assert lesson.prints or not lesson.meta.get("numbers"), "the numbers module declares no CELL_PRINTS"
    problems = missing_prints(lesson, outputs)
    assert not problems, "\n\n".join(problems)


def test_every_cell_prints_the_same_when_run_again_after_all_the_others(lesson, outputs):
    """A reader scrolls back and presses Run: after every cell has run, running them again from the last to the
    first (each then sees what the later cells left behind) prints what the first pass printed."""
    cells = runs_outside_the_page(lesson.cells)
    namespace: dict = {"__name__": "__lesson__"}
    for cell in cells:
        run_cell(lesson, cell, namespace)
    changed = [f"{lesson.source_path}:{cell.line}: cell {cell.id!r}" for cell in reversed(cells)
               if run_cell(lesson, cell, namespace) != outputs[cell.id]]
    assert not changed, "these cells print something else when run again:\n" + "\n".join(changed)


@pytest.mark.parametrize("lesson, ex", EXERCISES, ids=[f"{lesson.slug}-{ex['id']}" for lesson, ex in EXERCISES])
def test_each_exercise_refuses_its_starter_and_wrong_answers_and_accepts_its_solution(lesson, ex):
    problems = grading_problems(lesson, ex)
    assert not problems, "\n\n".join(problems)


# ---------------------------------------------------------------------------- a new lesson gets the checks

SECOND = """---
title: The second lesson
order: 2
numbers: second_numbers
---
Ten times the mean of one to ten is {{ num.tenfold }}.

```python run id=tenfold
import numpy as np

print("ten times the mean:", 10 * np.arange(1, 11).mean())
```

```python run id=fetched needs=page
import js  # only the page has it: this cell is left to the browser tests

print(js.location.href)
```

```exercise id=double
title: Double it
prompt: Write `double(x)`.
starter: |
  def double(x):
      return ____
solution: |
  def double(x):
      return 2 * x
check: attention_params
wrong:
  - code: |
      def double(x):
          return x
    says: never shown
```
"""


def second_numbers(value: str) -> str:
    """The numbers module of SECOND, its number as *value* (what a changed seed would make it)."""
    return f'def numbers():\n    return {{"tenfold": "{value}"}}\n\nCELL_PRINTS = {{"tenfold": ["tenfold"]}}\n'


def course_with_a_second_lesson(tmp_path: Path, value: str) -> Path:
    """The authoring fixture's course with a second lesson added to course.yml and the lessons folder."""
    lessons = tmp_path / "lessons"
    shutil.copytree(ROOT / "tests" / "fixtures" / "authoring", lessons)
    (lessons / "course.yml").write_text("title: A course\nlessons:\n  - slug: mean\n  - slug: second\n"
                                        "  - slug: coming\n", encoding="utf-8")
    (lessons / "second.md").write_text(SECOND, encoding="utf-8")
    (lessons / "second_numbers.py").write_text(second_numbers(value), encoding="utf-8")
    return lessons


def test_a_lesson_added_to_the_course_gets_the_checks_and_a_wrong_number_fails_at_its_lines(tmp_path):
    lessons = course_with_a_second_lesson(tmp_path, value="0.495")  # the text says 0.495, the cell prints 55.0
    first, second = course_lessons(lessons)  # every lesson course.yml lists with a page, in its order
    assert (first.slug, second.slug) == ("mean", "second")
    assert missing_prints(first, run_in_page_order(first)) == []
    outputs = run_in_page_order(second)
    assert list(outputs) == ["tenfold"]  # the needs=page cell is left to the page (here `import js` would fail)
    (problem,) = missing_prints(second, outputs)
    path = lessons / "second.md"
    assert problem.startswith(f"{path}:8: cell 'tenfold' should print tenfold (the text says '0.495' at {path}:6)")
    assert "ten times the mean: 55.0" in problem  # and what it printed instead
    right = course_lessons(course_with_a_second_lesson(tmp_path / "right", value="55.0"))[1]
    assert missing_prints(right, run_in_page_order(right)) == []


def test_a_new_lessons_failing_cell_and_a_wrong_answer_that_passes_fail_at_their_lines(tmp_path):
    lessons = course_with_a_second_lesson(tmp_path, value="55.0")
    path = lessons / "second.md"
    path.write_text(SECOND.replace('10 * np.arange(1, 11).mean()', 'np.arange(1, 11).mean(axis=1)'), encoding="utf-8")
    second = course_lessons(lessons)[1]
    with pytest.raises(AssertionError, match=rf"(?s)^{path}:8: cell 'tenfold' failed when the lesson's cells run in "
                                             r"page order \(CPython\):.*AxisError"):
        run_in_page_order(second)
    (ex,) = exercises_of(second)
    problems = grading_problems(second, ex)  # the check is attention_params's: nothing of it passes here
    assert any(p.startswith(f"{path}:20: exercise 'double': the solution fails its checks") for p in problems)
    assert any(p.startswith(f"{path}:31: exercise 'double': this wrong answer should fail saying 'never shown'")
               for p in problems), problems


@pytest.mark.slow  # Pyodide under Node: the build's own run of the cells
def test_the_build_stops_at_a_cell_that_fails_in_page_order_and_skips_the_page_only_ones(tmp_path):
    import build

    lessons = course_with_a_second_lesson(tmp_path, value="55.0")
    path = lessons / "second.md"
    path.write_text(SECOND.replace('10 * np.arange', 'undefined_name * np.arange'), encoding="utf-8")
    opts = build.Options(lessons_dir=lessons, out_dir=tmp_path / "site", snapshot="off", log=lambda *_: None)
    with pytest.raises(LessonError, match=rf"(?s)^{path}:8: cell 'tenfold' failed when the lesson's cells run in "
                                          r"page order:\n.*NameError: name 'undefined_name' is not defined"):
        build.build(opts)
    assert not (tmp_path / "site").exists()
    path.write_text(SECOND, encoding="utf-8")  # fixed: the needs=page cell, which cannot run under Node, is not run
    assert (build.build(opts) / "lessons" / "second" / "index.html").is_file()


def test_a_failing_cells_message_suggests_needs_page_only_when_the_code_ran():
    import build

    ran = build.cell_failure("tenfold", "Traceback (most recent call last):\n  ...\nNameError: name 'x' is not defined\n")
    assert ran.startswith("cell 'tenfold' failed when the lesson's cells run in page order:\nTraceback")
    assert ran.endswith("needs=page)")  # it may need the page: say how to mark it
    typo = build.cell_failure("tenfold", '  File "<exec>", line 1\n    x = (\n        ^\nSyntaxError: \'(\' was never closed')
    assert typo.endswith("SyntaxError: '(' was never closed")  # no page runs a typo: no hint
