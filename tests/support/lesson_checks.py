"""The checks every lesson gets with no test code of its own (tests/test_every_lesson*.py, test_notebook_run.py).

Each takes a parsed lesson and fails with ``file:line`` of the lesson: the cell, the placeholder, the wrong
answer the author has to look at. What a lesson declares for them is in docs/authoring.md: ``needs=page`` on
a cell, the numbers module's ``CELL_PRINTS``, an exercise's ``wrong:`` list.
"""

from __future__ import annotations

import contextlib
import io
import traceback
import warnings
from pathlib import Path

from lesson_source import fences_of
from lessonpy.maths.grading import grade

from sitebuild.pages.course import read_course
from sitebuild.pages.lessons import Lesson, placeholder_lines, read_lessons, runs_outside_the_page
from sitebuild.pages.numbers import load_numbers
from sitebuild.pages.practice import parse_exercise


#: The characters a cell's editor shows without scrolling sideways on a desktop screen: the page's
#: measure (46rem, less padding and the line-number gutter) in the editor's 0.88rem monospace.
EDITOR_COLUMNS = 85


def course_lessons(lessons_dir: Path) -> list[Lesson]:
    """The lessons course.yml lists that have a page (a lesson file with that slug), in the course's order."""
    by_slug = {lesson.slug: lesson for lesson in read_lessons(lessons_dir, root=Path(__file__).resolve().parents[2])}
    return [by_slug[entry["slug"]] for entry in read_course(lessons_dir)["lessons"] if entry.get("slug") in by_slug]


def where(lesson: Lesson, line: int) -> str:
    return f"{lesson.source_path}:{line}"


def run_cell(lesson: Lesson, cell, namespace: dict) -> str:
    """Run one cell in the lesson's shared namespace, as the page does; return what it printed. A warning is an
    error (an overflow the lesson did not mean to show); a failure names the cell's line and keeps the traceback."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(compile(cell.code, f"cell {cell.id}", "exec"), namespace)  # noqa: S102 (running the lesson is the test)
    except Exception:  # noqa: BLE001 (any failure of the author's cell, reported at its line)
        raise AssertionError(f"{where(lesson, cell.line)}: cell {cell.id!r} failed when the lesson's cells run in "
                             f"page order (CPython):\n{traceback.format_exc(limit=-3)}") from None
    return buffer.getvalue()


def run_in_page_order(lesson: Lesson) -> dict[str, str]:
    """Run the cells every run outside the page runs (not the needs=page ones), top to bottom in one namespace;
    return {cell id: what it printed}."""
    namespace: dict = {"__name__": "__lesson__"}
    return {cell.id: run_cell(lesson, cell, namespace) for cell in runs_outside_the_page(lesson.cells)}


def wide_lines(lesson: Lesson) -> list[str]:
    """Lines of the lesson's cells wider than the editor, each as file:line and the line."""
    return [f"{where(lesson, cell.line + i)}: {line}" for cell in lesson.cells
            for i, line in enumerate(cell.code.splitlines(), 1) if len(line) > EDITOR_COLUMNS]


def numbers_of(lesson: Lesson) -> dict[str, str]:
    """The lesson's numbers as its text shows them ({} without a numbers module)."""
    module = lesson.meta.get("numbers")
    return load_numbers(str(module), (lesson.source_path.parent,)) if module else {}


def missing_prints(lesson: Lesson, outputs: dict[str, str]) -> list[str]:
    """Each number a cell of *outputs* should print (the lesson's CELL_PRINTS) and did not: a message naming the
    cell's line and the line where the text quotes the number. Cells not in *outputs* are not judged here."""
    numbers, quoted = numbers_of(lesson), placeholder_lines(lesson.source_path.read_text(encoding="utf-8"))
    lines = {cell.id: cell.line for cell in lesson.cells}
    problems = []
    for cell_id, names in lesson.prints.items():
        if cell_id not in outputs:
            continue
        for name in names:
            if numbers[name] not in outputs[cell_id]:
                said = f"the text says {numbers[name]!r}" + (f" at {where(lesson, quoted[name])}" if name in quoted else "")
                problems.append(f"{where(lesson, lines[cell_id])}: cell {cell_id!r} should print {name} ({said}); "
                                f"it printed:\n{outputs[cell_id]}")
    return problems


def exercises_of(lesson: Lesson) -> list[dict]:
    """The lesson's exercise fences, parsed as the build parses them (with their line)."""
    return [{**parse_exercise(content, options, env), "line": env["line"]}
            for content, options, env in fences_of(lesson, "exercise")]


def grading_problems(lesson: Lesson, ex: dict) -> list[str]:
    """What is wrong with an exercise's grading, as the reader meets it: the starter does not pass (its blanks, or
    its bug, are the exercise), the solution passes every check, and each listed wrong answer fails with the
    words it lists."""
    problems = []
    if grade(ex["starter"], ex["check"], timeout=ex["timeout"])["correct"]:
        problems.append(f"{where(lesson, ex['line'])}: exercise {ex['id']!r}: the starter code already passes")
    solution = grade(ex["solution"], ex["check"], timeout=ex["timeout"])
    if not solution["correct"]:
        problems.append(f"{where(lesson, ex['line'])}: exercise {ex['id']!r}: the solution fails its checks:\n"
                        + feedback(solution))
    for wrong in ex["wrong"]:
        result = grade(wrong["code"], ex["check"], timeout=ex["timeout"])
        if result["correct"] or wrong["says"] not in feedback(result):
            problems.append(f"{where(lesson, wrong['line'])}: exercise {ex['id']!r}: this wrong answer should fail "
                            f"saying {wrong['says']!r}; " + ("it passed" if result["correct"] else
                                                               f"the feedback was:\n{feedback(result)}"))
    return problems


def feedback(result: dict) -> str:
    """What the reader reads of a grade: the failed checks' messages, or the error."""
    return "\n".join(c["message"] for c in result["checks"] if not c["correct"]) + (result["error"] or "")
