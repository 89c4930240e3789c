"""The course: lessons/course.yml's title and ordered lesson list, and each page's place in it."""

from __future__ import annotations

from pathlib import Path

import yaml

from .lessons import Lesson, LessonError
from ..project import PAGE_TO_ROOT, lesson_folder


def read_course(lessons_dir: Path) -> dict:
    """Read lessons/course.yml: the course title and its ordered list of lessons."""
    path = lessons_dir / "course.yml"
    if not path.exists():
        return {"title": "Lessons", "lessons": []}
    try:
        course = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise LessonError(path, (mark.line + 1) if mark else 1, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(course, dict) or not isinstance(course.get("lessons", []), list):
        raise LessonError(path, 1, "expected 'title:' and a 'lessons:' list")
    course.setdefault("title", "Lessons")
    return course


def course_entries(course: dict, lessons: list[Lesson]) -> list[dict]:
    """The course's lessons in order, linked when built; lessons not named in course.yml come last."""
    built = {lesson.slug: lesson for lesson in lessons}
    entries, named = [], set()
    for item in course.get("lessons", []):
        slug = item.get("slug")
        named.add(slug)
        lesson = built.get(slug)
        entries.append({"slug": slug, "title": item.get("title") or (lesson.title if lesson else slug),
                        "summary": item.get("summary", ""), "href": lesson_folder(slug) if lesson else None})
    for lesson in lessons:
        if lesson.slug not in named:
            entries.append({"slug": lesson.slug, "title": lesson.title, "summary": lesson.meta.get("summary", ""),
                            "href": lesson_folder(lesson.slug)})
    return entries


def neighbours(entries: list[dict], slug: str) -> tuple[dict | None, dict | None]:
    """The course entries before and after *slug* (hrefs relative to a lesson page)."""
    index = next(i for i, e in enumerate(entries) if e["slug"] == slug)
    def rel(entry):
        if entry is None:
            return None
        href = f"{PAGE_TO_ROOT}{entry['href']}" if entry["href"] else None
        return {"title": entry["title"] + ("" if href else " (coming)"), "href": href}
    prev = entries[index - 1] if index > 0 else None
    nxt = entries[index + 1] if index + 1 < len(entries) else None
    return rel(prev), rel(nxt)
