"""How big each top-level block of a lesson is, told to the CSS that sizes it while the browser skips it.

Every block of the lesson's body has ``content-visibility: auto`` (site.css): far from the screen it is not laid
out, and stands in at its ``contain-intrinsic-size``. A fixed guess (3rem, 16rem) was smaller than most blocks,
and tools that measure a skipped block's contents (axe, in Lighthouse) lay them out past that small box, over
the next block: a cell's Run button "over" the next paragraph failed colour contrast, a quiz's Check button
"over" the next quiz's radio buttons failed target size, on a page where nothing overlaps. Each block now
carries its text's length as ``--chars`` (and a table its rows as ``--rows``: little text, tall), and site.css
turns them into a size at least as tall as the block is on a phone; ``auto`` then keeps the real size once the
block has been drawn.
"""

from __future__ import annotations

from html.parser import HTMLParser

#: Elements without an end tag: they open no block of their own content.
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


class _Blocks(HTMLParser):
    """The offset of each top-level start tag in the HTML and the length of the text inside it (textContent)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.line_starts = [0]
        for i, ch in enumerate(html):
            if ch == "\n":
                self.line_starts.append(i + 1)
        self.depth = 0
        self.blocks: list[list[int]] = []  # [offset of the start tag, characters of text, table rows]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def handle_starttag(self, tag, attrs):
        if self.depth == 0:
            self.blocks.append([self._offset(), 0, 0])
        elif tag == "tr":
            self.blocks[-1][2] += 1
        if tag not in VOID:
            self.depth += 1

    def handle_startendtag(self, tag, attrs):
        if self.depth == 0:
            self.blocks.append([self._offset(), 0, 0])

    def handle_endtag(self, tag):
        if tag not in VOID:
            self.depth = max(0, self.depth - 1)

    def handle_data(self, data):
        if self.depth > 0 and self.blocks:
            self.blocks[-1][1] += len(data)


def with_text_lengths(body: str) -> str:
    """*body* with ``style="--chars: N"`` on each top-level element (N: the length of its text, as the
    browser's textContent counts it; ``; --rows: R`` too when it holds R table rows); an element that has a style
    attribute gets them first in that style."""
    parser = _Blocks(body)
    parser.feed(body)
    parser.close()
    out, last = [], 0
    for offset, chars, rows in parser.blocks:
        end = body.index(">", offset)
        tag = body[offset:end]
        size = f"--chars: {chars}" + (f"; --rows: {rows}" if rows else "")
        if ' style="' in tag:
            at = offset + tag.index(' style="') + len(' style="')
            insert = f"{size}; "
        else:
            at = offset + len(tag.split(None, 1)[0].rstrip("/"))  # right after "<name"
            insert = f' style="{size}"'
        out.append(body[last:at] + insert)
        last = at
    out.append(body[last:])
    return "".join(out)
