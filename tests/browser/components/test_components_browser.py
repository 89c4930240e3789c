"""Browser tests of the attention components (static/js/components/) in Debian's Chromium.

Each test would fail if a picture stopped matching its arrays: tables must hold the input values,
the brightest heatmap pixel must sit on the largest weight, selection must move with clicks and
keys, T=512 must draw quickly, and bad arrays must show a message without a page error.
The arrays are computed in Python (tests/components/sample_data.py); the JS only draws them.
"""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from browser import RUN_TIMEOUT_MS, open_tables
from component_page import FIXTURE, ROOT, open_fixture, sample_data

pytestmark = pytest.mark.browser
ARTIFACTS = ROOT / "test-results"


def mount(page, T=6, D=4, seed=0, causal=False, **options):
    data = sample_data.payload(T, D, seed, causal)
    page.evaluate("([p, o]) => fx.mount(p, o)", [data["wire"], options])
    return data["arrays"], data["wire"]["tokens"]


def shown(value: float) -> str:
    return f"{value:.3f}".replace("-", "−")


def token_name(tokens, i):
    """Mirror of table.js tokenName: direction-isolated (FSI … PDI), repeated tokens told apart by position."""
    t = tokens[i]
    return f"'\u2068{t}\u2069' (position {i})" if tokens.count(t) > 1 else f"'\u2068{t}\u2069'"


# JS: colour of one pixel per cell (3 px inside its top-left corner, away from text and grid).
CELL_COLOURS = """([name]) => {
  const comp = fx.view.components[name];
  const g = comp.layout();
  const canvas = document.querySelector(`.attn-figure-${name} canvas`);
  const dpr = canvas.width / canvas.clientWidth;
  const ctx = canvas.getContext('2d');
  const r = g.rects[0];
  const out = [];
  for (let R = 0; R < g.nR; R++) {
    const row = [];
    for (let C = 0; C < r.nC; C++) {
      const d = ctx.getImageData(Math.round((r.x + C * g.cell + 3) * dpr), Math.round((r.y + R * g.cell + 3) * dpr), 1, 1).data;
      row.push([d[0], d[1], d[2]]);
    }
    out.push(row);
  }
  return out;
}"""

# JS: the brightest pixel anywhere in a matrix's cell area, mapped back to the cell/block it lies in.
BRIGHTEST = """([selector, comp]) => {
  const canvas = document.querySelector(selector);
  const g = comp ? eval(comp).layout() : null;
  const dpr = canvas.width / canvas.clientWidth;
  const r = g.rects[0];
  const x0 = Math.ceil(r.x * dpr), y0 = Math.ceil(r.y * dpr);
  const w = Math.floor(r.w * dpr), h = Math.floor(r.h * dpr);
  const px = canvas.getContext('2d').getImageData(x0, y0, w, h).data;
  let best = -1, at = 0;
  for (let i = 0; i < w * h; i++) {
    const y = 0.2126 * px[i * 4] + 0.7152 * px[i * 4 + 1] + 0.0722 * px[i * 4 + 2];
    if (y > best) { best = y; at = i; }
  }
  const cx = (x0 + (at % w) + 0.5) / dpr, cy = (y0 + Math.floor(at / w) + 0.5) / dpr;
  return { block: [Math.floor((cy - r.y) / g.cell), Math.floor((cx - r.x) / g.cell)], br: g.br, bc: r.bc };
}"""


def luminance(rgb):
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]


# ---- the pictures match the arrays ------------------------------------------------------------

def test_tables_hold_exactly_the_input_values(page):
    arrays, tokens = mount(page)
    # closed, the tables are not built (the DOM grows with the reader); opened, they hold the latest data
    assert page.locator(".attn-tables:not([open])").count() == 1 and page.locator(".attn-tables table").count() == 0
    assert page.locator(".attn-table-wrap[data-deferred]").count() == 5
    open_tables(page)
    for key, name in [("weights", "weights"), ("scores", "scores"), ("V", "V"), ("out", "out")]:
        cells = page.locator(f".attn-table-{name} tbody td")
        values = np.array(cells.evaluate_all("tds => tds.map(td => Number(td.dataset.value))"), dtype=np.float32)
        expected = arrays[key].ravel()
        assert np.array_equal(values, expected), key
        texts = cells.all_text_contents()
        assert texts == [shown(v) for v in expected.astype(np.float64)], key
    caption = page.locator(".attn-table-weights caption").text_content()
    assert "Attention weights" in caption and "6×6" in caption
    row_headers = page.locator(".attn-table-weights tbody th[scope=row]").all_text_contents()
    assert row_headers == tokens


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_brightest_heatmap_cell_is_the_largest_weight(browser, base_url, scheme):
    context, page, errors = open_fixture(browser, base_url, color_scheme=scheme)
    try:
        arrays, _ = mount(page, T=6, seed=2)
        colours = np.array(page.evaluate(CELL_COLOURS, ["weights"]), dtype=float)
        lum = luminance(np.moveaxis(colours, -1, 0))
        assert np.unravel_index(lum.argmax(), lum.shape) == np.unravel_index(arrays["weights"].argmax(), (6, 6))
        # Brightness ranks like the weights (the sequential map is monotonic in lightness).
        order = np.argsort(arrays["weights"].ravel())
        assert np.all(np.diff(lum.ravel()[order]) >= -1.0)

        # Every pixel of a standalone heatmap with no text or grid: the very brightest is on the max.
        data = sample_data.payload(40, 4, 5, plant=(23, 9))
        page.evaluate("p => { window.solo = fx.solo('heatmap', p); window.soloComp = fx.solos.at(-1); }", data["wire"])
        hit = page.evaluate(BRIGHTEST, ["#solo canvas", "window.soloComp"])
        assert hit["br"] == 1
        assert tuple(hit["block"]) == np.unravel_index(data["arrays"]["weights"].argmax(), (40, 40))
    finally:
        context.close()
    assert errors == []


def test_scores_use_a_diverging_map_centred_on_zero(page):
    arrays, _ = mount(page, T=6, seed=4)
    colours = np.array(page.evaluate(CELL_COLOURS, ["scores"]), dtype=float)
    orange = colours[..., 0] - colours[..., 2]  # red minus blue: positive for orange, negative for blue
    s = arrays["scores"]
    step = 2 * np.abs(s).max() / 255  # one step of the 256-colour table
    assert s.ravel()[orange.argmax()] >= s.max() - 2 * step
    assert s.ravel()[orange.argmin()] <= s.min() + 2 * step
    clear = np.abs(s) > 0.2 * np.abs(s).max()
    assert np.all(np.sign(orange[clear]) == np.sign(s[clear]))
    near_zero = colours[np.abs(s) < 0.02 * np.abs(s).max()]
    assert np.all(near_zero.min(axis=-1) > 225)  # white in the middle


def test_causal_mask_is_drawn_grey_and_listed(page):
    arrays, _ = mount(page, T=8, seed=3, causal=True)
    assert page.evaluate("fx.view.components.scores.error()") == ""
    colours = np.array(page.evaluate(CELL_COLOURS, ["scores"]), dtype=float)
    masked = np.isneginf(arrays["scores"])
    grey = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--attn-masked')").strip()
    assert np.all(colours[masked] == [int(grey[i:i + 2], 16) for i in (1, 3, 5)])
    assert not np.any(np.all(colours[~masked] == [int(grey[i:i + 2], 16) for i in (1, 3, 5)], axis=-1))
    assert "masked" in page.locator(".attn-figure-scores figcaption").inner_text()
    open_tables(page)
    assert page.locator(".attn-table-scores tbody tr").first.locator("td").nth(1).text_content() == "−∞ (masked)"


# ---- selection and keyboard -------------------------------------------------------------------

def test_click_a_row_then_arrow_key_moves_the_selection_everywhere(page):
    arrays, tokens = mount(page)
    open_tables(page)
    w = arrays["weights"]

    def expected_sentence(i):
        j = int(w[i].argmax())
        target = "itself" if j == i else token_name(tokens, j)
        return f"{token_name(tokens, i)} sends {round(float(w[i, j]) * 100)}% of its attention to {target}"

    g = page.evaluate("fx.view.components.weights.layout()")
    canvas = page.locator(".attn-figure-weights canvas")
    canvas.click(position={"x": g["rects"][0]["x"] + g["cell"] * 0.5, "y": g["top"] + g["cell"] * 2.5})
    summary = page.get_by_role("status").filter(has_text="attention")
    assert summary.inner_text().startswith(expected_sentence(2))
    assert page.evaluate("fx.view.store.get()") == 2
    assert page.locator(".attn-table-weights tr[aria-current=true]").get_attribute("data-row") == "2"

    page.keyboard.press("ArrowDown")
    assert page.evaluate("fx.view.store.get()") == 3
    assert summary.inner_text().startswith(expected_sentence(3))
    assert page.evaluate("[fx.view.components.scores.selected(), fx.view.components.out.selected()]") == [3, 3]
    assert page.locator(".attn-table-weights tr[aria-current=true]").get_attribute("data-row") == "3"
    assert page.locator(".attn-figure-query canvas").get_attribute("aria-label").find(expected_sentence(3)) >= 0

    # Left/right move the focused cell only; the query-row view takes up/down too.
    page.keyboard.press("ArrowRight")
    assert page.evaluate("fx.view.store.get()") == 3
    page.locator(".attn-figure-query canvas").focus()
    page.keyboard.press("ArrowUp")
    assert page.evaluate("fx.view.store.get()") == 2
    assert summary.inner_text().startswith(expected_sentence(2))


def test_canvases_are_keyboard_reachable_and_labelled(page):
    mount(page)
    for name in ["scores", "weights", "query", "out"]:
        c = page.locator(f".attn-figure-{name} canvas")
        assert c.get_attribute("tabindex") == "0"
        assert c.get_attribute("role") == "application"
        assert len(c.get_attribute("aria-label")) > 20
    page.locator(".attn-figure-scores canvas").focus()
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    assert page.evaluate("fx.view.store.get()") == 5


# ---- large T ----------------------------------------------------------------------------------

def test_T512_draws_pooled_with_work_bounded_by_the_blocks_not_the_cells(page):
    # How fast is the benchmark's to say, not a test's (a shared machine stalls any task now and then):
    # here, that the work of drawing does not grow with T*T. Every drawing call the mount makes on a 2D
    # canvas is counted; 262,144 weights drawn one by one would be over 262,144 calls.
    data = sample_data.payload(512, 16, 7, sharp=0.05, plant=(266, 361))
    page.evaluate("p => { window.big = fx.decodePayload(p); }", data["wire"])
    count = """async () => {
        const proto = CanvasRenderingContext2D.prototype;
        const names = ["fillRect", "strokeRect", "fillText", "putImageData", "drawImage", "fill", "stroke"];
        const calls = Object.fromEntries(names.map((n) => [n, 0]));
        const saved = names.map((n) => [n, proto[n]]);
        for (const [n, f] of saved) proto[n] = function (...args) { calls[n] += 1; return f.apply(this, args); };
        try {
            fx.mount(big);  // the canvases draw in the frames that follow
            await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 400))));
        } finally {
            for (const [n, f] of saved) proto[n] = f;
        }
        return calls;
    }"""
    calls = page.evaluate(count)
    print(f"T=512 mount's drawing calls: {calls}")
    assert 0 < sum(calls.values()) < 20_000, calls
    caption = page.locator(".attn-figure-weights figcaption").inner_text()
    assert "pools" in caption and "largest value" in caption
    g = page.evaluate("fx.view.components.weights.layout()")
    assert g["br"] > 1 and g["nR"] <= 64
    # Max pooling keeps the peak: the brightest block holds the largest weight.
    page.evaluate("fx.view.select(null)")
    hit = page.evaluate(BRIGHTEST, [".attn-figure-weights canvas", "fx.view.components.weights"])
    r, c = np.unravel_index(data["arrays"]["weights"].argmax(), (512, 512))
    assert tuple(hit["block"]) == (r // hit["br"], c // hit["bc"])
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "components-T512.png"), full_page=True)
    # The table lists only the selected row instead of 262,144 cells.
    open_tables(page)
    page.evaluate("fx.view.select(100)")
    assert page.locator(".attn-table-weights tbody tr").count() == 1
    assert page.locator(".attn-table-weights tbody td").count() == 512


# ---- bad input --------------------------------------------------------------------------------
# Which inputs are refused and with what message is pure JavaScript, tested under Node
# (tests/js/validate.test.mjs, every bad input for every component). Here: that the message
# is what the canvas shows, as pixels and as its accessible name, and nothing throws.

BAD_INPUTS = {
    "missing weights": "({arrays: {}})",
    "NaN": "({arrays: {weights: {shape: [2, 2], dtype: 'float32', data: new Float32Array([NaN, 1, 0, 1])}}})",
    "T=0": "({arrays: {weights: {shape: [0, 0], dtype: 'float32', data: new Float32Array(0)}}})",
    "null": "null",
}


@pytest.mark.parametrize("kind, case", [("heatmap", "NaN"), ("queryrow", "T=0"), ("scores", "missing weights"),
                                        ("output", "null")])
def test_a_bad_array_is_drawn_as_its_message(page, kind, case):
    expr = BAD_INPUTS[case].replace("weights:", {"scores": "scores:", "output": "out:"}.get(kind, "weights:"))
    message = page.evaluate(f"fx.solo('{kind}', {expr})")
    assert message.startswith("Cannot draw"), message
    canvas = page.locator("#solo canvas").last
    assert canvas.get_attribute("aria-label") == message
    # the message box is drawn, not a blank canvas: by the shared draw queue, so in a frame after solo() returned
    # (a loaded machine showed it not yet painted when read at once)
    page.wait_for_function("""() => {
        const c = [...document.querySelectorAll('#solo canvas')].at(-1);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (let i = 3; i < d.length; i += 4) if (d[i]) return true;
        return false; }""", timeout=RUN_TIMEOUT_MS)


@pytest.mark.parametrize("case", ["null", "missing weights", "NaN", "T=0"])
def test_linked_view_reports_a_bad_payload(page, case):
    page.evaluate(f"fx.mount({BAD_INPUTS[case]})")
    alert = page.get_by_role("alert")
    assert alert.is_visible()
    assert alert.inner_text().startswith("Cannot draw")
    assert page.evaluate("document.querySelector('.attn-view').dataset.state") == "error"


def test_a_bad_optional_array_leaves_the_rest_drawn(page):
    data = sample_data.payload(6, 4, 0)
    page.evaluate("""p => {
        const q = fx.decodePayload(p);
        q.arrays.scores.data[3] = NaN;
        q.arrays.V = {shape: [5, 4], dtype: 'float32', data: new Float32Array(20)};
        fx.mount(q);
    }""", data["wire"])
    assert page.evaluate("fx.view.components.weights.error()") == ""
    assert "NaN" in page.evaluate("fx.view.components.scores.error()")
    notes = page.locator(".attn-notes").inner_text()
    assert "scores" in notes and "V" in notes


# ---- step-through -----------------------------------------------------------------------------

def test_stepper_reveals_rows_in_order(page):
    arrays, tokens = mount(page, atStart=True)
    empty = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--attn-empty')").strip()
    # it opens at step 0, before anything is computed
    assert page.evaluate("document.querySelector('.attn-view').dataset.reveal") == "0,0,0"
    expect(page.get_by_role("button", name="Start: back to the beginning")).to_be_disabled()
    colours = page.evaluate(CELL_COLOURS, ["weights"])
    hex_empty = tuple(int(empty[i:i + 2], 16) for i in (1, 3, 5))
    assert all(tuple(c) == hex_empty for row in colours for c in row)

    forward = page.get_by_role("button", name="Next: one step forward")
    for _ in range(7):  # six score rows, then the first softmax row
        forward.click()
    assert page.evaluate("document.querySelector('.attn-view').dataset.reveal") == "6,1,0"
    status = page.locator(".attn-step-status").inner_text()
    assert "Softmax of row '\u2068the\u2069'" in status and "Step 7 of 18" in status
    colours = page.evaluate(CELL_COLOURS, ["weights"])
    assert all(tuple(c) != hex_empty for c in colours[0])
    assert all(tuple(c) == hex_empty for c in colours[1])
    assert page.evaluate("fx.view.store.get()") == 0
    page.get_by_role("button", name="Back: one step back").click()
    assert page.evaluate("document.querySelector('.attn-view').dataset.reveal") == "6,0,0"
    page.get_by_role("button", name="Show all: the finished result").click()
    assert page.evaluate("document.querySelector('.attn-view').dataset.reveal") == "all"

    page.get_by_role("button", name="Start: back to the beginning").click()
    page.get_by_role("button", name="Play").click()
    assert page.evaluate("fx.view.stepper.state().playing")
    page.wait_for_function("fx.view.stepper.state().step >= 2")
    page.get_by_role("button", name="Pause").click()
    assert not page.evaluate("fx.view.stepper.state().playing")


def test_stepper_respects_reduced_motion(browser, base_url):
    context, page, errors = open_fixture(browser, base_url, reduced_motion="reduce")
    try:
        mount(page, atStart=True)
        page.get_by_role("button", name="Next phase").click()
        state = page.evaluate("fx.view.stepper.state()")
        assert state["reducedMotion"] and not state["playing"]
        assert state["step"] == 6  # the whole score phase at once, no timer
    finally:
        context.close()
    assert errors == []


# ---- rendering quality ------------------------------------------------------------------------

def test_crisp_on_high_dpi_and_follows_resizes(browser, base_url):
    context, page, errors = open_fixture(browser, base_url, device_scale_factor=2, viewport={"width": 1000, "height": 800})
    try:
        mount(page)
        # Drawn in an upcoming frame, once ResizeObserver has reported the canvas's width.
        page.wait_for_function("(() => { const c = document.querySelector('.attn-figure-weights canvas'); return c.width === 2 * c.clientWidth && c.clientWidth > 360; })()")
        page.set_viewport_size({"width": 360, "height": 800})
        page.wait_for_function("(() => { const c = document.querySelector('.attn-figure-weights canvas'); return c.width === 2 * c.clientWidth && c.clientWidth < 360; })()")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "components-phone.png"), full_page=True)
    finally:
        context.close()
    assert errors == []


def test_without_resize_observer_a_canvas_is_drawn_once_at_its_width(browser, base_url):
    # Nothing reports widths then: the canvas is drawn at once, at the width the layout gives it.
    context = browser.new_context(device_scale_factor=2, viewport={"width": 1000, "height": 800})
    context.add_init_script("delete window.ResizeObserver")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{base_url}/{FIXTURE}")
        page.wait_for_function("window.fxReady === true")
        assert page.evaluate("typeof ResizeObserver") == "undefined"
        mount(page)
        page.wait_for_function("(() => { const c = document.querySelector('.attn-figure-weights canvas'); return c.width === 2 * c.clientWidth && c.clientWidth > 360; })()")
    finally:
        context.close()
    assert errors == []


# JS: a component made on a new canvas and given a payload, then a larger one, in one task (no frame between):
# the canvas's CSS height as each update returned, and as the draw (flush) then left it.
HEIGHTS_AT_UPDATE = """([kind, small, large]) => {
  fx.clearSolos();
  fx.solo(kind, small);
  const component = fx.solos[0];
  const canvas = document.querySelector('#solo canvas');
  const heights = [canvas.style.height];
  component.flush();
  heights.push(canvas.style.height);
  component.update(fx.decodePayload(large));
  heights.push(canvas.style.height);
  component.flush();
  heights.push(canvas.style.height);
  return heights;
}"""


@pytest.mark.parametrize("kind", ["heatmap", "scores", "output", "queryrow"])
def test_a_canvas_has_its_height_when_its_data_comes_before_it_is_drawn(page, kind):
    # The drawing waits for a frame (the shared queue, ResizeObserver's report of the width): under load, frames
    # later. Sized only then, the page below moved under the reader's eyes (CLS 0.143 inside Lesson 4's real-heads
    # widget); sized as the data comes, the drawing changes pixels only.
    small, large = sample_data.payload(6, 4, 0)["wire"], sample_data.payload(12, 8, 1)["wire"]
    made, drawn, updated, redrawn = page.evaluate(HEIGHTS_AT_UPDATE, [kind, small, large])
    assert made == drawn != "120px", (made, drawn)  # 120 px: the placeholder's, before any data
    assert updated == redrawn, (updated, redrawn)
    if kind != "queryrow":  # its height is its summary's lines and the keys' labels, the same for these two
        assert updated != made, (made, updated)


# JS: grey levels of the opaque pixels of the row-label strip left of the heatmap (the label text).
LABEL_LEVELS = """() => {
    const c = document.querySelector('.attn-figure-weights canvas');
    const g = fx.view.components.weights.layout();
    const dpr = c.width / c.clientWidth;
    const d = c.getContext('2d').getImageData(0, Math.round(g.top * dpr), Math.round((g.left - 8) * dpr), Math.round(g.cell * 4 * dpr)).data;
    const vals = [];
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 200) vals.push((d[i] + d[i + 1] + d[i + 2]) / 3);
    return vals; }"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_labels_follow_the_colour_scheme(browser, base_url, scheme):
    context, page, errors = open_fixture(browser, base_url, color_scheme=scheme)
    try:
        mount(page)
        # Dark text on light, light text on dark.
        levels = page.evaluate(LABEL_LEVELS)
        assert len(levels) > 20
        if scheme == "dark":
            assert max(levels) > 180
        else:
            assert min(levels) < 90
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"components-{scheme}.png"), full_page=True)
    finally:
        context.close()
    assert errors == []


def test_masked_cells_take_the_new_themes_grey(page):
    """The pixels of masked cells are painted once, not per draw: a theme change must repaint them."""
    arrays, _ = mount(page, T=8, seed=3, causal=True)
    masked = np.isneginf(arrays["scores"])
    grey = lambda: page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--attn-masked')").strip()
    light = grey()
    try:
        page.evaluate("document.documentElement.dataset.theme = 'dark'")
        dark = grey()
        assert dark != light
        want = [int(dark[i:i + 2], 16) for i in (1, 3, 5)]
        for _ in range(50):
            colours = np.array(page.evaluate(CELL_COLOURS, ["scores"]), dtype=float)
            if np.all(colours[masked] == want):
                break
            page.wait_for_timeout(100)
        assert np.all(colours[masked] == want)
    finally:
        page.evaluate("delete document.documentElement.dataset.theme")


def test_drawn_canvases_follow_a_theme_change(browser, base_url):
    """The colours are read once per theme change (canvas.js): a change after drawing redraws them,
    whether the system's setting changes or the page sets its own theme on <html>."""
    context, page, errors = open_fixture(browser, base_url, color_scheme="light")
    try:
        mount(page)
        page.wait_for_function(f"({LABEL_LEVELS})().length > 20")
        assert min(page.evaluate(LABEL_LEVELS)) < 90  # dark text
        page.emulate_media(color_scheme="dark")
        page.wait_for_function(f"Math.min(...({LABEL_LEVELS})()) > 100")  # light text only
        page.evaluate("document.documentElement.dataset.theme = 'light'")  # the page's own switch wins
        page.wait_for_function(f"Math.min(...({LABEL_LEVELS})()) < 90")
    finally:
        context.close()
    assert errors == []
