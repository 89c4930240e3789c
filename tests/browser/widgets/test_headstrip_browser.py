"""The real-heads widget's strip (components/headstrip.js) in a real page: one query token in every head of
the open head's layer.

It must show the row the reader selected in the view, in all H heads of that layer, with each head's
strongest key as the committed data has it (compared with NumPy's argmax, not with the page's own
arithmetic); follow the open head, the query row and the model; open a head by keyboard and by click; draw
a causal model's keys after the query as masked; and keep its height (the placeholder before Python is as
tall as the strip) on a 360 px phone in the dark theme.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import RUN_TIMEOUT_MS, open_tables
from lessonpy.models import realheads
from pages import Widget
from widget_site import LESSON

pytestmark = pytest.mark.browser

#: JS: the strip's geometry as drawn (lines: [{head, y, top, weight}]).
STRIP_LAYOUT = "() => lessonWidgets.find((w) => w.id === 'real').strip.layout()"


def real_heads(page, model):
    """The real-heads widget showing `model`, its grid loaded from Python."""
    real = Widget(page, "real").locator
    real.scroll_into_view_if_needed()
    expect(real).to_have_attribute("data-state", "ready", timeout=RUN_TIMEOUT_MS)
    picker = real.get_by_label("Model")
    if picker.input_value() != model:  # a select fires its change even for the same value: a request whose
        picker.select_option(model)    # answer would redraw the view under a later click
    heads = realheads.load(model)
    expect(real.locator(".realheads-grid canvas")).to_have_attribute(
        "data-heads", str(heads.layers * heads.heads), timeout=RUN_TIMEOUT_MS)
    return real


def click_query_row(page, row):
    """Select query `row` as a reader does: a click on that row of the open head's heatmap."""
    g = page.evaluate("() => lessonWidgets.find((w) => w.id === 'real').view.components.weights.layout()")
    # the position is relative to the canvas where it is when clicked (other widgets above may still change size)
    Widget(page, "real").locator.locator(".attn-figure-weights canvas").click(
        position={"x": g["rects"][0]["x"] + g["cell"] / 2, "y": g["top"] + (row + 0.5) * g["cell"]})


def token_name(tokens, i):
    """The page's way of quoting a token (table.js tokenName), without its direction isolates."""
    t = tokens[i].strip() or "␣"
    return f"'{t}' (position {i})" if tokens.count(tokens[i]) > 1 else f"'{t}'"


def strip_table(real):
    """The strip's table: [(head, strongest key, its weight, second key, its weight)], isolates removed."""
    open_tables(real)
    rows = real.locator(".realheads-strip-table tbody tr").evaluate_all("""trs => trs.map((tr) => [...tr.children].map(
        (c) => (c.dataset.value !== undefined ? Number(c.dataset.value) : c.textContent.replace(/[\\u2068\\u2069]/g, ''))))""")
    return rows


def check_strip(page, heads, s, layer, query):
    """The strip shows `query` in every head of `layer` of model `heads` on sentence `s`, with the data's
    strongest keys, both as drawn (its layout) and in its table."""
    real = Widget(page, "real").locator
    canvas = real.locator(".realheads-strip canvas")
    expect(canvas).to_have_attribute("data-query", str(query))
    expect(canvas).to_have_attribute("data-layer", str(layer))
    expect(canvas).to_have_attribute("data-heads", str(heads.heads))
    rows = heads.weights(s)[layer, :, query, :]  # (H, T): this query in every head of the layer
    if heads.causal:
        rows = rows[:, : query + 1]  # after the query is the mask
    best = rows.argmax(-1)  # the first of equal weights, as the page's
    drawn = page.evaluate(STRIP_LAYOUT)
    assert [line["head"] for line in drawn["lines"]] == list(range(heads.heads))
    assert [line["top"] for line in drawn["lines"]] == best.tolist()
    tokens = heads.tokens(s)
    table = strip_table(real)
    assert [r[0] for r in table] == [f"head {h}" for h in range(heads.heads)]
    assert [r[1] for r in table] == [token_name(tokens, k) for k in best]
    np.testing.assert_array_equal(np.array([r[2] for r in table], dtype=np.float32), rows[np.arange(heads.heads), best])
    caption = real.locator(".realheads-strip-table caption").text_content().replace("\u2068", "").replace("\u2069", "")
    assert f"{heads.meta['title']}, layer {layer} (counted from 0)" in caption
    assert caption.endswith(f"from the query {token_name(tokens, query)}")


def test_the_strip_follows_the_query_row_the_open_head_and_the_model(page):
    real = real_heads(page, "minilm")
    minilm = realheads.load("minilm")
    if real.get_by_label("Sentence", exact=True).input_value() != "0":
        real.get_by_label("Sentence", exact=True).select_option("0")
        expect(real.locator(".realheads-tokens")).to_contain_text(f"{len(minilm.tokens(0))} tokens", timeout=RUN_TIMEOUT_MS)
    real.get_by_role("button", name="previous token: layer 0, head 2").click()
    expect(real).to_have_attribute("data-open", "0,2")
    check_strip(page, minilm, 0, 0, int(real.locator(".attn-view").get_attribute("data-selected")))  # the view's row
    click_query_row(page, 2)  # 'cat'
    check_strip(page, minilm, 0, 0, 2)
    # a head of another layer (a featured head's button): the strip shows that layer, the same query
    f = minilm.featured_head("same")
    assert f["layer"] != 0
    real.get_by_role("button", name=f"same word: layer {f['layer']}, head {f['head']}").click()
    expect(real).to_have_attribute("data-open", f"{f['layer']},{f['head']}")
    check_strip(page, minilm, 0, f["layer"], 2)
    # the model: SmolLM2 (causal, 9 heads) on its first sentence
    real.get_by_label("Model").select_option("smollm2")
    expect(real.locator(".realheads-grid canvas")).to_have_attribute("data-heads", "270", timeout=RUN_TIMEOUT_MS)
    smol = realheads.load("smollm2")
    first = smol.featured[0]
    expect(real).to_have_attribute("data-open", f"{first['layer']},{first['head']}")
    check_strip(page, smol, 0, first["layer"], 2)  # the view kept its row
    click_query_row(page, 5)
    check_strip(page, smol, 0, first["layer"], 5)
    # the sentence: a new one redraws it too
    real.get_by_label("Sentence", exact=True).select_option("3")
    expect(real.locator(".realheads-tokens")).to_contain_text(f"{len(smol.tokens(3))} tokens", timeout=RUN_TIMEOUT_MS)
    check_strip(page, smol, 3, first["layer"], 5)


def test_a_causal_models_keys_after_the_query_are_drawn_masked(page):
    """SmolLM2 stores 0 after the query; the strip draws those keys in the masked grey, not as weight 0."""
    real = real_heads(page, "smollm2")
    click_query_row(page, 3)
    canvas = real.locator(".realheads-strip canvas")
    expect(canvas).to_have_attribute("data-query", "3")
    colours = page.evaluate("""() => {
      const g = lessonWidgets.find((w) => w.id === 'real').strip.layout();
      const canvas = document.querySelector('#widget-real .realheads-strip canvas');
      const dpr = canvas.width / canvas.clientWidth;
      const ctx = canvas.getContext('2d');
      const px = (key, line) => [...ctx.getImageData(Math.round((g.left + (key + 0.5) * g.cell) * dpr),
        Math.round((line.y + g.row / 2) * dpr), 1, 1).data].slice(0, 3);
      const probe = document.createElement('canvas').getContext('2d');
      probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue('--attn-masked').trim();
      probe.fillRect(0, 0, 1, 1);
      const viridis0 = [68, 1, 84];
      return { after: g.lines.map((l) => px(4, l)), masked: [...probe.getImageData(0, 0, 1, 1).data].slice(0, 3), viridis0,
               before: g.lines.map((l) => px(0, l)) };
    }""")
    for after in colours["after"]:
        assert after == colours["masked"], "a key after the query is not drawn masked"
    assert colours["masked"] != colours["viridis0"]
    assert all(before != colours["masked"] for before in colours["before"])  # a key the model sees is a weight


def test_keyboard_and_click_on_a_line_open_that_head(page):
    real = real_heads(page, "minilm")
    real.get_by_role("button", name="previous token: layer 0, head 2").click()
    expect(real).to_have_attribute("data-open", "0,2")
    click_query_row(page, 3)
    canvas = real.locator(".realheads-strip canvas")
    expect(canvas).to_have_attribute("data-query", "3")
    canvas.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowDown")
    expect(canvas).to_have_attribute("aria-label", re.compile(r"Focused: head 4,"))
    expect(real).to_have_attribute("data-open", "0,2")  # moving is not opening
    page.keyboard.press("Enter")
    expect(real).to_have_attribute("data-open", "0,4")
    expect(real.locator(".realheads-table caption")).to_contain_text("layer 0, head 4 (counted from 0)")
    expect(real.locator(".realheads-strip-table tr[aria-current='true'] th")).to_have_text("head 4")
    expect(canvas).to_have_attribute("data-query", "3")  # the query row stays
    expect(canvas).to_be_focused()
    # a click on head 9's line
    drawn = page.evaluate(STRIP_LAYOUT)
    canvas.click(position={"x": 20, "y": drawn["lines"][9]["y"] + drawn["row"] / 2})
    expect(real).to_have_attribute("data-open", "0,9")
    check_strip(page, realheads.load("minilm"), 0, 0, 3)


def test_the_strip_keeps_its_height_and_fits_a_dark_phone(browser, widgets_url, page):
    """Before Python the strip's placeholder is as tall as the strip drawn later, on a 360 px phone."""
    context = browser.new_context(viewport={"width": 360, "height": 800}, color_scheme="dark")
    context.route("**/pyodide.asm.wasm", lambda route: None)  # never answered: Python stays loading
    waiting = context.new_page()
    try:
        waiting.goto(widgets_url + LESSON)
        real = Widget(waiting, "real").locator
        real.scroll_into_view_if_needed()
        canvas = real.locator(".realheads-strip canvas")
        expect(canvas).to_have_attribute("aria-label", "Every head's row for one query appears when Python has loaded the heads.")
        before = canvas.bounding_box()["height"]
    finally:
        context.close()
    page.set_viewport_size({"width": 360, "height": 800})
    page.emulate_media(color_scheme="dark")
    try:
        real = real_heads(page, "minilm")  # 12 heads, as the placeholder above
        canvas = real.locator(".realheads-strip canvas")
        canvas.scroll_into_view_if_needed()
        expect(canvas).to_have_attribute("data-heads", "12")
        drawn = page.evaluate(STRIP_LAYOUT)
        assert canvas.bounding_box()["height"] == before == drawn["height"]
        assert drawn["width"] <= 360 and canvas.bounding_box()["x"] + canvas.bounding_box()["width"] <= 360
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    finally:
        page.set_viewport_size({"width": 1000, "height": 900})
        page.emulate_media(color_scheme="light")
