"""Read lesson sources: front matter + Markdown with fenced blocks for runnable cells.

A lesson is one ``lessons/<slug>.md`` file::

    ---
    title: Attention
    order: 4
    ---
    Prose in Markdown.

    ```python run id=scores
    scores = Q @ K.T
    ```

Fences whose info string is ``python run`` become runnable cells; other fences are
highlighted statically. Everything a lesson author can get wrong is reported as
``file:line: message`` through :class:`LessonError`, never as a traceback.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

CELL_ID_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


class LessonError(Exception):
    """A problem in a lesson source, reported as ``path:line: message``."""

    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = str(path), line, message


@dataclass
class Cell:
    """One runnable code cell of a lesson."""

    id: str
    code: str
    line: int  # 1-based line of the opening fence in the source


@dataclass
class Lesson:
    """A parsed lesson: metadata, the Markdown tokens, and the runnable cells."""

    slug: str
    title: str
    source_path: Path
    meta: dict[str, Any]
    tokens: list[Token]
    cells: list[Cell] = field(default_factory=list)
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # (level, id, text)


def make_parser() -> MarkdownIt:
    """Build the Markdown parser every lesson goes through."""
    md = MarkdownIt("commonmark", {"typographer": True}).enable(["table", "strikethrough", "replacements", "smartquotes"])
    md.use(front_matter_plugin)
    md.use(anchors_plugin, min_level=2, max_level=3, permalink=True, permalinkSymbol="#")
    return md


def parse_fence_info(info: str, path: Path, line: int) -> tuple[str, list[str], dict[str, str]]:
    """Split a fence info string into (language, flags, key=value options)."""
    try:
        words = shlex.split(info)
    except ValueError as exc:
        raise LessonError(path, line, f"cannot read the fence options {info!r}: {exc}") from None
    if not words:
        return "", [], {}
    lang, flags, options = words[0], [], {}
    for word in words[1:]:
        if "=" in word:
            key, _, value = word.partition("=")
            options[key] = value
        else:
            flags.append(word)
    return lang, flags, options


def _front_matter(tokens: list[Token], path: Path) -> dict[str, Any]:
    for token in tokens:
        if token.type == "front_matter":
            try:
                meta = yaml.safe_load(token.content) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                line = (mark.line + 2) if mark else 1  # +1 for 1-based, +1 for the opening ---
                raise LessonError(path, line, f"front matter is not valid YAML: {getattr(exc, 'problem', exc)}") from None
            if not isinstance(meta, dict):
                raise LessonError(path, 1, "front matter must be a mapping such as 'title: Attention'")
            return meta
    return {}


def _collect_cells(tokens: list[Token], path: Path) -> list[Cell]:
    cells: list[Cell] = []
    seen: dict[str, int] = {}
    for token in tokens:
        if token.type != "fence":
            continue
        line = (token.map[0] + 1) if token.map else 1
        lang, flags, options = parse_fence_info(token.info, path, line)
        if lang != "python" or "run" not in flags:
            continue
        cell_id = options.get("id") or f"cell-{len(cells) + 1}"
        if not CELL_ID_PATTERN.match(cell_id):
            raise LessonError(path, line, f"cell id {cell_id!r} must start with a letter and use letters, digits, - or _")
        if cell_id in seen:
            raise LessonError(path, line, f"cell id {cell_id!r} is already used by the cell on line {seen[cell_id]}")
        if not token.content.strip():
            raise LessonError(path, line, "a runnable cell is empty")
        seen[cell_id] = line
        token.meta["cell_id"] = cell_id
        cells.append(Cell(id=cell_id, code=token.content.rstrip("\n"), line=line))
    return cells


def _collect_headings(tokens: list[Token]) -> list[tuple[int, str, str]]:
    headings = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.attrGet("id"):
            text = tokens[i + 1].content.strip()
            headings.append((int(token.tag[1]), str(token.attrGet("id")), text))
    return headings


def read_lesson(path: Path, md: MarkdownIt | None = None) -> Lesson:
    """Parse one lesson file; raise LessonError naming file and line on any problem."""
    md = md or make_parser()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LessonError(path, 1, f"not UTF-8 text ({exc.reason})") from None
    tokens = md.parse(text)
    meta = _front_matter(tokens, path)
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        raise LessonError(path, 1, "front matter needs a 'title: ...' line")
    slug = str(meta.get("slug") or path.stem)
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", slug):
        raise LessonError(path, 1, f"slug {slug!r} must use lowercase letters, digits and -")
    lesson = Lesson(slug=slug, title=title.strip(), source_path=path, meta=meta, tokens=tokens)
    lesson.cells = _collect_cells(tokens, path)
    lesson.headings = _collect_headings(tokens)
    return lesson


def read_lessons(folder: Path) -> list[Lesson]:
    """Read every ``*.md`` in *folder*, ordered by their ``order`` (then file name)."""
    md = make_parser()
    lessons = [read_lesson(p, md) for p in sorted(folder.glob("*.md"))]
    slugs: dict[str, Path] = {}
    for lesson in lessons:
        if lesson.slug in slugs:
            raise LessonError(lesson.source_path, 1, f"slug {lesson.slug!r} is also used by {slugs[lesson.slug]}")
        slugs[lesson.slug] = lesson.source_path
    return sorted(lessons, key=lambda l: (l.meta.get("order", 1_000), l.source_path.name))
