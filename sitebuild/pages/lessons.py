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
highlighted statically. A fence with ``include=path/from/repo/root.py`` shows that
file (one source for code the lesson also ships); ``python run id=NAME include=FILE`` is a
*runnable include*, a cell whose code is that file, ``fold="summary"`` folds a cell
under a summary line, and ``needs=page`` marks a cell that runs only in the page (it reads data the site
serves, or a widget): the build's run of the cells in page order skips it, the browser tests run it; with it,
``files=smollm2`` (or ``minilm``, or both, comma-separated) has the page put that live model's files into
Python's file system before the cell runs (:mod:`sitebuild.pages.cell_files`). ``$...$`` and ``$$...$$`` are maths
(rendered by :mod:`sitebuild.pages.math`), and ``{{ num.name }}`` is a number computed by
the module named in the front matter's ``numbers:`` (see :mod:`sitebuild.pages.numbers`).
Everything a lesson author can get wrong is reported as ``file:line: message``
through :class:`LessonError`, never as a traceback.
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
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from . import aside, cell_files
from . import math as lesson_math
from . import numbers as lesson_numbers
from ..project import ROOT  # include= paths are relative to the project root


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
    include: str | None = None  # a runnable include: the file its code comes from
    fold: str | None = None  # shown folded under this summary (fold="...")
    needs_page: bool = False  # needs=page: runs only in the page, so only the browser tests run it
    files: tuple[str, ...] = ()  # files=NAME,...: live models' files put into Python's file system first (cell_files)


#: The one value of a cell's ``needs=`` option: what the page has and no other run of the cells does.
NEEDS = {"page": "data fetched from the site, or a widget"}


def runs_outside_the_page(cells: list[Cell]) -> list[Cell]:
    """The cells that every run of a lesson outside a browser runs, in page order (the build's under Node, the
    tests' in CPython): all but the ``needs=page`` ones, which the browser tests run in the page."""
    return [cell for cell in cells if not cell.needs_page]


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
    data: list[Path] = field(default_factory=list)  # the front matter's data: files, resolved
    # cell id -> the numbers (names of the numbers module's numbers()) that cell prints: its CELL_PRINTS
    prints: dict[str, list[str]] = field(default_factory=dict)


def make_parser() -> MarkdownIt:
    """Build the Markdown parser every lesson goes through."""
    md = MarkdownIt("commonmark", {"typographer": True}).enable(["table", "strikethrough", "replacements", "smartquotes"])
    md.use(front_matter_plugin)
    md.use(anchors_plugin, min_level=2, max_level=3, permalink=True, permalinkSymbol="#")
    # "$5 and $6" stays text: no digit right after the opening $, no space inside it
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, allow_labels=False)
    md.use(aside.aside_plugin)
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


def _line_of(text: str, needle: str) -> int:
    """1-based line of the first line of *text* starting with *needle* (1 if none)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(needle):
            return number
    return 1


def _resolve_includes(tokens: list[Token], path: Path, root: Path) -> None:
    """Replace the content of every ``include=FILE`` fence with that file (``lines=A-B`` cuts it)."""
    for token in tokens:
        if token.type != "fence":
            continue
        line = (token.map[0] + 1) if token.map else 1
        _, _, options = parse_fence_info(token.info, path, line)
        if "include" not in options:
            continue
        if token.content.strip():
            raise LessonError(path, line, "a fence with include= must be empty: its code comes from the file")
        rel = options["include"]
        target = (root / rel).resolve()
        if not target.is_relative_to(root.resolve()):
            raise LessonError(path, line, f"include={rel} points outside the project folder {root}")
        if not target.is_file():
            raise LessonError(path, line, f"include={rel}: no such file (paths are relative to {root})")
        text = target.read_text(encoding="utf-8")
        if "lines" in options:
            match = re.fullmatch(r"(\d+)-(\d+)", options["lines"])
            all_lines = text.splitlines(keepends=True)
            if not match or not 1 <= int(match[1]) <= int(match[2]) <= len(all_lines):
                raise LessonError(path, line, f"lines={options['lines']} must be A-B with 1 <= A <= B <= "
                                              f"{len(all_lines)} (the length of {rel})")
            text = "".join(all_lines[int(match[1]) - 1:int(match[2])])
        token.content = text if text.endswith("\n") else text + "\n"
        token.meta["include"] = rel


def _data_files(meta: dict[str, Any], path: Path, root: Path) -> list[Path]:
    """The front matter's ``data:`` list: files under ``static/`` that the lesson's cells read.

    The page links them beside "Download notebook" (a downloaded notebook reads them from its own
    folder), so each must be a file the site serves."""
    listed = meta.get("data", [])
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise LessonError(path, 1, "data: must be a list of file paths, such as 'data: [static/data/x.npz]'")
    static = (root / "static").resolve()
    files = []
    for rel in listed:
        target = (root / rel).resolve()
        if not target.is_relative_to(static):
            raise LessonError(path, 1, f"data: {rel} must be under static/ (the site serves only that folder's files)")
        if not target.is_file():
            raise LessonError(path, 1, f"data: {rel}: no such file (paths are relative to {root})")
        files.append(target)
    return files


def _fill_numbers(tokens: list[Token], path: Path, meta: dict[str, Any], text: str) -> None:
    """Replace ``{{ num.name }}`` in prose and maths with the numbers module's values."""
    values = None
    for token, line in lesson_math.tokens_with_lines(tokens):
        in_maths = token.type in lesson_math.MATH_TOKENS
        if not (token.type == "text" or in_maths or token.type == "inline"):
            continue
        if "num." not in token.content:
            continue
        if values is None:
            module = meta.get("numbers")
            if not module:
                match = lesson_numbers.PLACEHOLDER.search(token.content)
                if match:
                    raise LessonError(path, line, f"{match.group(0)} needs a 'numbers: module.name' line in the front matter")
                continue
            try:
                values = lesson_numbers.load_numbers(str(module), (path.parent,))
            except lesson_numbers.NumbersError as exc:
                raise LessonError(path, _line_of(text, "numbers:"), str(exc)) from None
        token.content, missing = lesson_numbers.substitute(token.content, values, in_maths)
        if missing and token.type != "inline":  # its children report the exact line
            raise LessonError(path, line, f"unknown number {{{{ num.{missing} }}}}: {meta.get('numbers')}.numbers() "
                                          f"has no {missing!r} (it has: {', '.join(sorted(values)) or 'nothing'})")


def _cell_prints(meta: dict[str, Any], path: Path, text: str, cells: list[Cell]) -> dict[str, list[str]]:
    """The numbers module's CELL_PRINTS (which cell prints which number), its cell ids checked against the lesson's."""
    module = meta.get("numbers")
    if not module:
        return {}
    try:
        prints = lesson_numbers.load_prints(str(module), (path.parent,))
    except lesson_numbers.NumbersError as exc:
        raise LessonError(path, _line_of(text, "numbers:"), str(exc)) from None
    unknown = sorted(set(prints) - {cell.id for cell in cells})
    if unknown:
        raise LessonError(path, _line_of(text, "numbers:"), f"{module}.CELL_PRINTS names cells the lesson does not "
                                                           f"have: {', '.join(unknown)}")
    return prints


def placeholder_lines(text: str) -> dict[str, int]:
    """The line where the text first quotes each number, {{ num.name }} -> {name: line}."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for name in lesson_numbers.PLACEHOLDER.findall(line):
            lines.setdefault(name, number)
    return lines


def render_maths(lessons: list[Lesson], root: Path = ROOT) -> None:
    """Typeset every formula of *lessons* with Temml (from *root*) in one go; a bad one is a LessonError."""
    found = [(lesson, f) for lesson in lessons for f in lesson_math.find_formulas(lesson.tokens)]
    try:
        failures = lesson_math.render_formulas([f for _, f in found], root)
    except lesson_math.MathError as exc:
        first = found[0]
        raise LessonError(first[0].source_path, first[1].line, str(exc)) from None
    if failures:
        formula, message = failures[0]
        lesson = next(lesson for lesson, f in found if f is formula)
        raise LessonError(lesson.source_path, formula.line, f"bad maths: {message} in ${formula.tex}$")


def _check_fences_closed(tokens: list[Token], text: str, path: Path) -> None:
    """Refuse a fence that is never closed: Markdown would make the rest of the file its code."""
    lines = re.split(r"\r\n|\r|\n", text)  # markdown-it's lines: str.splitlines() would also split at U+2028
    for token in tokens:
        if token.type != "fence" or not token.map:
            continue
        start, end = token.map  # a closed fence's last line is its closing fence
        char, length = token.markup[0], len(token.markup)
        closing = re.compile(r"^[ \t>]*" + re.escape(char) + "{" + str(length) + r",}[ \t]*$")
        if end - start < 2 or end > len(lines) or not closing.match(lines[end - 1]):
            raise LessonError(path, start + 1, f"this {token.markup} fence is never closed: add a line "
                                               f"{token.markup} where its code ends")
        # A line inside that opens a fence as long (an info string after it: it cannot be a closing fence) is
        # the next fence's opening line, swallowed because this one was left open: the next cell would vanish.
        # A longer outer fence (````) around a shorter example (```python) is how Markdown nests, and passes.
        opening = re.compile(r"^[ \t>]*" + re.escape(char) + "{" + str(length) + r",}[ \t]*[^\s" + re.escape(char) + "]")
        for number in range(start + 1, end - 1):
            if opening.match(lines[number]):
                raise LessonError(path, start + 1, f"this {token.markup} fence is not closed before line {number + 1}, "
                                                   f"which opens the next one: add a line {token.markup} where its code ends")


def _check_asides(tokens: list[Token], text: str, path: Path) -> None:
    """An aside needs a title (its only visible part while closed), a closing ``:::``, no aside inside
    it, and no heading (the table of contents would point into a closed box)."""
    lines = re.split(r"\r\n|\r|\n", text)
    open_at = None
    for token in tokens:
        line = (token.map[0] + 1) if token.map else 1
        if token.type == aside.OPEN:
            if open_at is not None:
                raise LessonError(path, line, f"an aside cannot hold another aside (the one on line {open_at} is open)")
            if not aside.title_of(token):
                raise LessonError(path, line, "an aside needs a title: ::: aside A common mistake")
            end = token.map[1]
            if end >= len(lines) or not lines[end].strip().startswith(":::"):
                raise LessonError(path, line, "this aside is never closed: add a line ::: where it ends")
            open_at = line
        elif token.type == aside.CLOSE:
            open_at = None
        elif token.type == "heading_open" and open_at is not None:
            raise LessonError(path, line, f"a heading inside the aside of line {open_at}: the table of contents "
                                          "would point into a closed box; end the aside first")


def _collect_cells(tokens: list[Token], path: Path) -> list[Cell]:
    cells: list[Cell] = []
    seen: dict[str, int] = {}
    for token in tokens:
        if token.type != "fence":
            continue
        line = (token.map[0] + 1) if token.map else 1
        lang, flags, options = parse_fence_info(token.info, path, line)
        if "run" not in flags:
            continue
        if lang != "python":
            raise LessonError(path, line, f"only python fences can run: write ```python run id={options.get('id', 'NAME')}, "
                                          f"not ```{lang} run")
        cell_id = options.get("id")
        if not cell_id:  # a position-based key would hand the reader's edits to another cell once one is inserted
            raise LessonError(path, line, "a runnable cell needs an id (```python run id=NAME): the reader's edits "
                                          "are saved under it, so it must not change when cells are added")
        if not CELL_ID_PATTERN.match(cell_id):
            raise LessonError(path, line, f"cell id {cell_id!r} must start with a letter and use letters, digits, - or _")
        if cell_id in seen:
            raise LessonError(path, line, f"cell id {cell_id!r} is already used by the cell on line {seen[cell_id]}")
        if not token.content.strip():
            raise LessonError(path, line, "a runnable cell is empty")
        if "needs" in options and options["needs"] not in NEEDS:
            raise LessonError(path, line, f"needs={options['needs']} is not known: needs=page marks a cell that "
                                          f"runs only in the page ({NEEDS['page']})")
        files = ()
        if "files" in options:
            try:
                files = cell_files.parse(options["files"])
            except ValueError as exc:
                raise LessonError(path, line, str(exc)) from None
            if options.get("needs") != "page":
                raise LessonError(path, line, f"files={options['files']} needs needs=page too: only the page has the "
                                              "site's files to put there (a notebook finds them in folders beside it)")
        if "fold" in options and not options["fold"].strip():
            raise LessonError(path, line, 'fold= needs the summary the folded cell shows, e.g. fold="The whole file"')
        seen[cell_id] = line
        token.meta["cell_id"] = cell_id
        token.meta["cell_files"] = files  # the renderer's, parsed once here
        cells.append(Cell(id=cell_id, code=token.content.rstrip("\n"), line=line,
                          include=token.meta.get("include"), fold=options.get("fold"),
                          needs_page=options.get("needs") == "page", files=files))
    return cells


def _refuse_placeholders_in_code(tokens: list[Token], path: Path) -> None:
    """``{{ num.x }}`` is filled in prose and maths only: in a fence the reader would see (and run) it as
    written, so it is refused at its own line."""
    for token in tokens:
        if token.type != "fence" or not token.map:
            continue
        match = lesson_numbers.PLACEHOLDER.search(token.content)
        if match:  # (before includes are read: an included file is the project's, not the lesson's)
            line = token.map[0] + 2 + token.content.count("\n", 0, match.start())  # +1 for 1-based, +1 past the fence
            raise LessonError(path, line, f"{match.group(0)} inside code: numbers are filled in prose and maths "
                                          "only; print the value from the code instead")


def toc_tree(headings: list[tuple[int, str, str]]) -> list[dict]:
    """The table of contents as sections with their subsections: [{id, text, children: [{id, text}]}], so
    that the numbered list counts sections only (a flat list numbered 1, 2, 3, 4, 6, 7, 14…)."""
    tree: list[dict] = []
    for level, id_, text in headings:
        if level <= 2 or not tree:
            tree.append({"id": id_, "text": text, "children": []})
        else:
            tree[-1]["children"].append({"id": id_, "text": text})
    return tree


def _collect_headings(tokens: list[Token]) -> list[tuple[int, str, str]]:
    headings = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.attrGet("id"):
            # the text a reader sees: what markdown-it made of it (smart quotes), maths as its TeX
            children = tokens[i + 1].children or []
            text = "".join(c.content for c in children if c.type in ("text", "code_inline", *lesson_math.MATH_TOKENS))
            text = text.strip() or tokens[i + 1].content.strip()
            headings.append((int(token.tag[1]), str(token.attrGet("id")), text))
    return headings


def read_lesson(path: Path, md: MarkdownIt | None = None, *, root: Path = ROOT, maths: bool = True) -> Lesson:
    """Parse one lesson file; raise LessonError naming file and line on any problem.

    Includes are read from *root*; numbers are filled in; with *maths* the formulas are
    typeset now (read_lessons typesets all lessons' formulas together instead).
    """
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
    lesson.data = _data_files(meta, path, root)
    _check_fences_closed(tokens, text, path)
    _check_asides(tokens, text, path)
    _refuse_placeholders_in_code(tokens, path)
    _resolve_includes(tokens, path, root)
    _fill_numbers(tokens, path, meta, text)
    lesson.cells = _collect_cells(tokens, path)
    lesson.prints = _cell_prints(meta, path, text, lesson.cells)
    lesson.headings = _collect_headings(tokens)
    if maths:
        render_maths([lesson], root)
    return lesson


def read_lessons(folder: Path, root: Path = ROOT) -> list[Lesson]:
    """Read every ``*.md`` in *folder*, ordered by their ``order`` (then file name)."""
    md = make_parser()
    lessons = [read_lesson(p, md, root=root, maths=False) for p in sorted(folder.glob("*.md"))]
    render_maths(lessons, root)  # one Temml run for the whole course
    slugs: dict[str, Path] = {}
    for lesson in lessons:
        if lesson.slug in slugs:
            raise LessonError(lesson.source_path, 1, f"slug {lesson.slug!r} is also used by {slugs[lesson.slug]}")
        slugs[lesson.slug] = lesson.source_path
    return sorted(lessons, key=lambda l: (l.meta.get("order", 1_000), l.source_path.name))
