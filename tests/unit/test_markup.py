"""sitebuild/pages/markup.py: a static code block is its code as plain text, with its colours as token runs
that static/js/page/highlight.js turns into spans near the screen."""

from __future__ import annotations

import re
from html import unescape

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from sitebuild.pages.markup import highlighted_pre

CODE = 'def f(x):\n    """Doc."""\n    return x < 2  # é 😀 \u00a0end\n'


def test_the_code_is_plain_text_and_the_runs_cover_it_in_javascripts_units():
    html = highlighted_pre(CODE, "python", ' tabindex="0"')
    assert html.startswith('<pre class="highlight" tabindex="0" data-tokens="k:3 w:1 nf:1 p:1 n:1 p:2')
    assert "<span" not in html and "&lt; 2" in html
    runs = re.search(r'data-tokens="([^"]*)"', html).group(1).split()
    assert sum(int(r.rsplit(":", 1)[1]) for r in runs) == len(CODE.encode("utf-16-le")) // 2  # 😀 counts 2


def test_the_runs_colour_every_character_as_pygments_own_spans_did():
    """What highlight.js builds from the runs (simulated here) gives each visible character the class Pygments'
    HTML gave it: the same colours as the spans the page carried before (white space aside: Pygments ends its
    spans at each line's end)."""
    html = highlighted_pre(CODE, "python")
    runs = [r.rsplit(":", 1) for r in re.search(r'data-tokens="([^"]*)"', html).group(1).split()]
    ours = []
    for name, n in runs:
        ours += [name] * int(n)
    ours = [name for name, ch in zip(ours, _utf16_units(CODE)) if not ch.isspace()]
    pygments = highlight(CODE, PythonLexer(), HtmlFormatter(nowrap=True))
    theirs = []
    for m in re.finditer(r'<span class="([^"]+)">([^<]*)</span>|([^<]+)', pygments):
        piece = unescape(m.group(2) if m.group(1) else m.group(3))
        theirs += [(m.group(1) or "", ch) for ch in _utf16_units(piece)]
    assert ours == [name for name, ch in theirs if not ch.isspace()]


def _utf16_units(text):
    """One entry per UTF-16 unit, as JavaScript indexes a string (a character outside the BMP twice)."""
    return [ch for ch in text for _ in range(len(ch.encode("utf-16-le")) // 2)]


def test_an_unknown_language_is_plain_with_no_runs():
    assert highlighted_pre("a < b", "no-such-language") == '<pre class="highlight"><code>a &lt; b</code></pre>'
