"""On a phone a long line of code wraps, and what wraps goes on 2ch in: an aligned trailing comment that does
not fit reads as the rest of its line, not as code under it (issue 39, at 390 px). The stand-in and the editor
that replaces it wrap alike, so the cell keeps its height when the editor comes."""

from __future__ import annotations

import pytest
from held_editors import WALK_THROUGH, built, open_held
from pages import PHONE, Cell


pytestmark = pytest.mark.browser

CELL, LINE = "running", "W_running /= W_running.sum("  # "...keepdims=True)   # row t: 1/(t+1) each"

#: Where each screen line of one source line starts (px from the holder's left), one character's width, and the
#: holder's height: in the stand-in (one text node) or in the editor (the line's .cm-line).
LINE_STARTS = """(holder, start) => {
  const code = holder.querySelector("pre.code-standin > code");
  const range = document.createRange();
  let first;
  if (code) {
    const text = code.firstChild, from = text.data.indexOf(start);
    range.setStart(text, from);
    range.setEnd(text, text.data.indexOf("\\n", from));
    first = [text, from];
  } else {
    const line = [...holder.querySelectorAll(".cm-line")].find((l) => l.textContent.startsWith(start));
    range.selectNodeContents(line);
    first = [document.createTreeWalker(line, NodeFilter.SHOW_TEXT).nextNode(), 0];
  }
  const one = document.createRange();
  one.setStart(first[0], first[1]);
  one.setEnd(first[0], first[1] + 1);
  const ch = one.getBoundingClientRect().width;
  const rects = [...range.getClientRects()].filter((r) => r.width > 0).sort((a, b) => a.top - b.top);
  const lines = [];  // [top, left] of each screen line; rects of one line's spans differ in top by less than half a line
  for (const r of rects) {
    const last = lines[lines.length - 1];
    if (last && r.top - last[0] < r.height / 2) last[1] = Math.min(last[1], r.left);
    else lines.push([r.top, r.left]);
  }
  const box = holder.getBoundingClientRect();
  return { starts: lines.map(([, left]) => left - box.left), ch, height: box.height };
}"""


def assert_hanging(seen, where):
    starts, ch = seen["starts"], seen["ch"]
    assert len(starts) >= 2, f"{where}: the line no longer wraps at 390 px, so this test sees nothing: {seen}"
    for start in starts[1:]:
        assert abs(start - (starts[0] + 2 * ch)) < 1, f"{where}: a wrapped part starts at {start}, not 2ch in: {seen}"


def test_a_wrapped_line_goes_on_2ch_in_in_the_stand_in_and_the_editor_alike(browser, site_url):
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, color_scheme="dark")
    try:
        page, held = open_held(context, site_url, wait_python=False)
        holder = Cell(page, CELL).locator.locator(".cell-editor")
        holder.scroll_into_view_if_needed()
        before = holder.evaluate(LINE_STARTS, LINE)
        assert_hanging(before, "stand-in")
        held.release()
        built(holder)
        holder.evaluate(WALK_THROUGH)
        after = holder.evaluate(LINE_STARTS, LINE)
        assert_hanging(after, "editor")
        assert len(after["starts"]) == len(before["starts"]) and abs(after["height"] - before["height"]) < 0.5, \
            (before, after)
        assert [round(s - after["starts"][0], 1) for s in after["starts"]] == \
            [round(s - before["starts"][0], 1) for s in before["starts"]], (before, after)
    finally:
        context.close()
