"""The soft-lookup view (static/js/page/components/lookupview.js and lookup.js) in Debian's Chromium, on the
components' test page: the slider changes the drawn weights (the dots' areas, counted in pixels) and the table,
the arrow keys move between the keys, nothing below the picture moves on a phone, and a bad payload draws a
message without a page error. The numbers come from lessonpy.maths.lookup, as the page's do."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from lessonpy.maths.lookup import EXAMPLE, build_lookup_payload, temperature_grid
from browser import open_tables
from component_page import open_fixture, sample_data

pytestmark = pytest.mark.browser
GRID = temperature_grid()


def step_of(tau: float) -> int:
    return int(np.argmin(np.abs(np.log(GRID) - math.log(tau))))


def wire(payload: dict) -> dict:
    """The payload as the fixture page takes it: arrays as base64 float32 (sample_data.encode)."""
    return {**payload, "arrays": {k: sample_data.encode(v) for k, v in payload["arrays"].items()}}


def mount(page, temperature=1.0, **arrays) -> dict:
    payload = build_lookup_payload(**(arrays or EXAMPLE), title="The lesson's lookup")
    page.evaluate("([p, o]) => fx.lookup(p, o)", [wire(payload), {"temperature": temperature}])
    return payload["arrays"]


def table(page) -> np.ndarray:
    """The table's numbers (N, 5): x, y, score, weight, value, from the cells' exact data-value."""
    open_tables(page.locator("#lookup"))
    rows = page.locator("#lookup .attn-table tbody tr")
    return np.array(rows.evaluate_all("trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => Number(td.dataset.value)))"))


# JS: per key, the CSS px² of the accent colour inside the square of its full-weight ring: its dot's area.
DOT_AREAS = """() => {
  const g = fx.lookupView.lookup.layout();
  const canvas = document.querySelector('#lookup canvas');
  const dpr = canvas.width / canvas.clientWidth;
  const accent = getComputedStyle(document.documentElement).getPropertyValue('--attn-accent').trim();
  const [ar, ag, ab] = [1, 3, 5].map((i) => parseInt(accent.slice(i, i + 2), 16));
  const ctx = canvas.getContext('2d');
  return { rMax: g.rMax, areas: g.dots.map((d) => {
    const x0 = Math.floor((d.x - g.rMax) * dpr), y0 = Math.floor((d.y - g.rMax) * dpr), size = Math.ceil(2 * g.rMax * dpr) + 1;
    const px = ctx.getImageData(x0, y0, size, size).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) if (Math.abs(px[i] - ar) + Math.abs(px[i + 1] - ag) + Math.abs(px[i + 2] - ab) < 40) n++;
    return n / (dpr * dpr);
  }) };
}"""


def assert_areas_are_the_weights(page, weights):
    drawn = page.evaluate(DOT_AREAS)
    full = math.pi * drawn["rMax"] ** 2
    # anti-aliased edges are not counted: within a rim's worth of pixels of the exact area
    for area, w in zip(drawn["areas"], weights):
        rim = 2 * math.pi * drawn["rMax"] * math.sqrt(w) + 4
        assert abs(area - full * w) <= rim, (area, full * w, list(weights))


def test_the_slider_changes_the_drawn_weights_and_the_table(page):
    a = mount(page, temperature=1.0)
    view = page.locator("#lookup .attn-lookup")
    slider = page.get_by_label("Temperature τ")
    one = step_of(1.0)
    expect(slider).to_have_value(str(one))
    expect(view.locator(".attn-lookup-tau")).to_have_text("τ = 1 (spread 1)")
    expect(slider).to_have_attribute("aria-valuetext", "τ = 1 (spread 1)")
    shown = table(page)
    np.testing.assert_allclose(shown[:, :2], a["keys"])
    np.testing.assert_allclose(shown[:, 2], a["scores"])
    np.testing.assert_allclose(shown[:, 3], a["weights"][one])
    np.testing.assert_allclose(shown[:, 4], a["values"])
    assert_areas_are_the_weights(page, a["weights"][one])
    g = page.evaluate("fx.lookupView.lookup.layout()")
    np.testing.assert_allclose([d["r"] for d in g["dots"]], g["rMax"] * np.sqrt(a["weights"][one]), rtol=1e-6)

    slider.fill("0")  # τ = 1/64: a hard lookup
    expect(view).to_have_attribute("data-step", "0")
    expect(view.locator(".attn-lookup-tau")).to_have_text("τ = 0.0156 (spread 64)")
    np.testing.assert_allclose(table(page)[:, 3], a["weights"][0])
    expect(view.locator(".attn-table thead th").nth(4)).to_have_text("weight at τ = 0.0156")
    assert_areas_are_the_weights(page, a["weights"][0])
    areas = page.evaluate(DOT_AREAS)["areas"]
    assert areas[1] < 3 and areas[2] < 3  # the other keys' dots are gone
    stats = view.locator(".attn-lookup-stats dd")
    assert float(stats.nth(0).get_attribute("data-value")) == pytest.approx(a["answers"][0], rel=1e-6)
    assert float(stats.nth(1).get_attribute("data-value")) == pytest.approx(a["jacobian_norm"][0], rel=1e-6)
    expect(view.locator(".attn-summary")).to_contain_text("the weights are key 0 100%")

    slider.focus()  # a keyboard on the slider moves one step of the grid
    page.keyboard.press("ArrowRight")
    expect(view).to_have_attribute("data-step", "1")
    page.keyboard.press("End")
    expect(view).to_have_attribute("data-step", str(len(GRID) - 1))
    np.testing.assert_allclose(table(page)[:, 3], a["weights"][-1])
    assert_areas_are_the_weights(page, a["weights"][-1])


def test_a_new_payload_keeps_the_readers_temperature(page):
    mount(page, temperature=1 / 16)
    expect(page.locator("#lookup .attn-lookup")).to_have_attribute("data-step", str(step_of(1 / 16)))
    page.get_by_label("Temperature τ").fill(str(step_of(4)))
    payload = build_lookup_payload(keys=[[1, 0], [0, 1], [0.7, 0.7], [-0.6, 0.6]], query=[0.2, 1.0], values=[1, 2, 3, 4])
    page.evaluate("p => fx.lookupUpdate(p)", wire(payload))
    expect(page.locator("#lookup .attn-lookup")).to_have_attribute("data-step", str(step_of(4)))
    np.testing.assert_allclose(table(page)[:, 3], payload["arrays"]["weights"][step_of(4)])


def test_arrow_keys_move_between_the_keys_and_the_table_follows(page):
    mount(page)
    open_tables(page.locator("#lookup"))
    canvas = page.locator("#lookup canvas")
    canvas.focus()
    for key, focus in [("ArrowRight", 1), ("ArrowDown", 2), ("ArrowRight", 2), ("Home", 0), ("ArrowLeft", 0), ("End", 2)]:
        page.keyboard.press(key)
        expect(canvas).to_have_attribute("data-focus", str(focus))
        expect(page.locator(f'#lookup tr[data-row="{focus}"]')).to_have_attribute("aria-current", "true")
    expect(canvas).to_have_attribute("aria-label", re.compile(
        r"Focused: key 2 at \(0\.70, 0\.70\): score q·k 0\.840, weight 0\.370, value 30\. Arrow keys"))
    dot = page.evaluate("fx.lookupView.lookup.layout()")["dots"][1]
    canvas.click(position={"x": dot["x"], "y": dot["y"]})  # a click focuses the key under it
    expect(canvas).to_have_attribute("data-focus", "1")
    assert page.locator("#lookup tr.attn-selected").count() == 1


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_nothing_below_the_picture_moves_and_nothing_scrolls_sideways(browser, base_url, scheme):
    context, page, errors = open_fixture(browser, base_url, viewport={"width": 360, "height": 800}, color_scheme=scheme)
    try:
        a = mount(page, temperature=1.0)
        boxes = "() => ['canvas', '.attn-lookup-stats', 'details'].map((s) => document.querySelector('#lookup ' + s).getBoundingClientRect().top)"
        before = page.evaluate(boxes)
        slider = page.get_by_label("Temperature τ")
        for i in range(len(GRID)):
            slider.fill(str(i))
            assert page.evaluate(boxes) == before, f"step {i} moved the page"
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        assert page.evaluate("document.querySelector('#lookup canvas').getBoundingClientRect().right") <= 360
        assert_areas_are_the_weights(page, a["weights"][-1])  # drawn in this theme's accent colour
    finally:
        context.close()
    assert errors == []


def test_bad_payloads_draw_a_message_and_never_throw(page):
    good = wire(build_lookup_payload(**EXAMPLE))
    canvas = page.locator("#lookup canvas")
    view = page.locator("#lookup .attn-lookup")
    page.evaluate("p => fx.lookup(p)", good)
    height = canvas.bounding_box()["height"]
    refusal = "keys: expected an (N, 2) array, one 2-D point per row, got shape (3,)"
    bad_weights = {**good["arrays"], "weights": sample_data.encode(np.full((len(GRID), 3), 0.5))}
    cases = [
        ({"view": "lookup", "title": None, "target": None, "error": refusal}, refusal),
        ({**good, "arrays": {**good["arrays"], "keys": sample_data.encode(np.ones((3, 3)))}}, "Cannot draw the keys: expected 2-D points"),
        ({**good, "arrays": bad_weights}, "sums to 1.500, not 1"),
        ({**good, "arrays": {k: v for k, v in good["arrays"].items() if k != "answers"}}, "Cannot draw the answers: it is missing"),
        (None, "expected a payload object"),
    ]
    for payload, message in cases:
        page.evaluate("p => fx.lookupUpdate(p)", payload)
        expect(canvas).to_have_attribute("data-message", re.compile(re.escape(message)))
        expect(view.locator(".attn-message")).to_contain_text(message)
        expect(view).to_have_attribute("data-state", "error")
        expect(page.get_by_label("Temperature τ")).to_be_disabled()
        assert canvas.bounding_box()["height"] == height  # the message keeps the picture's place
    page.evaluate("p => fx.lookupUpdate(p)", good)  # and it recovers
    expect(view).to_have_attribute("data-state", "ok")
    expect(view.locator(".attn-message")).to_be_hidden()
    page.wait_for_function("!document.querySelector('#lookup canvas').hasAttribute('data-message')")  # drawn again
