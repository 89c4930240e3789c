"""Small HTML pieces every renderer of the builder uses: highlighted code and safe JSON data blocks."""

from __future__ import annotations

import html
import json

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(nowrap=True)


def highlight_code(code: str, lang: str) -> str:
    """Highlight *code* as HTML spans (plain escaped text for unknown languages)."""
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        return html.escape(code)
    return highlight(code, lexer, _FORMATTER)


def code_standin(code: str) -> str:
    """An editor's stand-in until the page builds it (static/js/page/lazy-editor.js): the code as plain
    text, one ``<span class="line">`` per line (each ending in its newline, so the text is the code, to
    select, copy and find), and --digits, the width of the line numbers the stand-in draws as the
    editor will (the CSS sizes it line for line like CodeMirror, so nothing moves when it takes over).

    Not highlighted: the editor that replaces it near the viewport colours it, and a highlighted
    stand-in cost Lesson 4 about 6,500 elements (a ``<span>`` per token) that no reader saw."""
    lines = code.split("\n")
    body = "".join(f'<span class="line">{html.escape(line)}\n</span>' for line in lines[:-1])
    body += f'<span class="line">{html.escape(lines[-1])}</span>'
    return (f'<pre class="highlight code-standin" tabindex="0" style="--digits: {len(str(len(lines)))}">'
            f"<code>{body}</code></pre>")


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
    """JSON that is safe inside <script type="application/json"> (no '</' can close the tag)."""
    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "<\\!--")
