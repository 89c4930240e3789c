"""The practice fixture lesson (tests/fixtures/practice/practice.md followed by the attention lesson's exercise
fences, read from lessons/attention.md), and its exercises as a reader finds them."""

from __future__ import annotations

import re
from pathlib import Path

from lesson_source import exercise_fences_text

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "practice" / "practice.md"
LESSON = "lessons/practice/"


def practice_source() -> str:
    """The fixture lesson: its quizzes, then the attention lesson's exercises verbatim."""
    return FIXTURE.read_text(encoding="utf-8") + "\n" + exercise_fences_text()


def build_practice_site(out: Path) -> None:
    """Build the fixture lesson into `out`."""
    import build

    lessons = out.parent / "lessons"
    lessons.mkdir(parents=True, exist_ok=True)
    (lessons / "practice.md").write_text(practice_source(), encoding="utf-8")
    build.build(build.Options(lessons_dir=lessons, out_dir=out, log=lambda *_: None))


def exercise(page, name):
    return page.get_by_role("region", name=re.compile(name))


def solution_of(ex) -> str:
    """The exercise's solution, as its (hidden) panel holds it and "Use this code" puts it in the editor."""
    return ex.locator(".exercise-solution pre").evaluate("pre => pre.textContent")
