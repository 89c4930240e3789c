"""Big formulas far down a lesson reach the page as their TeX and are typeset as the reader comes near.

Lesson 4's 364 formulas were 2,152 of its page's 3,381 elements at load, nearly all of them screens below the
first (a phone's first two screens hold 7 formulas). Most formulas are small: a variable, ``d_k``, ``x = 3``,
two to seven elements, for which a stand-in would save little and the prose around it would move as it is
typeset. The big ones are few: 61 formulas of eight elements or more held 1,127. So a formula of
``LATER_ELEMENTS`` elements or more, after the lesson's opening section (``EAGER_SECTIONS``), is written into
the page as a stand-in, its TeX in a ``<code class="math-later" data-math="key">``, and its MathML goes into
the lesson's maths file beside the page (build.py, ``LATER_MATHS``: ``{key: mathml}``). The page's maths.js
typesets a stand-in a screen before it is seen, and all the others in idle time once the reader has moved on
the page (scrolled, pressed a key: find-in-page's Ctrl+F and print's Ctrl+P are keys), as it builds far
editors and widgets; before printing, at once. Until then the TeX is what the page holds: what find-in-page
finds and a screen reader reads there, as Wikipedia's maths images carry their TeX as alternative text.

A stand-in is sized as the formula it stands for while the browser skips its block (placeholders.py counts
the characters its MathML draws), since it is typeset before it is drawn.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable

from markdown_it.token import Token

from .math import MATH_TOKENS, find_formulas, tokens_with_lines

#: A formula of this many MathML elements or more, after the opening section, waits for the reader.
LATER_ELEMENTS = 8
#: How many of the lesson's sections (from its title to its second ``##`` heading is the first) are always
#: typeset in the page: what a reader sees first never changes as its maths arrives.
EAGER_SECTIONS = 1


def elements(mathml: str) -> int:
    """How many elements a formula's MathML puts on the page."""
    return len(re.findall(r"<[a-z]", mathml))


def later_key(tex: str, display: bool) -> str:
    """The key of a formula in the maths file: the same formula in the same place (inline or display) has
    one, whatever page it is on; a page and a maths file of different builds share only identical formulas."""
    return hashlib.sha256(f"{int(display)}{tex}".encode()).hexdigest()[:12]


def mark_later(tokens: list[Token]) -> None:
    """Mark the formulas among *tokens* (typeset already) that wait for the reader: ``token.meta["later"]``."""
    sections = 0
    for token, _ in tokens_with_lines(tokens):  # in page order, an inline token's children after it
        if token.type == "heading_open" and token.tag == "h2":
            sections += 1
        elif (sections > EAGER_SECTIONS and token.type in MATH_TOKENS and "html" in token.meta
              and elements(token.meta["html"]) >= LATER_ELEMENTS):
            token.meta["later"] = True


def standin(tex: str, key: str) -> str:
    """The HTML that holds a formula's place until it is typeset (maths.js swaps it for the MathML)."""
    return f'<code class="math-later" data-math="{key}">{html.escape(tex, quote=False)}</code>'


def drawn_chars(mathml: str) -> int:
    """How many characters a formula draws: what sizes its stand-in's block (placeholders.py)."""
    return len(html.unescape(re.sub(r"<[^>]*>", "", mathml)))


def later_maths(tokens: Iterable[Token]) -> dict[str, str]:
    """{key: MathML} of the formulas among *tokens* marked to wait (mark_later)."""
    return {later_key(f.tex, f.display): f.token.meta["html"] for f in find_formulas(tokens)
            if f.token.meta.get("later")}
