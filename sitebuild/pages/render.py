"""Turn a parsed lesson's Markdown tokens into HTML: prose, maths, highlighted code, runnable cells."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from . import cell_files
from .lessons import Lesson, make_parser, parse_fence_info, render_maths
from .markup import code_standin, highlighted_pre
from .math_later import later_key, later_maths, mark_later, standin
from .practice import quiz_orders, render_exercise, render_quiz
from .widget_fence import render_widget

#: The renderers of special fences, by the fence's language word. Each is called as
#: ``renderer(content, options, env) -> html`` with the fence's key=value options and the
#: render env (``env["path"]``, ``env["line"]``, ``env["flags"]``: the bare words after the
#: language, ``env["cell_index"]``: how many cells came before, ``env["fence_ids"]``:
#: {(kind, id): line} of the page's fences so far, shared by all of them, for refusing a
#: duplicate id, ``env["slug"]``: the lesson's, ``env["quiz_orders"]``: {id: order} of the page's quizzes
#: (practice.quiz_orders, made at the first quiz), ``env["site"]``: what the build knows of the site, see render_lesson, ``env["widget_data"]``:
#: {id: data} of the page's widgets, filled by render_widget); it raises LessonError for bad input. Other fences
#: are highlighted code.
FENCE_RENDERERS: dict[str, Callable[[str, dict[str, str], dict], str]] = {
    "quiz": render_quiz,
    "exercise": render_exercise,
    "widget": render_widget,
}

def cell_name(index: int) -> str:
    """The name a cell shows (its number in page order, as a notebook's cells show theirs), the one its
    group is labelled with and every message of the page names it by (cells.js reads it from the cell)."""
    return f"Cell {index}"


def render_cell(cell_id: str, code: str, index: int, source: str | None = None, fold: str | None = None,
                files: str = "") -> str:
    """HTML of one runnable cell; the page turns the stand-in into an editor when the reader comes near it. A runnable include
    names its file (*source*) above the code; *fold* puts the cell in a closed <details> with that summary; *files*:
    its ``data-files`` attribute (:func:`sitebuild.pages.cell_files.attribute`), the files its run needs."""
    label = html.escape(cell_name(index))
    caption = source_attr = ""
    if source:
        source_attr = f' data-source="{html.escape(source)}"'
        caption = (f'<div class="code-caption cell-source-file"><span class="code-title">{html.escape(source)}</span>'
                   '<span class="cell-source-note">the project\'s file, as a cell you can edit and run</span></div>\n')
    cell = (
        f'<div class="cell" data-cell="{html.escape(cell_id)}" id="cell-{html.escape(cell_id)}" role="group" '
        f'aria-label="{label}"{source_attr}{files}>\n{caption}'
        f'<div class="cell-editor">{code_standin(code)}</div>\n'
        '<div class="cell-toolbar">'
        '<button type="button" class="cell-run" disabled title="Run (Shift+Enter)">Run</button>'  # Stop, Reset: cells.js
        '<span class="cell-state" aria-live="polite"></span>'
        f'<span class="cell-name" aria-hidden="true">{label}</span></div>\n'  # the output region: cells.js, when first needed
        "</div>\n"
    )
    if fold:
        return f'<details class="cell-fold">\n<summary>{html.escape(fold)}</summary>\n{cell}</details>\n'
    return cell


def _render_fence(self, tokens: list[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    cell_id = token.meta.get("cell_id")
    line = (token.map[0] + 1) if token.map else 1
    lang, flags, options = parse_fence_info(token.info, env.get("path", "?"), line)
    if cell_id:
        env["cell_index"] = env.get("cell_index", 0) + 1
        files = cell_files.attribute(token.meta.get("cell_files", ()), env.get("site") or {})
        return render_cell(cell_id, token.content.rstrip("\n"), env["cell_index"],
                           source=token.meta.get("include"), fold=options.get("fold"), files=files)
    if lang in FENCE_RENDERERS:
        env.setdefault("fence_ids", {})  # created once per page, so every fence's copy of env shares it
        if lang == "quiz" and "quiz_orders" not in env:  # decided for the whole page at its first quiz
            env["quiz_orders"] = quiz_orders(tokens, env.get("slug", ""), env.get("path", "?"))
        return FENCE_RENDERERS[lang](token.content, options, {**env, "line": line, "flags": flags})
    lang_class = f' data-lang="{html.escape(lang)}"' if lang else ""
    # tabindex: a long line scrolls sideways, and a scrolling region must be reachable by keyboard.
    pre = highlighted_pre(token.content, lang, f' tabindex="0"{lang_class}') + "\n"
    include = token.meta.get("include")
    title = options.get("title") or (include.rsplit("/", 1)[-1] if include else "")
    if include or "copy" in flags or title:
        return render_code_block(pre, title, copy=bool(include) or "copy" in flags, source=include)
    return pre


def render_code_block(pre: str, title: str, copy: bool, source: str | None = None) -> str:
    """A static code block with a caption (the file name) and a Copy button (copy.js enables it)."""
    attrs = " data-copy" if copy else ""
    if source:
        attrs += f' data-source="{html.escape(source)}"'
    name = html.escape(title) if title else "code"
    caption = f'<span class="code-title">{name}</span>' if title else ""
    if copy:
        caption += (f'<button type="button" class="copy-button" hidden aria-label="Copy {name}">Copy</button>'
                    '<span class="copy-status visually-hidden" aria-live="polite"></span>')
    return f'<figure class="code-block"{attrs}>\n<figcaption class="code-caption">{caption}</figcaption>\n{pre}</figure>\n'


def _render_math(self, tokens: list[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    rendered = token.meta.get("html")
    display = token.type in ("math_block", "math_block_label")
    if rendered is None:  # read without typesetting: show the TeX as code rather than nothing
        rendered = f"<code>{html.escape(token.content)}</code>"
    elif token.meta.get("later"):  # a big formula far down: its TeX until the reader nears it (math_later.py)
        tex = token.content.strip()
        rendered = standin(tex, later_key(tex, display))
    if display:
        return f'<div class="math-display">{rendered}</div>\n'
    return rendered


def _render_table_open(self, tokens: list[Token], idx: int, options, env) -> str:
    """A Markdown table in a region that scrolls sideways on a narrow screen instead of widening the
    page; focusable so the keyboard can scroll it, and named by its column headings."""
    headings = []
    for token in tokens[idx + 1:]:
        if token.type in ("thead_close", "table_close"):
            break
        if token.type == "inline":
            headings.append(token.content)
    label = html.escape("Table: " + ", ".join(headings), quote=True)
    # In the frame that draws its scroll cue (the page's scrollcue.js keeps it up to date): written here, so the
    # frame is the lesson's block, sized while the browser skips it like any other (placeholders.py).
    return (f'<div class="attn-scroll-frame"><div class="table-scroll" role="region" tabindex="0" aria-label="{label}">\n'
            + self.renderToken(tokens, idx, options, env))


def _render_table_close(self, tokens: list[Token], idx: int, options, env) -> str:
    return self.renderToken(tokens, idx, options, env) + "</div></div>\n"


def make_renderer() -> MarkdownIt:
    """A parser whose renderer knows our fences: cells, code blocks, widgets, quizzes, exercises, maths."""
    md = make_parser()
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("table_open", _render_table_open)
    md.add_render_rule("table_close", _render_table_close)
    for rule in ("math_inline", "math_inline_double", "math_block", "math_block_label"):
        md.add_render_rule(rule, _render_math)
    return md


class RenderedLesson(NamedTuple):
    """A lesson's HTML body, its widgets' data ({id: data}), which the page fetches apart from its HTML
    (widget-loader.js) when a widget comes near the screen: tens of kilobytes that no first screen needs, and the
    MathML of its formulas that wait for the reader ({key: mathml}, math_later.py; maths.js fetches it)."""
    html: str
    widgets: dict
    maths: dict


def render_lesson(lesson: Lesson, md: MarkdownIt | None = None, site: dict | None = None) -> RenderedLesson:
    """Render the lesson's tokens (already parsed by read_lesson) to HTML. *site*: what the build knows of
    the site the page goes into, for the fences that say it (``live_files``: MiniLM's live files in it,
    {name: {"size", "sha256"}} (sitebuild.realheads.live.describe), None when they are left out); the renderers read it as ``env["site"]``."""
    md = md or make_renderer()
    render_maths([lesson])  # a no-op when read_lessons already typeset them
    mark_later(lesson.tokens)
    env = {"path": lesson.source_path, "slug": lesson.slug, "site": site or {}, "widget_data": {}}
    body = md.renderer.render(lesson.tokens, md.options, env)
    return RenderedLesson(body, env["widget_data"], later_maths(lesson.tokens))


def render_lesson_body(lesson: Lesson, md: MarkdownIt | None = None, site: dict | None = None) -> str:
    """The lesson's HTML body alone (render_lesson)."""
    return render_lesson(lesson, md, site).html
