"""A table's destroy takes its scroll cue with it (static/js/page/components/table.js, scrollcue.js): the frame the
cue put around it leaves the page and its observers stop, so a widget that rebuilds its tables leaves nothing
behind. On the components' fixture page, which loads the modules straight from the tree."""

from __future__ import annotations

import pytest


pytestmark = pytest.mark.browser

DESTROY = """async (kind) => {
  const m = await import(new URL("/static/js/page/components/table.js", location.href).href);
  let disconnected = 0;
  for (const Observer of [ResizeObserver, MutationObserver]) {
    const own = Observer.prototype.disconnect;
    Observer.prototype.disconnect = function () { disconnected++; return own.call(this); };
  }
  const host = document.body.appendChild(document.createElement("div"));
  const table = kind === "list" ? m.createListTable(host, { caption: "t", columns: ["a", "b"] })
    : m.createTable(host, { caption: "t" });
  const framed = host.querySelectorAll(".attn-scroll-frame").length;
  table.destroy();
  return { framed, left: host.childElementCount, disconnected };
}"""


@pytest.mark.parametrize("kind", ["matrix", "list"])
def test_destroy_removes_the_scroll_cues_frame_and_stops_its_observers(page, kind):
    result = page.evaluate(DESTROY, kind)
    assert result["framed"] == 1  # the cue framed the table
    assert result["left"] == 0, "the cue's frame stayed in the page"
    assert result["disconnected"] == 2  # its ResizeObserver and MutationObserver
