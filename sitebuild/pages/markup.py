"""Small HTML pieces every renderer of the builder uses: highlighted code and safe JSON data blocks."""

from __future__ import annotations

import html
import json

from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound


def _utf16_length(text: str) -> int:
    """Length as JavaScript counts it (the page slices the text with these lengths)."""
    return len(text.encode("utf-16-le")) // 2


def _css_class(ttype) -> str:
    """The stylesheet's class of a token type: its own, or its nearest ancestor's (the classes pygments_css styles)."""
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def text_of(code: str) -> str:
    """*code* as an element's text: only <, > and & escaped (quotes need it only in attributes, and Python's
    quotes were ~3 KB of Lesson 4's HTML as &quot; and &#x27;)."""
    return html.escape(code, quote=False)


def highlighted_pre(code: str, lang: str, attrs: str = "") -> str:
    """A static block of *code*: ``<pre class="highlight"{attrs}>`` with the code as plain text, and its colours
    as ``data-tokens``: Pygments' token classes (the stylesheet's, ``pygments_css``) as runs ``class:length``,
    ``:length`` for uncoloured text, lengths in UTF-16 units. static/js/page/highlight.js turns the runs into
    ``<span>`` elements when the block comes near the screen: one per token, ~1,150 in Lesson 4's code blocks
    and solutions, most of them never seen (far down, or a solution not shown). Unknown languages: no tokens."""
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        return f'<pre class="highlight"{attrs}><code>{text_of(code)}</code></pre>'
    runs: list[list] = []  # [class, length], neighbours of one class merged
    text = []
    for ttype, value in lexer.get_tokens(code):
        if not value:
            continue
        text.append(value)
        name = _css_class(ttype)
        if runs and runs[-1][0] == name:
            runs[-1][1] += _utf16_length(value)
        else:
            runs.append([name, _utf16_length(value)])
    tokens = " ".join(f"{name}:{n}" for name, n in runs)
    colours = f' data-tokens="{tokens}"' if any(name for name, _ in runs) else ""
    return f'<pre class="highlight"{attrs}{colours}><code>{text_of("".join(text))}</code></pre>'


def code_standin(code: str) -> str:
    """An editor's stand-in until the page builds it (static/js/page/lazy-editor.js): the code as plain
    text (to select, copy and find), and --digits, the width of the line-number gutter the editor will
    have. The CSS reserves that gutter and sizes the text line for line like CodeMirror, so nothing
    moves when the editor takes its place; only the numbers appear then.

    One text node, not an element per line: numbers drawn beside wrapped lines need an element per
    line (587 on Lesson 4, 14% of its elements), for a stand-in the reader rarely sees, since editors
    are built as they come near the screen. Not highlighted either: a ``<span>`` per token cost Lesson 4
    about 6,500 elements."""
    lines = code.count("\n") + 1
    return (f'<pre class="highlight code-standin" tabindex="0" style="--digits: {len(str(lines))}">'
            f"<code>{text_of(code)}</code></pre>")


def pygments_css() -> str:
    """Stylesheet for highlighted code, light by default and dark under prefers-color-scheme."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark = HtmlFormatter(style="monokai").get_style_defs(".highlight")
    # Only the token colours: the page's own CSS owns the code block backgrounds.
    strip = lambda css: "\n".join(l for l in css.splitlines() if not l.startswith((".highlight {", "pre {", "td.", "span.linenos", ".highlight .hll")))
    # Pygments' default purple (#aa22ff) is 4.47:1 on our code background, just under WCAG AA's 4.5.
    contrast_fix = ".highlight .ow, .highlight .nd { color: #7a1fa2 }"
    return f"{strip(light)}\n{contrast_fix}\n@media (prefers-color-scheme: dark) {{\n{strip(dark)}\n}}\n"


def json_for_script(data: object) -> str:
    """JSON that is safe inside <script type="application/json"> (no '</' can close the tag), without the
    spaces after separators that nobody reads there."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            .replace("</", "<\\/").replace("<!--", "<\\!--"))
