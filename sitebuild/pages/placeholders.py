"""How big each top-level block of a lesson is, told to the CSS that sizes it while the browser skips it.

Every block of the lesson's body has ``content-visibility: auto`` (site.css): far from the screen it is not laid
out, and stands in at its ``contain-intrinsic-size``. That size must be right on two counts:

* not smaller than the block: tools that measure a skipped block's contents (axe, in Lighthouse) lay them out
  past a small box, over the next block (a Run button "under" a paragraph failed colour contrast, a Check
  button "over" the next quiz's radio buttons failed target size, on a page where nothing overlaps);
* not much larger: the page's length is the sum of these sizes (a scroll bar 3x too long on a desktop when
  every block stood in at its height on a 360 px phone), and a block at the top of the screen that shrinks as
  it is drawn moves everything below it up. A widget scrolled to by a script (scrollIntoView, as the tests
  do) moved 1,380 px up so, too far from the screen to be started. (A link of the contents is safe: Chromium
  holds a fragment's target in place.)

So the build describes each block by what decides its height, and site.css turns that into a size for the
column's width (``Size.style`` writes these custom properties):

``--chars``  characters of prose that are drawn (not a script's data, a formula's TeX annotation, a closed
             ``<details>``'s body or a ``hidden`` element; a far formula's stand-in counts as the characters its
             MathML draws, math_later.py), which wrap: their height goes as 1 / the column width;
``--code``   characters of code in ``<pre>``, which wraps in a cell's editor the same way;
``--lines``  lines of code (each starts a line however short);
``--parts``  paragraphs, list items, headings, labels...: each ends with a partly filled line and a margin;
``--rows``   rows of a table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from .math_later import drawn_chars

#: Elements without an end tag: they open no block of their own content.
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
#: Elements whose text is never drawn: data, styles, a formula's TeX source (MathML's annotation).
UNSEEN = frozenset("script style template annotation".split())
#: Elements that start a line of their own: each ends with a partly filled line and a margin.
PARTS = frozenset("p li h1 h2 h3 h4 h5 h6 summary figcaption dt dd blockquote label legend".split())


@dataclass
class Size:
    """What decides one top-level block's height (the module's docstring says what each one counts)."""

    offset: int  # of the block's start tag in the HTML
    chars: int = 0
    code: int = 0
    lines: int = 0
    parts: int = 0
    rows: int = 0

    def style(self) -> str:
        """The custom properties site.css reads; zeros left out (its default), but always --chars."""
        sizes = {"chars": self.chars, "code": self.code, "lines": self.lines, "parts": self.parts, "rows": self.rows}
        return "; ".join(f"--{k}: {v}" for k, v in sizes.items() if v or k == "chars")


class _Blocks(HTMLParser):
    """The Size of each top-level element of a lesson's body."""

    def __init__(self, html: str, maths: dict[str, str]):
        super().__init__(convert_charrefs=True)
        self.maths = maths
        self.line_starts = [0]
        for i, ch in enumerate(html):
            if ch == "\n":
                self.line_starts.append(i + 1)
        # the open elements: (name, whether its text is unseen, whether it is a closed <details>)
        self.open: list[tuple[str, bool, bool]] = []
        self.blocks: list[Size] = []
        self.code_ends_line = True  # the code read so far ends with a newline (else its last line is counted at </pre>)

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def _unseen(self) -> bool:
        return bool(self.open and self.open[-1][1])

    def _in_pre(self) -> bool:
        return any(name == "pre" for name, _, _ in self.open)

    def handle_starttag(self, tag, attrs):
        if not self.open:
            self.blocks.append(Size(self._offset()))
        names = dict(attrs)
        in_closed_details = bool(self.open) and self.open[-1][2]
        unseen = self._unseen() or tag in UNSEEN or "hidden" in names or (in_closed_details and tag != "summary")
        if not unseen and names.get("data-math") in self.maths:  # a stand-in: it is drawn as its formula
            self.blocks[-1].chars += drawn_chars(self.maths[names["data-math"]])
            unseen = True
        if not unseen:
            block = self.blocks[-1]
            if tag == "tr":
                block.rows += 1
            elif tag in PARTS:
                block.parts += 1
        if tag not in VOID:
            self.open.append((tag, unseen, tag == "details" and "open" not in names))

    def handle_startendtag(self, tag, attrs):
        if not self.open:
            self.blocks.append(Size(self._offset()))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag == "pre" and not self._unseen() and not self.code_ends_line:
            self.blocks[-1].lines += 1  # a last line without its newline
            self.code_ends_line = True
        for i in range(len(self.open) - 1, -1, -1):  # up to the matching start tag (HTML may omit end tags)
            if self.open[i][0] == tag:
                del self.open[i:]
                return

    def handle_data(self, data):
        if not self.open or self._unseen():
            return
        block = self.blocks[-1]
        if self._in_pre():
            block.lines += data.count("\n")
            block.code += len(data) - data.count("\n")
            if data:
                self.code_ends_line = data.endswith("\n")
        else:
            block.chars += len(re.sub(r"\s+", " ", data))  # white space as drawn: a run is one space


def with_sizes(body: str, maths: dict[str, str] | None = None) -> str:
    """*body* with the custom properties of its Size in each top-level element's style (an element that has a
    style attribute gets them first in it); *maths*: {key: MathML} of its formulas' stand-ins (math_later.py)."""
    parser = _Blocks(body, maths or {})
    parser.feed(body)
    parser.close()
    out, last = [], 0
    for block in parser.blocks:
        offset = block.offset
        tag = body[offset:body.index(">", offset)]
        if ' style="' in tag:
            at = offset + tag.index(' style="') + len(' style="')
            insert = f"{block.style()}; "
        else:
            at = offset + len(tag.split(None, 1)[0].rstrip("/"))  # right after "<name"
            insert = f' style="{block.style()}"'
        out.append(body[last:at] + insert)
        last = at
    out.append(body[last:])
    return "".join(out)
