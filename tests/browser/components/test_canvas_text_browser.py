"""On a phone, no text a matrix canvas draws lands on another (issue 39, at 390 px).

Every fillText of a canvas is recorded with its transform and its measured box, so the test sees
the boxes the reader sees, rotated column labels included. Two cases collided: the colour bar's
tick labels in a narrow bar ("0.000.501.00"), and the output view's "w[down]" above the weight bars
over V's first column label. The arrays come from Python (tests/components/sample_data.py).
"""

from __future__ import annotations

import re

import pytest

from component_page import open_fixture, sample_data
from pages import PHONE

pytestmark = pytest.mark.browser


# Each canvas keeps the texts of its last whole drawing: prepareCanvas clears it from (0, 0) first.
RECORD_TEXTS = """(() => {
  const P = CanvasRenderingContext2D.prototype;
  const fill = P.fillText, clear = P.clearRect;
  P.clearRect = function (x, y, ...rest) {
    if (x === 0 && y === 0) this.canvas.drawnTexts = [];
    return clear.call(this, x, y, ...rest);
  };
  P.fillText = function (text, x, y, ...rest) {
    const m = this.measureText(text);
    const t = this.getTransform();
    const corners = [[x - m.actualBoundingBoxLeft, y - m.actualBoundingBoxAscent],
      [x + m.actualBoundingBoxRight, y - m.actualBoundingBoxAscent],
      [x - m.actualBoundingBoxLeft, y + m.actualBoundingBoxDescent],
      [x + m.actualBoundingBoxRight, y + m.actualBoundingBoxDescent]]
      .map(([px, py]) => [t.a * px + t.c * py + t.e, t.b * px + t.d * py + t.f]);
    const xs = corners.map((c) => c[0]), ys = corners.map((c) => c[1]);
    const css = devicePixelRatio;
    (this.canvas.drawnTexts ??= []).push({ text: String(text), left: Math.min(...xs) / css,
      right: Math.max(...xs) / css, top: Math.min(...ys) / css, bottom: Math.max(...ys) / css });
    return fill.call(this, text, x, y, ...rest);
  };
})();"""


def drawn_texts(page, component: str) -> list[dict]:
    """The boxes (CSS pixels) of the texts of a component's last drawing, drawn now."""
    return page.evaluate("""(name) => {
        const c = fx.view.components[name];
        c.flush();
        return document.querySelector(`.attn-figure-${name} canvas`).drawnTexts;
    }""", component)


def legend(texts: list[dict]) -> list[dict]:
    """The colour bar's texts: its tick labels (the canvas's lowest line) and its name beside the bar."""
    lowest = max(t["top"] for t in texts)
    return [t for t in texts if lowest - t["top"] < 16]


def tick_labels(texts: list[dict]) -> list[str]:
    """The numbers on the canvas's lowest line: the colour bar's tick labels."""
    lowest = max(t["top"] for t in texts)
    return [t["text"] for t in texts if lowest - t["top"] < 4 and re.fullmatch(r"−?\d+(\.\d+)?", t["text"])]


def overlapping(texts: list[dict]) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes share more than a pixel's sliver."""
    pairs = []
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1 and \
                    min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1:
                pairs.append((a["text"], b["text"]))
    return pairs


@pytest.fixture
def phone(browser, base_url):
    context, page, errors = open_fixture(browser, base_url, viewport=PHONE, device_scale_factor=3, color_scheme="dark")
    page.evaluate(RECORD_TEXTS)
    yield page
    context.close()
    assert errors == [], f"uncaught page errors: {errors}"


def mount(page, tokens, D, select):
    data = sample_data.payload(len(tokens), D, seed=2, tokens=tokens)
    page.evaluate("([p, row]) => { fx.mount(p); fx.view.select(row); }", [data["wire"], select])


def test_output_view_weight_title_keeps_clear_of_the_column_labels_on_a_phone(phone):
    # Eight dimensions on a phone: cells of about 15 px, so V's first label stands close to the bars.
    mount(phone, ["the", "cat", "sat", "down", "by", "the", "door"], D=8, select=3)
    texts = drawn_texts(phone, "out")
    titles = [t for t in texts if t["text"].startswith("w")]
    assert titles, f"the bars beside V have no title: {[t['text'] for t in texts]}"
    assert overlapping(texts) == []


@pytest.mark.parametrize("component", ["scores", "weights", "out"])
def test_colour_bar_labels_never_touch_on_a_phone(phone, component):
    mount(phone, ["the", "cat", "sat", "down", "by", "the", "door"], D=8, select=3)
    assert overlapping(drawn_texts(phone, component)) == []
    # A canvas of 150 px leaves the bar its narrowest, 48 px: a thumbnail's, as in the heads widget.
    phone.evaluate("""(name) => { document.querySelector(`.attn-figure-${name} canvas`).style.width = '150px'; }""",
                   component)
    phone.wait_for_function("""(name) => { const c = document.querySelector(`.attn-figure-${name} canvas`);
        return c.clientWidth === 150 && c.width === 150 * devicePixelRatio; }""", arg=component)
    texts = drawn_texts(phone, component)
    assert tick_labels(texts), "the narrow bar lost its ticks"
    assert overlapping(legend(texts)) == []
