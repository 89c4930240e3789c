"""Asides: a side road of a lesson, closed until the reader opens it.

    ::: aside A common mistake: N(0, 1) weights
    Prose, maths and runnable cells, as anywhere else.
    :::

On the page an aside is a ``<details class="aside">`` whose summary is the title (inline
Markdown); in the notebook its title becomes a bold line and its cells ordinary cells. The
block syntax is mdit-py-plugins' container; this module only names it and draws it.
"""

from __future__ import annotations

import html

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

NAME = "aside"
OPEN, CLOSE = f"container_{NAME}_open", f"container_{NAME}_close"
_TITLES = MarkdownIt("commonmark", {"typographer": True}).enable(["replacements", "smartquotes"])


def title_of(token: Token) -> str:
    """The title written after ``::: aside`` (may be empty: the lesson reader refuses that)."""
    return token.info.strip()[len(NAME):].strip()


def _render(self, tokens: list[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    if token.nesting == -1:
        return "</details>\n"
    # the title is inline Markdown (`code`, *emphasis*), with the lesson's typography (curly quotes);
    # maths in it is not typeset, so keep it plain
    summary = _TITLES.renderInline(title_of(token)) or html.escape(title_of(token))
    return f'<details class="aside">\n<summary>{summary}</summary>\n'


def aside_plugin(md: MarkdownIt) -> None:
    """Teach *md* the ``::: aside Title`` block."""
    container_plugin(md, NAME, validate=lambda params, *_: params.strip().split(" ", 1)[0] == NAME, render=_render)
